#!/usr/bin/env python3
"""Response-size benchmark: characters and tokens an agent receives per tool and mode.

    .venv/bin/python bench/response_bench.py [--baseline-ref e069018] [--synthetic 100000]

A fresh store is filled the way a new user would: one LoCoMo dev conversation (conv-26, 19
sessions) ingested session by session through the MCP tool ``memory_ingest conversation``, plus a
few knowledge items citing its turns (``memory_remember knowledge``). Then every LoCoMo question
of that conversation is asked through ``memory_query`` with *default options* in the modes
``search`` (objects), ``search`` (``result_unit: segment``) and ``context``; ``page`` /
``expand`` / ``graph`` are called on the top results, ``recent`` once, and the read-only
``memory_maintain`` modes once. What is measured is the text content of each tool result as it
travels over MCP (the SDK's in-process client), in characters and tokens (see
``memory_substrate.tokens``: BERT WordPiece, an upper estimate of cl100k counts), p50 and max per
mode. ``tools/list`` is measured as compact JSON of the tool list (default and ``all`` toolsets).

A second store is an ingested repository (``--repo``, this one by default) plus one markdown
document (``docs/knowledge-graph.md``): the ingest answers themselves are measured, then a fixed
set of code questions is asked in the same modes. For every list answer the table also gives
items returned against items asked (the mode's default ``max_items`` unless the call names one;
``search(segment,10)`` asks for 10 explicitly) and the share of the items' tokens that is content
(titles, summaries, excerpts and turn lines, counted without their quotes), the rest being ids,
field names, dates and punctuation.

With ``--baseline-ref`` the same measurement runs on the source tree of that git revision
(extracted with ``git archive`` into a temporary directory, run in a subprocess), in the same
run, and both are printed side by side. ``--synthetic N`` adds a store of N synthetic segments
(the scale benchmark's corpus) and measures the query modes there with its 60 topic queries.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = Path("/work/shared/data/locomo/locomo_dev.json")
BUDGET = 1500
CONTEXT_BUDGET = 4096  # the compiled package's default budget (spec 004); the answer may exceed it by 10%
DEFAULT_MAX = {"search": 10, "recent": 10, "expand": 6, "graph": 20, "context": 8}
CONTENT_KEYS = frozenset({"title", "summary", "excerpt", "text", "turns", "matched_chunks", "lines"})
REPO_QUESTIONS = [
    "how does a cursor page through search results",
    "where is the token budget of a response enforced",
    "segment ranking with neighbouring turns",
    "PostgreSQL store migrations",
    "how are entities merged in the knowledge graph",
    "which errors does the MCP server return",
    "ingest a markdown document into segments",
    "context compiler budget tokens",
]


# ------------------------------------------------------------------ measurement (subprocess)
def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _measure(args: argparse.Namespace, out: list[dict[str, Any]]) -> None:
    from mcp import Client

    from memory_substrate import Memory, Settings
    from memory_substrate.mcp.server import build_server

    def rec(tool: str, mode: str, result: Any, store: str, asked: int | None) -> dict[str, Any]:
        text = _text(result)
        sc = result.structured_content or {}
        out.append(
            {
                "store": store,
                "tool": tool,
                "mode": mode,
                "text": text,
                "error": bool(result.is_error),
                "asked": asked,
                "returned": _returned(sc) if asked else None,
                "content": _content(sc),
            }
        )
        return sc

    async def call(
        c: Any,
        tool: str,
        mode: str,
        data: dict[str, Any],
        opts: dict[str, Any] | None = None,
        *,
        label: str | None = None,
        store: str = "locomo",
    ) -> dict[str, Any]:
        a: dict[str, Any] = {"mode": mode, "input_data": data}
        if opts:
            a["options"] = opts
        r = await c.call_tool(tool, {"args": a})
        asked = (opts or {}).get("max_items", DEFAULT_MAX.get(mode)) if tool == "memory_query" else None
        return rec(tool, label or mode, r, store, asked)

    raw = json.loads(Path(args.data).read_text(encoding="utf-8"))
    conv = next(x for x in raw if x["sample_id"] == args.conversation)
    c_data = conv["conversation"]
    sessions = sorted(
        int(k.split("_")[1]) for k in c_data if k.startswith("session_") and not k.endswith("date_time")
    )
    with tempfile.TemporaryDirectory() as root:
        mem = Memory(Settings(root=root, embedder="static"), namespace="resp")
        for toolset in ("substrate", "all"):
            async with Client(build_server(mem, toolset)) as c:
                tools = await c.list_tools()
                out.append(
                    {
                        "store": "-",
                        "tool": "tools/list",
                        "mode": "default" if toolset == "substrate" else toolset,
                        "text": json.dumps(
                            [
                                t.model_dump(mode="json", exclude_none=True, by_alias=True)
                                for t in tools.tools
                            ],
                            ensure_ascii=False,
                            separators=(",", ":"),
                        ),
                        "error": False,
                    }
                )
        async with Client(build_server(mem)) as c:
            source_ids = []
            for n in sessions:
                msgs = []
                for t in c_data[f"session_{n}"]:
                    text = t["text"] + (f" [image: {t['blip_caption']}]" if t.get("blip_caption") else "")
                    msgs.append({"role": "user", "content": text, "name": t["speaker"]})
                r = await call(
                    c,
                    "memory_ingest",
                    "conversation",
                    {"title": f"{args.conversation} session {n}", "messages": msgs},
                )
                source_ids.append(r.get("source_id") or r.get("id"))
            know_ids = []
            for i, sid in enumerate(source_ids[:5]):
                r = await call(
                    c,
                    "memory_remember",
                    "knowledge",
                    {
                        "kind": "fact",
                        "title": f"Note {i} from session {i + 1}",
                        "summary": f"Something said in session {i + 1} worth keeping: "
                        + c_data[f"session_{sessions[i]}"][0]["text"][:200],
                        "reason": "Kept for the response benchmark.",
                        "memory_source": "agent_inferred",
                        "scope_refs": ["scope:project"],
                        "evidence_refs": [{"source_id": sid, "segment_id": "seg-1"}],
                    },
                )
                know_ids.append(r.get("object_id") or r.get("id"))
            questions = [q["question"] for q in conv["qa"]][: args.questions]
            top_obj = None
            for q in questions:
                r = await call(c, "memory_query", "search", {"query": q}, label="search(object)")
                top_obj = top_obj or ((r.get("items") or [{}])[0].get("id"))
                await call(
                    c,
                    "memory_query",
                    "search",
                    {"query": q},
                    {"result_unit": "segment"},
                    label="search(segment)",
                )
                await call(
                    c,
                    "memory_query",
                    "search",
                    {"query": q},
                    {"result_unit": "segment", "max_items": 10},
                    label="search(segment,10)",
                )
                await call(c, "memory_query", "context", {"task": q})
            for oid in [i for i in [top_obj, source_ids[0], know_ids[0] if know_ids else None] if i]:
                await call(c, "memory_query", "page", {"id": oid})
                await call(c, "memory_query", "expand", {"id": oid})
                await call(c, "memory_query", "graph", {"id": oid})
            await call(c, "memory_query", "recent", {})
            for m in ("structure", "report", "audit"):
                await call(c, "memory_maintain", m, {})
        mem.close()

        if args.repo:
            await _measure_repo(args, Path(root), call)

        if args.synthetic:
            sys.path.insert(0, str(HERE))
            from scale_bench import build_synthetic

            mem = Memory(Settings(root=root, embedder="static"), namespace="synthetic")
            queries, _ = build_synthetic(mem, args.synthetic)
            store = f"synthetic {args.synthetic}"
            async with Client(build_server(mem)) as c:
                top = None
                for q in queries:
                    r = await call(
                        c, "memory_query", "search", {"query": q}, label="search(object)", store=store
                    )
                    top = top or ((r.get("items") or [{}])[0].get("id"))
                    await call(
                        c,
                        "memory_query",
                        "search",
                        {"query": q},
                        {"result_unit": "segment"},
                        label="search(segment)",
                        store=store,
                    )
                    await call(c, "memory_query", "context", {"task": q}, store=store)
                if top:
                    for m in ("page", "expand", "graph"):
                        await call(c, "memory_query", m, {"id": top}, store=store)
                await call(c, "memory_query", "recent", {}, store=store)
                for m in ("structure", "report", "audit"):
                    await call(c, "memory_maintain", m, {}, store=store)
            mem.close()


async def _measure_repo(args: argparse.Namespace, root: Path, call: Any) -> None:
    """An ingested repository and one markdown document: the ingest answers, then code questions."""
    from mcp import Client

    from memory_substrate import Memory, Settings
    from memory_substrate.mcp.server import build_server

    store = "repo"
    mem = Memory(Settings(root=str(root), embedder="static"), namespace="repo")
    async with Client(build_server(mem)) as c:
        r = await call(c, "memory_ingest", "repo", {"path": str(args.repo)}, store=store)
        repo_id = r.get("source_id")
        md = Path(args.repo) / "docs" / "knowledge-graph.md"
        if md.exists():
            await call(c, "memory_ingest", "markdown", {"path": str(md)}, store=store)
        top = None
        for q in REPO_QUESTIONS:
            r = await call(c, "memory_query", "search", {"query": q}, label="search(object)", store=store)
            top = top or ((r.get("items") or [{}])[0].get("id"))
            await call(
                c,
                "memory_query",
                "search",
                {"query": q},
                {"result_unit": "segment"},
                label="search(segment)",
                store=store,
            )
            await call(
                c,
                "memory_query",
                "search",
                {"query": q},
                {"result_unit": "segment", "max_items": 10},
                label="search(segment,10)",
                store=store,
            )
            await call(c, "memory_query", "context", {"task": q}, store=store)
        for oid in [i for i in dict.fromkeys([repo_id, top]) if i]:
            for m in ("page", "expand", "graph"):
                await call(c, "memory_query", m, {"id": oid}, store=store)
        await call(c, "memory_query", "recent", {}, store=store)
        for m in ("structure", "report", "audit"):
            await call(c, "memory_maintain", m, {}, store=store)
    mem.close()


def _returned(result: dict[str, Any]) -> int:
    """How many list entries an answer holds, whatever its shape (count when it states one)."""
    if isinstance(result.get("count"), int):
        return int(result["count"])
    for key in ("items", "related", "nodes"):
        if isinstance(result.get(key), list):
            return len(result[key])
    return 0


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def _content(result: dict[str, Any]) -> tuple[int, int] | None:
    """(content tokens, item tokens) of a search answer's items; None for other answers."""
    from memory_substrate.tokens import count_tokens, wire_json

    if result.get("result_type") != "search_result":
        return None
    part = result.get("sources") if "sources" in result else result.get("items")
    if not part:
        return None
    content = 0

    def walk(value: Any) -> None:
        nonlocal content
        if isinstance(value, dict):
            for k, v in value.items():
                if k in CONTENT_KEYS:
                    content += sum(count_tokens(s) for s in _strings(v))
                else:
                    walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(part)
    return content, count_tokens(wire_json(part))


