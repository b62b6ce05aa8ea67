#!/usr/bin/env python3
"""How close the compiler's offline token counter is to real tokenizers (a development check).

Needs what the product never downloads: ``tiktoken`` with its ``cl100k_base`` and ``o200k_base``
files already in ``TIKTOKEN_CACHE_DIR``, ``tokenizers``, and the Claude tokenizer JSON (the one
Anthropic published for its earlier models). None of them can be fetched at run time here; the
figures in docs/context-compiler.md were taken from copies bundled in a package wheel
(``litellm``'s ``litellm_core_utils/tokenizers/``), unpacked by hand.

    TIKTOKEN_CACHE_DIR=/path/to/cache python bench/token_calibration.py \
        --claude /path/to/anthropic_tokenizer.json [--packages packages.jsonl]

Samples: LoCoMo turns joined in random groups (chat), this repository's Python files (code),
docs/*.md (docs), and optionally compiled packages (one JSON object with ``content`` per line).
Reported: median, p5 and p95 of ours / theirs, and the share of samples we under-count.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from memory_substrate.tokens import count_tokens  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claude", type=Path, required=True)
    ap.add_argument("--packages", type=Path, default=None)
    ap.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo/locomo_dev.json"))
    args = ap.parse_args()
    import tiktoken
    from tokenizers import Tokenizer

    counters = {
        n: (lambda e: lambda t: len(e.encode(t)))(tiktoken.get_encoding(n))
        for n in ("cl100k_base", "o200k_base")
    }
    claude = Tokenizer.from_file(str(args.claude))
    counters["claude (legacy)"] = lambda t: len(claude.encode(t).ids)
    data = json.loads(args.locomo.read_text(encoding="utf-8"))
    turns = [
        t["text"]
        for c in data
        for k, v in c["conversation"].items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
    ]
    rng = random.Random(1)
    samples = [("chat", "\n".join(rng.sample(turns, rng.randint(1, 60)))) for _ in range(300)]
    samples += [
        ("code", Path(f).read_text()[:6000])
        for f in sorted(glob.glob(str(REPO / "src/memory_substrate/**/*.py"), recursive=True))
    ]
    samples += [("docs", Path(f).read_text()[:8000]) for f in sorted(glob.glob(str(REPO / "docs/*.md")))]
    if args.packages:
        samples += [
            ("package", json.loads(line)["content"])
            for line in args.packages.read_text().splitlines()
            if line
        ]
    samples = [(k, t) for k, t in samples if t.strip()]
    for kind in dict.fromkeys(k for k, _ in samples):
        for name, theirs in counters.items():
            ratios = sorted(count_tokens(t) / max(1, theirs(t)) for k, t in samples if k == kind)
            under = sum(r < 1 for r in ratios) / len(ratios)
            print(
                f"{kind:8s} {name:16s} n={len(ratios):3d}  median {statistics.median(ratios):.3f}  "
                f"p5 {ratios[int(0.05 * len(ratios))]:.3f}  p95 {ratios[int(0.95 * len(ratios))]:.3f}  under-count {under:.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
