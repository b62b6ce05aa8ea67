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
mode. ``tools/list`` is measured as compact JSON of the tool list.

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


# ------------------------------------------------------------------ measurement (subprocess)
def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _measure(args: argparse.Namespace, out: list[dict[str, Any]]) -> None:
    from mcp import Client

    from memory_substrate import Memory, Settings
    from memory_substrate.mcp.server import build_server

    def rec(tool: str, mode: str, result: Any, store: str = "locomo") -> dict[str, Any]:
        text = _text(result)
        out.append({"store": store, "tool": tool, "mode": mode, "text": text, "error": bool(result.is_error)})
        return result.structured_content or {}

    async def call(c: Any, tool: str, mode: str, data: dict[str, Any], opts: dict[str, Any] | None = None,
                   *, label: str | None = None, store: str = "locomo") -> dict[str, Any]:
        a: dict[str, Any] = {"mode": mode, "input_data": data}
        if opts:
            a["options"] = opts
        r = await c.call_tool(tool, {"args": a})
        return rec(tool, label or mode, r, store)

    raw = json.loads(Path(args.data).read_text(encoding="utf-8"))
    conv = next(x for x in raw if x["sample_id"] == args.conversation)
    c_data = conv["conversation"]
    sessions = sorted(int(k.split("_")[1]) for k in c_data if k.startswith("session_") and not k.endswith("date_time"))
    with tempfile.TemporaryDirectory() as root:
        mem = Memory(Settings(root=root, embedder="static"), namespace="resp")
        async with Client(build_server(mem)) as c:
            tools = await c.list_tools()
            out.append({"store": "-", "tool": "tools/list", "mode": "default",
                        "text": json.dumps([t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in tools.tools],
                                           ensure_ascii=False, separators=(",", ":")), "error": False})
            source_ids = []
            for n in sessions:
                msgs = []
                for t in c_data[f"session_{n}"]:
                    text = t["text"] + (f" [image: {t['blip_caption']}]" if t.get("blip_caption") else "")
                    msgs.append({"role": "user", "content": text, "name": t["speaker"]})
                r = await call(c, "memory_ingest", "conversation",
                               {"title": f"{args.conversation} session {n}", "messages": msgs})
                source_ids.append(r.get("source_id") or r.get("id"))
            know_ids = []
            for i, sid in enumerate(source_ids[:5]):
                r = await call(c, "memory_remember", "knowledge", {
                    "kind": "fact", "title": f"Note {i} from session {i + 1}",
                    "summary": f"Something said in session {i + 1} worth keeping: " + c_data[f"session_{sessions[i]}"][0]["text"][:200],
                    "reason": "Kept for the response benchmark.", "memory_source": "agent_inferred",
                    "scope_refs": ["scope:project"],
                    "evidence_refs": [{"source_id": sid, "segment_id": "seg-1"}],
                })
                know_ids.append(r.get("object_id") or r.get("id"))
            questions = [q["question"] for q in conv["qa"]][: args.questions]
            top_obj = None
            for q in questions:
                r = await call(c, "memory_query", "search", {"query": q}, label="search(object)")
                top_obj = top_obj or ((r.get("items") or [{}])[0].get("id"))
                await call(c, "memory_query", "search", {"query": q}, {"result_unit": "segment"}, label="search(segment)")
                await call(c, "memory_query", "context", {"task": q})
            for oid in [i for i in [top_obj, source_ids[0], know_ids[0] if know_ids else None] if i]:
                await call(c, "memory_query", "page", {"id": oid})
                await call(c, "memory_query", "expand", {"id": oid})
                await call(c, "memory_query", "graph", {"id": oid})
            await call(c, "memory_query", "recent", {})
            for m in ("structure", "report", "audit"):
                await call(c, "memory_maintain", m, {})
        mem.close()

        if args.synthetic:
            sys.path.insert(0, str(HERE))
            from scale_bench import build_synthetic

            mem = Memory(Settings(root=root, embedder="static"), namespace="synthetic")
            queries, _ = build_synthetic(mem, args.synthetic)
            store = f"synthetic {args.synthetic}"
            async with Client(build_server(mem)) as c:
                top = None
                for q in queries:
                    r = await call(c, "memory_query", "search", {"query": q}, label="search(object)", store=store)
                    top = top or ((r.get("items") or [{}])[0].get("id"))
                    await call(c, "memory_query", "search", {"query": q}, {"result_unit": "segment"},
                               label="search(segment)", store=store)
                    await call(c, "memory_query", "context", {"task": q}, store=store)
                if top:
                    for m in ("page", "expand", "graph"):
                        await call(c, "memory_query", m, {"id": top}, store=store)
                await call(c, "memory_query", "recent", {}, store=store)
                for m in ("structure", "report", "audit"):
                    await call(c, "memory_maintain", m, {}, store=store)
            mem.close()


