"""Vector stream alone: a float32 full scan (the code before) against the int8 pass with float32
rescoring (storage/vector_topk.py), on clustered unit vectors of the default embedder's width.

    .venv/bin/python bench/vector_bench.py 1000000     # rows (default 1,000,000)

Every query checks that both return the same top 100, in the same order.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from memory_substrate.storage import vector_topk as vt


def p95(xs: list[float]) -> float:
    return sorted(xs)[round(0.95 * (len(xs) - 1))]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    d = 256
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((200, d)).astype(np.float32)
    m = np.empty((n, d), dtype=np.float32)
    for lo in range(0, n, 100_000):
        rows = min(100_000, n - lo)
        b = centres[rng.integers(0, 200, rows)] + 0.8 * rng.standard_normal((rows, d)).astype(np.float32)
        m[lo : lo + rows] = b / np.linalg.norm(b, axis=1, keepdims=True)
    t = time.perf_counter()
    qz = vt.quantise(m)
    quantise_s = time.perf_counter() - t
    full, fast = [], []
    for _ in range(30):
        q = m[rng.integers(0, n)] + 0.3 * rng.standard_normal(d).astype(np.float32)
        q /= np.linalg.norm(q)
        t = time.perf_counter()
        a = vt.full_scan(m, q, 100)
        full.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        b = vt.top_k(m, qz, q, 100)
        fast.append((time.perf_counter() - t) * 1000)
        assert [x for x, _ in a] == [x for x, _ in b]
    print(
        f"{n} x {d}: quantise {quantise_s:.1f} s; full float32 scan p50 {statistics.median(full):.1f} "
        f"p95 {p95(full):.1f} ms; int8+rescore p50 {statistics.median(fast):.1f} p95 {p95(fast):.1f} ms; "
        "same top-100 in all 30 queries"
    )


if __name__ == "__main__":
    main()
