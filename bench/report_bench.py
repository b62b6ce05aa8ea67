"""Time ``memory_maintain report`` on a store of 10k knowledge items.

Seeds through the service layer (``Memory.ingest`` / ``Memory.remember("batch")``) with the
embedder off, then times ``report`` several times and prints the median, next to the median of
``structure`` (a cheap read of the same store) measured in the same run.

    .venv/bin/python bench/report_bench.py                 # 10k items, 5 runs
    .venv/bin/python bench/report_bench.py --items 2000 --runs 3

Target: report median < 2 s at 10k items. The store is seeded in a temporary directory (or
``--root``, reused when it already holds the namespace's items).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memory_substrate import Memory, Settings

BASE = [
    "cache",
    "index",
    "query",
    "planner",
    "vector",
    "graph",
    "node",
    "edge",
    "scope",
    "source",
    "segment",
    "patch",
    "audit",
    "schema",
    "migration",
    "worker",
    "queue",
    "token",
    "budget",
    "context",
    "policy",
    "deploy",
    "release",
    "build",
    "test",
    "lint",
    "storage",
    "backup",
    "restore",
    "embed",
    "model",
    "rank",
    "fusion",
    "filter",
    "window",
    "session",
    "agent",
    "memory",
    "review",
    "decision",
]


def _vocabulary(rng: random.Random, size: int = 4000) -> tuple[list[str], list[float]]:
    """Common domain words plus synthetic rarer ones, Zipf-weighted like real prose."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = list(BASE)
    while len(words) < size:
        words.append("".join(rng.choices(letters, k=rng.randint(4, 9))))
    return words, [1.0 / (rank + 1) for rank in range(len(words))]


PREDICATES = [
    "uses",
    "owns",
    "depends_on",
    "runs_on",
    "stores_in",
    "deployed_to",
    "written_in",
    "reviewed_by",
]


def _words(rng: random.Random, k: int) -> list[str]:
    return rng.choices(VOCAB[0], weights=VOCAB[1], k=k)


VOCAB: tuple[list[str], list[float]] = ([], [])


def _sources(mem: Memory, rng: random.Random, n: int = 10) -> list[tuple[str, int]]:
    out = []
    for s in range(n):
        messages = [
            {
                "role": "user" if i % 2 else "assistant",
                "content": f"The {rng.choice(BASE).title()} {rng.choice(BASE).title()} handles "
                f"{' '.join(_words(rng, 12))}. Context Pack and Memory Substrate again.",
            }
            for i in range(20)
        ]
        res = mem.ingest("conversation", {"title": f"bench conversation {s}", "messages": messages})
        out.append((res["source_id"], res["segment_count"]))
    return out


def _entry(i: int, rng: random.Random, sources: list[tuple[str, int]], now: datetime) -> dict[str, Any]:
    source_id, segments = rng.choice(sources)
    evidence = [{"source_id": source_id, "segment_id": f"seg-{rng.randint(1, segments)}"}] if i % 3 else []
    words = _words(rng, rng.randint(3, 6))
    data: dict[str, Any] = {
        "kind": rng.choice(["fact", "decision", "procedure", "concept"]),
        "title": f"{' '.join(words).capitalize()} {i}",
        "summary": f"{' '.join(_words(rng, rng.randint(8, 20)))}.",
        "reason": "benchmark seed",
        "memory_source": rng.choice(["agent_inferred", "user_declared", "human_curated"]),
        "scope_refs": [f"scope:project-{i % 7}"],
        "evidence_refs": evidence,
        "confidence": round(rng.uniform(0.4, 1.0), 2),
    }
    if i % 5 < 2:  # 40% structured claims on a shared entity graph
        subject = f"node:entity-{i // 8}"
        data["subject_refs"] = [subject]
        data["payload"] = {
            "subject": subject,
            "predicate": PREDICATES[i % 8],
            "object": f"node:entity-{rng.randint(0, 1200)}",
        }
        data["kind"] = "fact"
    if i % 50 == 0:
        data["valid_until"] = (now - timedelta(days=1)).isoformat()
    if i % 97 == 0 and i and "payload" not in data:  # a planted near-duplicate now and then
        data["title"] = PLANTED.get("title", data["title"])
        data["summary"] = PLANTED.get("summary", data["summary"])
    PLANTED.update(title=data["title"], summary=data["summary"])
    return data


PLANTED: dict[str, str] = {}


def seed(mem: Memory, items: int, batch: int = 500) -> float:
    rng = random.Random(7)
    VOCAB[0][:], VOCAB[1][:] = _vocabulary(rng)
    now = datetime.now(UTC)
    started = time.perf_counter()
    sources = _sources(mem, rng)
    for start in range(0, items, batch):
        entries = [
            {"mode": "knowledge", "input_data": _entry(i, rng, sources, now)}
            for i in range(start, min(items, start + batch))
        ]
        mem.remember("batch", {"entries": entries})
    return time.perf_counter() - started


def timed(fn: Any, runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--root", type=Path, default=None)
    args = parser.parse_args()
    root = args.root or Path(tempfile.mkdtemp(prefix="report-bench-"))
    mem = Memory(Settings(root=root, embedder="none"), namespace="bench")
    try:
        have = mem.maintain("structure", {})["counts"]["by_object_type"].get("knowledge", 0)
        seed_s = seed(mem, args.items) if have < args.items else 0.0
        mem.maintain("report", {})  # warm-up: imports (networkx), page cache
        report_median, report_runs = timed(lambda: mem.maintain("report", {}), args.runs)
        structure_median, _ = timed(lambda: mem.maintain("structure", {}), args.runs)
        rep = mem.maintain("report", {})
        print(
            json.dumps(
                {
                    "store": str(root),
                    "knowledge_items": rep["counts"]["knowledge"],
                    "objects": rep["counts"]["objects"],
                    "relations": rep["counts"]["relations"],
                    "seed_seconds": round(seed_s, 2),
                    "report_median_s": round(report_median, 3),
                    "report_runs_s": [round(t, 3) for t in report_runs],
                    "structure_median_s (baseline)": round(structure_median, 3),
                    "target_s": 2.0,
                    "within_target": report_median < 2.0,
                    "report_counts": {k: v for k, v in rep["counts"].items() if isinstance(v, int)},
                },
                indent=2,
            )
        )
    finally:
        mem.close()


if __name__ == "__main__":
    main()
