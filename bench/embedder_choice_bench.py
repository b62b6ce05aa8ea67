"""Open time of a store written with `static`, opened with default settings: this tree beside a
baseline commit (issue 27b: the embedder is chosen by one indexed query on first use).

    .venv/bin/python bench/embedder_choice_bench.py --segments 10000 --baseline-ref main [--rounds 3 --runs 10]

A store of ``--segments`` conversation turns is written once with ``embedder="static"`` (this tree).
Each measurement, in a fresh subprocess, opens ``Memory`` with default settings and asks
``semantic_status()`` (what search, doctor and structure do first: the baseline builds its
embedder, this tree also runs the choice query), ``--runs`` times, then runs one search (the
model loads). Baseline and this tree alternate ``--rounds`` times; medians of each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, sys, time
from memory_substrate import Memory, Settings
root, runs = sys.argv[1], int(sys.argv[2])
opens = []
for _ in range(runs):
    t = time.perf_counter()
    mem = Memory(Settings(root=root), namespace="bench")
    status = mem.runtime.semantic_status()
    opens.append(time.perf_counter() - t)
    mem.close()
with Memory(Settings(root=root), namespace="bench") as mem:
    t = time.perf_counter()
    found = mem.query("search", {"query": "car garage vehicle"}, {"result_unit": "segment", "max_items": 3})
    first_search = time.perf_counter() - t
print(json.dumps({"opens": opens, "first_search": first_search, "provider": status["provider"],
                  "found": found.get("count", 0)}))
"""


def build(root: Path, segments: int) -> float:
    from memory_substrate import Memory, Settings

    t = time.perf_counter()
    with Memory(Settings(root=root, embedder="static"), namespace="bench") as mem:
        for start in range(0, segments, 1000):
            turns = [
                {"role": "user", "content": f"Turn {i}: the mechanic fixed the brakes on day {i % 97}."}
                for i in range(start, min(segments, start + 1000))
            ]
            mem.ingest("conversation", {"title": f"chat {start}", "messages": turns})
    return time.perf_counter() - t


def measure(src: Path, root: Path, runs: int) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env["PYTHONPATH"] = str(src)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(runs)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--segments", type=int, default=10_000)
    ap.add_argument("--baseline-ref", default="main")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="embedder-choice-"))
    repo = Path(__file__).resolve().parent.parent
    base_src = tmp / "baseline"
    base_src.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", args.baseline_ref, "src"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(base_src)], input=archive.stdout, check=True)
    root = tmp / "store"
    built_s = build(root, args.segments)
    measure(repo / "src", root, 1)  # this tree migrates the store first (schema v11: one index)
    results: dict[str, list[dict[str, object]]] = {"baseline": [], "this": []}
    for _ in range(args.rounds):
        results["baseline"].append(measure(base_src / "src", root, args.runs))
        results["this"].append(measure(repo / "src", root, args.runs))
    summary = {}
    for name, rows in results.items():
        opens = [t for r in rows for t in r["opens"]]  # type: ignore[attr-defined]
        summary[name] = {
            "open_ms_median": round(1000 * statistics.median(opens), 2),
            "first_search_ms_median": round(1000 * statistics.median(r["first_search"] for r in rows), 1),  # type: ignore[misc]
            "provider": rows[-1]["provider"],
            "found": rows[-1]["found"],
        }
    print(
        json.dumps(
            {
                "segments": args.segments,
                "build_s": round(built_s, 1),
                "baseline_ref": args.baseline_ref,
                **summary,
                "open_ratio": round(
                    summary["this"]["open_ms_median"] / summary["baseline"]["open_ms_median"], 3
                ),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
