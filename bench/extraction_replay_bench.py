"""Extraction replayed from real small models: prompt tokens per window, and what each answer yields.

The answers Qwen2.5-Coder 0.5B and 1.5B gave (``tests/graph/data/llm_recordings.jsonl``, recorded
in llama.cpp on LoCoMo sessions 1-4) are played back by the loopback stub speaking the
OpenAI-compatible protocol (streaming). In the same run:

1. Prompt tokens per window: the request the old client sent (recorded verbatim) against the
   request this client sends for the same episode, both counted with the project's tokenizer
   (BERT WordPiece, the vocabulary bundled with the static model; the model's own count is printed beside it).
2. Per recorded answer: the outcome, entities and facts stored, items dropped (with reasons in
   the trace), whether the answer was truncated, and the extra requests (halves, repair).

    .venv/bin/python bench/extraction_replay_bench.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp import Client

from memory_substrate import Memory, Settings
from memory_substrate.mcp.server import build_server
from tests.graph.stub_llm import stub_llm
from tests.graph.test_recorded_models import RECORDS, _messages, _replayer
from tests.graph.test_recorded_models import wordpiece_tokens as count_tokens
from tests.helpers import call

OLD_SYSTEM = (
    Path(__file__).resolve().parents[1] / "tests" / "graph" / "data" / "recorded_system_prompt.txt"
).read_text()


async def replay(record: dict[str, Any], root: Path) -> dict[str, Any]:
    with stub_llm() as llm:
        others = _replayer(llm, record)
        settings = Settings(
            root=root / record["id"],
            embedder="none",
            llm_base_url=llm.url,
            llm_model="qwen",
            llm_backoff_s=0.01,
        )
        mem = Memory(settings, namespace="bench")
        try:
            title, messages = _messages(record["episode"])
            async with Client(build_server(mem)) as c:
                ep = (await call(c, "memory_ingest", "conversation", {"title": title, "messages": messages}))[
                    "source_id"
                ]
                out = await call(c, "memory_maintain", "extract", {"episode_ids": [ep]}, {"apply": True})
                trace = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]
        finally:
            mem.close()
        first = llm.requests[0]["body"]
    run = out["runs"][0]
    window = trace["window_runs"][0]
    return {
        "id": record["id"][-6:],
        "model": record["model"].split("-")[-2],
        "finish": record["finish_reason"],
        "old_prompt": count_tokens(OLD_SYSTEM) + count_tokens(record["episode"]),
        "new_prompt": sum(count_tokens(m["content"]) for m in first["messages"]),
        "model_counted_old": record["prompt_tokens"],
        "max_tokens": first.get("max_tokens"),
        "outcome": run["outcome"],
        "entities": run.get("entities", 0),
        "facts": run.get("facts", 0),
        "dropped": len(trace.get("dropped") or []),
        "truncated": bool(window.get("truncated")),
        "grounded": len(window.get("grounding") or []),
        "extra_requests": len(others),
    }


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = [await replay(r, Path(tmp)) for r in RECORDS]
    cols = list(rows[0])
    print(" | ".join(cols))
    for row in rows:
        print(" | ".join(str(row[c]) for c in cols))
    seen: dict[str, dict[str, Any]] = {}
    for row, rec in zip(rows, RECORDS, strict=True):
        seen.setdefault(rec["episode"].splitlines()[0], row)  # one window per recorded episode
    old = [r["old_prompt"] for r in seen.values()]
    new = [r["new_prompt"] for r in seen.values()]
    print(
        json.dumps(
            {
                "windows": len(seen),
                "prompt_tokens_per_window_old_median": statistics.median(old),
                "prompt_tokens_per_window_new_median": statistics.median(new),
                "new_over_old": round(statistics.median(n / o for n, o in zip(new, old, strict=True)), 3),
                "outcomes": {k: sum(r["outcome"] == k for r in rows) for k in ("done", "partial", "failed")},
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
