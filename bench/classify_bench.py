#!/usr/bin/env python3
"""Task-classification accuracy on the labelled set (tests/data/task_classes.jsonl).

The set is split once, by a hash of each phrasing, into a development third-and-two-thirds:
``dev`` (about two thirds: cues and prototypes were adjusted while looking at its errors) and
``heldout`` (about one third: only its score is ever printed, never its errors). Top-1 accuracy
is reported on both, beside a cue-only classifier and a majority-class baseline measured in the
same run; the held-out figure is the honest one.

    .venv/bin/python bench/classify_bench.py            # accuracy table
    .venv/bin/python bench/classify_bench.py --errors   # dev errors only (for tuning)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

DATA = REPO / "tests" / "data" / "task_classes.jsonl"


def load(path: Path = DATA) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def split_of(text: str) -> str:
    return "heldout" if int(hashlib.sha256(text.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def evaluate(rows: list[dict[str, str]], embedder: object | None) -> tuple[float, list[tuple[str, str, str]]]:
    from memory_substrate.compiler.classify import classify

    errors = []
    for r in rows:
        got = classify(r["text"], embedder).primary  # type: ignore[arg-type]
        if got != r["label"]:
            errors.append((r["label"], got, r["text"]))
    return 1 - len(errors) / len(rows), errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--errors", action="store_true", help="print the dev split's errors")
    args = ap.parse_args(argv)
    from memory_substrate.embed.static import StaticEmbedder

    rows = load()
    emb = StaticEmbedder()
    splits = {
        "dev": [r for r in rows if split_of(r["text"]) == "dev"],
        "heldout": [r for r in rows if split_of(r["text"]) == "heldout"],
    }
    splits["all"] = rows
    majority = Counter(r["label"] for r in rows).most_common(1)[0][0]
    print(f"{'split':8s} {'n':>4s}  {'prototypes+cues':>15s}  {'cues only':>9s}  {'majority':>8s}")
    for name, part in splits.items():
        t0 = time.perf_counter()
        acc, errs = evaluate(part, emb)
        ms = (time.perf_counter() - t0) * 1000 / len(part)
        cue_acc, _ = evaluate(part, None)
        maj = sum(r["label"] == majority for r in part) / len(part)
        print(f"{name:8s} {len(part):4d}  {acc:15.3f}  {cue_acc:9.3f}  {maj:8.3f}   ({ms:.2f} ms/task)")
        if args.errors and name == "dev":
            for want, got, text in errs:
                print(f"   want {want:12s} got {got:12s} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
