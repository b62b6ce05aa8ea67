"""Ingest timings for evidence capture, each beside a baseline measured in the same run.

    .venv/bin/python bench/ingest_bench.py [--repo PATH] [--pages 100] [--runs 3] [--embedder static|none]

- repo: `memory_ingest repo` of a repository (default: this one) vs. the baseline of walking the
  same tracked files and hashing them (the least any repo ingest must do).
- pdf: `memory_ingest pdf` of a generated N-page PDF vs. the baseline of plain pypdf text extraction.
Each figure is the median of --runs fresh stores.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory_substrate import Memory, Settings
from tests.ingest_adapters.conftest import make_pdf

LOREM = (
    "Retrieval systems combine lexical and semantic evidence. Each page of this report describes "
    "an experiment with ranking, fusion, and evaluation over long conversations and documents. "
)


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_repo(repo: Path, runs: int, embedder: str) -> dict[str, float]:
    files = subprocess.run(
        ["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()

    def baseline() -> None:
        for rel in files:
            p = repo / rel
            if p.is_file():
                hashlib.sha256(p.read_bytes()).hexdigest()

    def ingest() -> None:
        with tempfile.TemporaryDirectory() as d, Memory(Settings(root=d, embedder=embedder)) as mem:
            mem.ingest("repo", {"path": str(repo), "exclude_patterns": [".venv"]})

    return {"files": len(files), "baseline_s": _median(baseline, runs), "ingest_s": _median(ingest, runs)}


def bench_pdf(pages: int, runs: int, embedder: str) -> dict[str, float]:
    import io

    import pypdf

    data = make_pdf([f"Page {i}. " + LOREM * 12 for i in range(pages)])
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "report.pdf"
        path.write_bytes(data)

        def baseline() -> None:
            reader = pypdf.PdfReader(io.BytesIO(path.read_bytes()))
            for page in reader.pages:
                page.extract_text()

        def ingest() -> None:
            with tempfile.TemporaryDirectory() as root, Memory(Settings(root=root, embedder=embedder)) as mem:
                mem.ingest("pdf", {"path": str(path)})

        return {"pages": pages, "baseline_s": _median(baseline, runs), "ingest_s": _median(ingest, runs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--embedder", default="static")
    args = ap.parse_args()
    repo = bench_repo(args.repo, args.runs, args.embedder)
    pdf = bench_pdf(args.pages, args.runs, args.embedder)
    print(f"embedder={args.embedder} runs={args.runs} (medians)")
    print(
        f"repo  {repo['files']:5d} files  ingest {repo['ingest_s']:.3f}s  baseline(read+hash) {repo['baseline_s']:.3f}s  ratio {repo['ingest_s'] / repo['baseline_s']:.1f}x"
    )
    print(
        f"pdf   {pdf['pages']:5d} pages  ingest {pdf['ingest_s']:.3f}s  baseline(pypdf text) {pdf['baseline_s']:.3f}s  ratio {pdf['ingest_s'] / pdf['baseline_s']:.2f}x"
    )


if __name__ == "__main__":
    main()
