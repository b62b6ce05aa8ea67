"""The package structure stays what docs/architecture.md says: no import cycles, sessions and
patches opened only by the unit of work, and every package named on the page.

The layer order itself is checked by import-linter (``.importlinter``, run by ./scripts/test);
these tests read the same import graph (grimp) through ``scripts/import_graph.py``.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
# The only places outside storage/ that open a store session: the unit of work, the derived-index
# mirror (it replays committed writes into other engines). Export/import go through Runtime too.
SESSION_OWNERS = {"runtime.py", "derived/mirror.py"}
PATCH_OWNERS = {"runtime.py"}


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", REPO / "scripts" / "import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    result: dict[str, Any] = _script().report()
    return result


def test_no_package_cycles_and_no_file_circles(report: dict[str, Any]) -> None:
    assert report["package_cycles"] == []
    assert report["file_circles"] == []


def test_only_the_unit_of_work_opens_sessions_and_patches(report: dict[str, Any]) -> None:
    places = report["units_of_work"]
    assert {p.split(":")[0] for p in places["session"]} <= SESSION_OWNERS, places["session"]
    assert {p.split(":")[0] for p in places["patch"]} <= PATCH_OWNERS, places["patch"]


def test_architecture_page_names_every_package(report: dict[str, Any]) -> None:
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\b([a-z_]+)(?:/|\.py)", page))
    missing = [p for p in report["packages"] if p != "__init__" and p not in named]
    assert not missing, f"docs/architecture.md does not name: {missing}"


def test_import_contracts_name_every_package(report: dict[str, Any]) -> None:
    config = (REPO / ".importlinter").read_text(encoding="utf-8")
    layers = config.split("layers =", 1)[1].split("[importlinter:", 1)[0]
    listed = set(re.findall(r"[a-z_]+", layers))
    missing = [p for p in report["packages"] if p != "__init__" and p not in listed]
    assert not missing, f".importlinter's layers leave out: {missing}"


def test_layer_table_is_generated_from_the_contract() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_architecture_doc", REPO / "scripts" / "gen_architecture_doc.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert gen.updated(page) == page, (
        "docs/architecture.md is stale: run python scripts/gen_architecture_doc.py"
    )


def test_the_graph_toolset_writes_only_through_graph() -> None:
    """graphmem/ is a surface: it checks arguments and shapes answers; objects, relations and
    patch operations are made by graph/ (graph/nodes.py, graph/triplets.py), so the toolset
    shares extraction's resolver, claims rule and edges."""
    import ast

    made: list[str] = []
    for path in sorted((REPO / "src" / "memory_substrate" / "graphmem").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            on_patch = (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Attribute)
                and f.value.attr == "patch"
            )
            if name in ("MemoryObject", "Relation", "canonical_relation", "settle") or on_patch:
                made.append(f"{path.name}:{node.lineno} {name}")
    assert made == []
