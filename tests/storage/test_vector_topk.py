"""The int8-prefiltered vector top-k returns exactly what a full float32 scan returns."""

from __future__ import annotations

import numpy as np
import pytest

from memory_substrate.storage import vector_topk
from memory_substrate.storage.vector_cache import VectorCache, VectorStep

pytestmark = pytest.mark.skipif(not vector_topk.available(), reason="simsimd is not installed")


def _corpus(n: int, dim: int, seed: int) -> np.ndarray:
    """Clustered unit vectors (like text embeddings: many near neighbours), some duplicated."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim)).astype(np.float32)
    m = centres[rng.integers(0, 40, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    m[rng.integers(0, n, n // 50)] = m[rng.integers(0, n, n // 50)]  # exact duplicates: ties
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


@pytest.mark.parametrize("dim", [64, 384])
def test_top_k_matches_full_scan(dim: int) -> None:
    m = _corpus(30_000, dim, dim)
    q_all = np.vstack([m[:5] + 0.05, _corpus(15, dim, 1)])  # near stored rows and unrelated
    quantised = vector_topk.quantise(m)
    for q in q_all:
        q = (q / np.linalg.norm(q)).astype(np.float32)
        for k in (1, 10, 100, 400):
            fast = vector_topk.top_k(m, quantised, q, k)
            slow = vector_topk.full_scan(m, q, k)
            assert [i for i, _ in fast] == [i for i, _ in slow]
            assert np.allclose([s for _, s in fast], [s for _, s in slow], atol=1e-6)


def test_ties_come_in_row_order() -> None:
    m = np.tile(np.eye(8, dtype=np.float32)[0], (30_000, 1))  # every row the same vector
    q = np.eye(8, dtype=np.float32)[0]
    assert [i for i, _ in vector_topk.top_k(m, vector_topk.quantise(m), q, 5)] == [0, 1, 2, 3, 4]


def test_cache_search_uses_the_fast_path_and_agrees() -> None:
    m = _corpus(vector_topk.QUANTISE_FROM + 500, 32, 7)
    ids = [f"s{i}" for i in range(len(m))]
    cache = VectorCache()
    q = m[3]
    first = cache.search("k", 1, lambda: (ids, m), q, 50)
    assert cache._entries["k"].quant is None  # the first search after a load scans plainly
    got = cache.search("k", 1, lambda: (ids, m), q, 50)
    assert cache._entries["k"].quant is not None  # then built, kept
    assert got == first
    assert [k for k, _ in got] == [ids[i] for i, _ in vector_topk.full_scan(m, q, 50)]
    # A private (uncommitted) matrix is scanned plainly and never cached.
    assert cache.search("p", 1, lambda: (ids, m), q, 50, cache=False) == got
    assert "p" not in cache._entries


def test_the_int8_companion_follows_committed_steps() -> None:
    """Appends, replacements and deletes extend and mask the int8 copy as they do the matrix:
    every answer equals a full scan of the same rows, and the copy is never rebuilt."""
    m = _corpus(vector_topk.QUANTISE_FROM + 200, 32, 11)
    ids = [f"s{i}" for i in range(len(m))]
    key = ("ns", "segment", "m1")
    cache = VectorCache()
    for _ in range(2):
        cache.search(key, 1, lambda: (ids, m), m[0], 10)
    quant = cache._entries[key].quant
    assert quant is not None
    rows = dict(zip(ids, m, strict=True))
    rng = np.random.default_rng(5)
    fresh = _corpus(300, 32, 12)
    version = 1
    for step in range(30):
        new = {f"n{step}-{j}": fresh[(step * 10 + j) % 300] for j in range(10)}
        again = {f"s{step}": fresh[step]}  # replaces a stored row
        gone = [f"s{100 + step}"]
        cache.advance(
            "ns",
            [
                VectorStep("segment", version, version + 1, "m1", list({**new, **again}.items())),
                VectorStep("segment", version + 1, version + 2, removals=[(g, "m1") for g in gone]),
            ],
        )
        version += 2
        rows.update(new)
        rows.update(again)
        for g in gone:
            rows.pop(g)
        q = fresh[int(rng.integers(0, 300))]

        def refuse():  # type: ignore[no-untyped-def]
            raise AssertionError("reloaded")

        got = cache.search(key, version, refuse, q, 20)
        names = list(rows)
        want = [(names[i], s) for i, s in vector_topk.full_scan(np.stack(list(rows.values())), q, 20)]
        # Same scores in the same order; each id live and scored by its current vector (rows with
        # exactly equal scores may come in another order: the cache appends a replaced row at the end).
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
        assert len({k for k, _ in got}) == 20 and all(k in rows for k, _ in got)
        assert all(abs(float(rows[k] @ q) - s) < 1e-5 for k, s in got)
    assert cache._entries[key].quant is not None


def test_rescoring_stops_once_no_bound_reaches_the_kth_exact_score() -> None:
    """Far more rows pass the int8 filter than one rescoring batch: they are rescored best bound
    first, most are never read, and the answer still equals a full scan's, a tie straddling the
    k-th place included (ties come in row order)."""
    # Anisotropic rows, as text embeddings are (a component every row shares): the rows' scores
    # crowd together and one large coordinate per row makes the int8 error large, so a third of
    # the rows or more pass the int8 filter.
    rng = np.random.default_rng(3)
    m = rng.standard_normal((60_000, 384)).astype(np.float32)
    m[:, 0] += 12.0
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    q = (m[10] + 0.3 * m[20]).astype(np.float32)
    q /= np.linalg.norm(q)
    real_dot = vector_topk.dot
    scored: list[int] = []

    def counting_dot(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
        scored.append(len(matrix))
        return real_dot(matrix, query)

    for k in (50, 136, 700):
        tied = m.copy()
        kth_row = vector_topk.full_scan(tied, q, k)[-1][0]
        tied[[5, 30_000, 59_999]] = tied[kth_row]  # three copies of the k-th row: a tie at the cut
        quantised = vector_topk.quantise(tied)
        passing = len(vector_topk.candidates(quantised, q, k)[0])
        scored.clear()
        vector_topk.dot = counting_dot
        try:
            fast = vector_topk.top_k(tied, quantised, q, k)
        finally:
            vector_topk.dot = real_dot
        assert [i for i, _ in fast] == [i for i, _ in vector_topk.full_scan(tied, q, k)]
        assert passing > vector_topk.RESCORE_BATCH
        assert sum(scored) < passing / 2, (k, sum(scored), passing)


def test_rescoring_keeps_ties_that_straddle_a_batch_boundary() -> None:
    """Rows scored exactly (integer vectors), many of them tied with the k-th score, with upper
    bounds that put some of the tied rows in the first rescoring batch and others after it (a
    bound equal to the score, or one or two above it): the k best, ties in row order, are what
    scoring every row gives, for k below, at and above the first batch."""
    rng = np.random.default_rng(0)
    m = rng.integers(-3, 4, (4_000, 6)).astype(np.float32)
    q = np.array([1, -1, 2, 0, 1, -2], dtype=np.float32)
    exact = vector_topk.dot(m, q)
    rows = np.arange(len(m), dtype=np.intp)
    for slack in (np.zeros(len(m)), rng.integers(0, 3, len(m))):
        upper = (exact + slack).astype(np.float32)
        for k in (1, 37, 256, 300, 511, 700, 1_500):
            got = vector_topk._rescore(m, q, rows, upper, k)
            assert got == vector_topk._best(exact, rows, k), k