def run_one(args: argparse.Namespace) -> None:
    out: list[dict[str, Any]] = []
    asyncio.run(_measure(args, out))
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")


# ------------------------------------------------------------------------ driver
def _tree_of(ref: str, into: Path) -> Path:
    """The ``src`` tree of a git revision, extracted (not checked out) into ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def _collect(src: Path, args: argparse.Namespace, tmp: Path, label: str) -> list[dict[str, Any]]:
    out = tmp / f"{label}.json"
    cmd = [
        sys.executable,
        __file__,
        "--one",
        "--out",
        str(out),
        "--data",
        str(args.data),
        "--conversation",
        args.conversation,
        "--questions",
        str(args.questions),
        "--repo",
        str(args.repo or ""),
    ]
    if args.synthetic:
        cmd += ["--synthetic", str(args.synthetic)]
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{label} failed:\n{done.stderr[-4000:]}")
    return json.loads(out.read_text(encoding="utf-8"))


def _summarise(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, float]]:
    sys.path.insert(0, str(REPO / "src"))

    from memory_substrate.tokens import count_tokens

    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if r["error"]:
            sys.exit(f"a tool call failed: {r['tool']} {r['mode']}: {r['text'][:500]}")
        groups.setdefault((r["store"], r["tool"], r["mode"]), []).append(r)
    summary = {}
    for key, vals in groups.items():
        chars = [len(v["text"]) for v in vals]
        toks = [count_tokens(v["text"]) for v in vals]
        s: dict[str, float] = {
            "n": len(vals),
            "chars_p50": statistics.median(chars),
            "chars_max": max(chars),
            "tokens_p50": statistics.median(toks),
            "tokens_max": max(toks),
        }
        if key[2] == "context":  # the package budget's own unit: the compiler's cl100k-like count
            model = [count_tokens(v["text"]) for v in vals]
            s["model_tokens_p50"], s["model_tokens_max"] = statistics.median(model), max(model)
        asked = [v for v in vals if v.get("asked")]
        if asked:
            s["asked"] = sum(v["asked"] for v in asked) / len(asked)
            s["returned"] = sum(v["returned"] for v in asked) / len(asked)
            s["short"] = sum(1 for v in asked if v["returned"] < v["asked"])  # answers with fewer than asked
        shares = [v["content"] for v in vals if v.get("content")]
        if shares:
            s["content_share"] = sum(c for c, _ in shares) / max(1, sum(t for _, t in shares))
        summary[key] = s
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--questions", type=int, default=1000, help="at most this many questions")
    ap.add_argument("--baseline-ref", default=None, help="git revision measured beside the working tree")
    ap.add_argument("--synthetic", type=int, default=0, help="also measure a synthetic store of N segments")
    ap.add_argument("--repo", default=str(REPO), help="repository ingested for the code store ('' to skip)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        run_one(args)
        return
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        runs: dict[str, dict[tuple[str, str, str], dict[str, float]]] = {}
        if args.baseline_ref:
            (tmp / "base").mkdir()
            runs["baseline"] = _summarise(
                _collect(_tree_of(args.baseline_ref, tmp / "base"), args, tmp, "baseline")
            )
        runs["current"] = _summarise(_collect(REPO / "src", args, tmp, "current"))
    keys = sorted({k for r in runs.values() for k in r})
    head = f"{'store':10s} {'tool':15s} {'mode':19s}"
    for name in runs:
        head += (
            f" | {name + ' chars p50/max':>24s} {'tokens p50/max':>14s} {'ret/asked':>10s} {'content':>7s}"
        )
    print(head)
    over, short = [], []
    for k in keys:
        line = f"{k[0]:10s} {k[1]:15s} {k[2]:19s}"
        for name, r in runs.items():
            s = r.get(k)
            if s is None:
                line += f" | {'-':>24s} {'-':>14s} {'':>10s} {'':>7s}"
                continue
            ratio = f"{s['returned']:.1f}/{s['asked']:.0f}" if "asked" in s else ""
            share = f"{s['content_share']:.0%}" if "content_share" in s else ""
            line += (
                f" | {s['chars_p50']:>11.0f} / {s['chars_max']:>10.0f} {s['tokens_p50']:>6.0f} / {s['tokens_max']:>5.0f}"
                f" {ratio:>10s} {share:>7s}"
            )
            if name == "current" and k[1] != "tools/list":
                # context: its package budget is in the compiler's count (BERT runs 5-15% higher on
                # a package's punctuation and code); both are printed below.
                size, limit = (
                    (s["model_tokens_max"], CONTEXT_BUDGET * 1.1)
                    if k[2] == "context"
                    else (s["tokens_max"], BUDGET)
                )
                if size > limit:
                    over.append(k)
                if k[2] == "search(segment,10)" and s.get("short"):
                    short.append(k)
        print(line)
    print("\ncontext in the compiler's count (its budget's unit), p50 / max:")
    for k in keys:
        if k[2] == "context":
            print(
                f"  {k[0]:10s} "
                + "  ".join(
                    f"{name}: {r[k]['model_tokens_p50']:.0f} / {r[k]['model_tokens_max']:.0f}"
                    for name, r in runs.items()
                    if k in r
                )
            )
    print(
        f"\nbudget {BUDGET} tokens per default response (context: {CONTEXT_BUDGET} + 10% in the compiler's count): "
        + ("met" if not over else f"NOT met for {over}")
    )
    print("explicit max_items 10 returned in full: " + ("yes" if not short else f"NO for {short}"))
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "responses.json").write_text(
        json.dumps({name: {" / ".join(k): v for k, v in r.items()} for name, r in runs.items()}, indent=2)
    )


if __name__ == "__main__":
    if "--one" in sys.argv:
        src = os.environ.get("PYTHONPATH")
        if src:
            sys.path.insert(0, src.split(os.pathsep)[0])
    main()