def run_one(args: argparse.Namespace) -> None:
    out: list[dict[str, Any]] = []
    asyncio.run(_measure(args, out))
    Path(args.out).write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")


# ------------------------------------------------------------------------ driver
def _tree_of(ref: str, into: Path) -> Path:
    """The ``src`` tree of a git revision, extracted (not checked out) into ``into``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "src"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def _collect(src: Path, args: argparse.Namespace, tmp: Path, label: str) -> list[dict[str, Any]]:
    out = tmp / f"{label}.json"
    cmd = [sys.executable, __file__, "--one", "--out", str(out), "--data", str(args.data),
           "--conversation", args.conversation, "--questions", str(args.questions)]
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

    groups: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
    for r in rows:
        if r["error"]:
            sys.exit(f"a tool call failed: {r['tool']} {r['mode']}: {r['text'][:500]}")
        groups.setdefault((r["store"], r["tool"], r["mode"]), []).append((len(r["text"]), count_tokens(r["text"])))
    summary = {}
    for key, vals in groups.items():
        chars = [v[0] for v in vals]
        toks = [v[1] for v in vals]
        summary[key] = {"n": len(vals), "chars_p50": statistics.median(chars), "chars_max": max(chars),
                        "tokens_p50": statistics.median(toks), "tokens_max": max(toks)}
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--questions", type=int, default=1000, help="at most this many questions")
    ap.add_argument("--baseline-ref", default=None, help="git revision measured beside the working tree")
    ap.add_argument("--synthetic", type=int, default=0, help="also measure a synthetic store of N segments")
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
            runs["baseline"] = _summarise(_collect(_tree_of(args.baseline_ref, tmp / "base"), args, tmp, "baseline"))
        runs["current"] = _summarise(_collect(REPO / "src", args, tmp, "current"))
    keys = sorted({k for r in runs.values() for k in r})
    head = f"{'store':18s} {'tool':16s} {'mode':16s}"
    for name in runs:
        head += f" | {name + ' chars p50/max':>22s} {'tokens p50/max':>15s}"
    print(head)
    over = []
    for k in keys:
        line = f"{k[0]:18s} {k[1]:16s} {k[2]:16s}"
        for name, r in runs.items():
            s = r.get(k)
            if s is None:
                line += f" | {'-':>22s} {'-':>15s}"
                continue
            line += f" | {s['chars_p50']:>10.0f} / {s['chars_max']:>9.0f} {s['tokens_p50']:>6.0f} / {s['tokens_max']:>6.0f}"
            if name == "current" and s["tokens_max"] > BUDGET and k[1] != "tools/list":
                over.append(k)
        print(line)
    print(f"\nbudget {BUDGET} tokens per default response: " + ("met" if not over else f"NOT met for {over}"))
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "responses.json").write_text(json.dumps(
        {name: {" / ".join(k): v for k, v in r.items()} for name, r in runs.items()}, indent=2))


if __name__ == "__main__":
    if "--one" in sys.argv:
        src = os.environ.get("PYTHONPATH")
        if src:
            sys.path.insert(0, src.split(os.pathsep)[0])
    main()
