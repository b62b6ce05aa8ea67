"""Vector stream alone: a float32 full scan (the code before) against the int8 pass with float32
rescoring (storage/vector_topk.py), on clustered 256-d unit vectors (the default embedder's
vectors are wider: 784-d).

    .venv/bin/python bench/vector_bench.py 1000000     # rows (default 1,000,000)
    .venv/bin/python bench/vector_bench.py 100000 --shared 12 --k 136

Every query checks that both return the same top k (100 unless ``--k``), in the same order.
``--shared C`` adds C to one coordinate of every row before normalising: the rows then share a
direction, as text embeddings do (anisotropy), their scores crowd together and the int8 bounds
let far more rows through to rescoring (on the synthetic 100k store of ``context_bench.py
--scale``, 11k rows for k = 51 with the default embedder). It prints how many rows qualify and
how many were rescored.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from memory_substrate.storage import vector_topk as vt


def p95(xs: list[float]) -> float:
    return sorted(xs)[round(0.95 * (len(xs) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rows", type=int, nargs="?", default=1_000_000)
    ap.add_argument("--shared", type=float, default=0.0, help="a component every row shares (anisotropy)")
    ap.add_argument("--k", type=int, default=100)
    args = ap.parse_args()
    n, k = args.rows, args.k
    d = 256
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((200, d)).astype(np.float32)
    m = np.empty((n, d), dtype=np.float32)
    for lo in range(0, n, 100_000):
        rows = min(100_000, n - lo)
        b = centres[rng.integers(0, 200, rows)] + 0.8 * rng.standard_normal((rows, d)).astype(np.float32)
        b[:, 0] += args.shared
        m[lo : lo + rows] = b / np.linalg.norm(b, axis=1, keepdims=True)
    t = time.perf_counter()
    qz = vt.quantise(m)
    quantise_s = time.perf_counter() - t
    full, fast, qualified, rescored = [], [], [], []
    real_dot = vt.dot

    def counting(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
        rescored[-1] += len(matrix)
        return real_dot(matrix, query)

    for _ in range(30):
        q = m[rng.integers(0, n)] + 0.3 * rng.standard_normal(d).astype(np.float32)
        q /= np.linalg.norm(q)
        t = time.perf_counter()
        a = vt.full_scan(m, q, k)
        full.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        b = vt.top_k(m, qz, q, k)
        fast.append((time.perf_counter() - t) * 1000)
        assert [x for x, _ in a] == [x for x, _ in b]
        qualified.append(len(vt.candidates(qz, q, k)[0]))
        rescored.append(0)
        vt.dot = counting
        try:
            vt.top_k(m, qz, q, k)
        finally:
            vt.dot = real_dot
    print(
        f"{n} x {d}: quantise {quantise_s:.1f} s; full float32 scan p50 {statistics.median(full):.1f} "
        f"p95 {p95(full):.1f} ms; int8+rescore p50 {statistics.median(fast):.1f} p95 {p95(fast):.1f} ms; "
        f"same top-{k} in all 30 queries; rows past the int8 pass p50 {statistics.median(qualified):.0f}, "
        f"rescored p50 {statistics.median(rescored):.0f}"
    )


if __name__ == "__main__":
    main()
