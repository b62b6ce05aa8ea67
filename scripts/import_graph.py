"""Print the package import graph of memory_substrate and the places that open a unit of work.

Usage: python scripts/import_graph.py [--json]

Reports, from the code itself (grimp, the graph builder behind import-linter; every import
counts, including those inside functions):

* packages and arrows: a package is a subpackage of ``memory_substrate`` or one of its top-level
  modules (``app``, ``runtime``, ...); an arrow ``a -> b`` means some module of ``a`` imports one
  of ``b``;
* package cycles: pairs of packages importing each other (directly or through others: every
  pair inside one strongly connected component is listed as one cycle per mutual arrow path);
* file circles: strongly connected groups of modules (a module reaching itself through imports);
* units of work: calls outside ``storage/`` that open a store session (``<x>.store.read(...)``,
  ``<x>.store.write(...)``, ``store.read/write``) or build a ``Patch(...)``.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from collections import defaultdict
from pathlib import Path

import grimp

ROOT = "memory_substrate"
_SPEC = importlib.util.find_spec(ROOT)
assert _SPEC is not None and _SPEC.origin is not None
SRC = Path(_SPEC.origin).parent  # the package grimp reads (PYTHONPATH picks another checkout)


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _sccs(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one member."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return sorted(out)


def _reaches(edges: dict[str, set[str]], src: str, dst: str) -> bool:
    seen, todo = {src}, [src]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt == dst:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def _is_store_session(call: ast.Call) -> bool:
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr in ("read", "write")):
        return False
    owner = f.value
    name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
    return name == "store"


def units_of_work() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"session": [], "patch": []}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("storage/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            if _is_store_session(node):
                found["session"].append(f"{rel}:{node.lineno}")
            elif isinstance(node.func, ast.Name) and node.func.id == "Patch":
                found["patch"].append(f"{rel}:{node.lineno}")
    return found


def report() -> dict[str, object]:
    graph = grimp.build_graph(ROOT, include_external_packages=False)
    modules = {m for m in graph.modules if m.startswith(ROOT)}
    mod_edges: dict[str, set[str]] = defaultdict(set)
    pkg_edges: dict[str, set[str]] = defaultdict(set)
    for m in modules:
        for imported in graph.find_modules_directly_imported_by(m):
            if not imported.startswith(ROOT) or imported == m:
                continue
            mod_edges[m].add(imported)
            a, b = package_of(m), package_of(imported)
            if a != b:
                pkg_edges[a].add(b)
    # A package importing its own __init__ is not a circle worth reporting.
    packages = sorted({package_of(m) for m in modules})
    arrows = sorted(f"{a} -> {b}" for a, targets in pkg_edges.items() for b in targets)
    pkg_cycles = sorted(
        f"{a} <-> {b}" for a in packages for b in pkg_edges.get(a, ()) if a < b and _reaches(pkg_edges, b, a)
    )
    file_edges = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in mod_edges.items()}
    return {
        "packages": packages,
        "arrows": arrows,
        "package_cycles": pkg_cycles,
        "package_sccs": _sccs(set(packages), pkg_edges),
        "file_circles": _sccs(modules, file_edges),
        "units_of_work": units_of_work(),
    }


def main() -> None:
    data = report()
    if "--json" in sys.argv:
        print(json.dumps(data, indent=1))
        return
    print(f"packages ({len(data['packages'])}): {' '.join(data['packages'])}")  # type: ignore[arg-type]
    print(f"arrows ({len(data['arrows'])}):")  # type: ignore[arg-type]
    for a in data["arrows"]:  # type: ignore[attr-defined]
        print(f"  {a}")
    for key in ("package_cycles", "package_sccs", "file_circles"):
        items = data[key]
        print(f"{key} ({len(items)}):")  # type: ignore[arg-type]
        for c in items:  # type: ignore[attr-defined]
            print(f"  {' | '.join(c) if isinstance(c, list) else c}")
    uow = data["units_of_work"]
    for kind, places in uow.items():  # type: ignore[attr-defined]
        print(f"{kind} opened outside storage/ ({len(places)}): {' '.join(places)}")


if __name__ == "__main__":
    main()
