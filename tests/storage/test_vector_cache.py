"""The in-process vector cache takes this process's commits without reloading the partition."""

from __future__ import annotations

import numpy as np
import pytest

from memory_substrate.storage.vector_cache import VectorCache, VectorStep


def _unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _loader(ids: list[str], rows: list[np.ndarray]):  # type: ignore[no-untyped-def]
    return lambda: (list(ids), np.stack(rows).astype(np.float32))


def _refuse():  # type: ignore[no-untyped-def]
    raise AssertionError("the partition was reloaded")


KEY = ("ns", "entity:service", "m1")


def test_a_committed_step_is_applied_in_place_and_a_gap_forces_a_reload() -> None:
    cache = VectorCache()
    q = _unit(1, 0, 0)
    first = cache.search(KEY, 5, _loader(["a", "b"], [_unit(1, 1, 0), _unit(0, 1, 0)]), q, 10)
    assert [oid for oid, _ in first] == ["a", "b"]
    cache.advance(
        "ns",
        [
            VectorStep("entity:service", 5, 6, "m1", [("c", _unit(1, 0, 0)), ("b", _unit(-1, 0, 0))]),
            VectorStep("entity:service", 6, 7, removals=[("a", "m1")]),
            VectorStep("other", 1, 2, "m1", [("z", _unit(1, 0, 0))]),  # another partition: ignored here
        ],
    )
    hits = cache.search(KEY, 7, _refuse, q, 10)
    assert [oid for oid, _ in hits] == ["c", "b"]
    assert hits[1][1] == pytest.approx(-1.0, abs=1e-5)
    assert set(cache.lookup(KEY, 7, _refuse, ["a", "b", "c"])) == {"b", "c"}
    # A write this process did not see (the counter is ahead of every step): reload.
    cache.advance("ns", [VectorStep("entity:service", 9, 10, "m1", [("d", _unit(0, 0, 1))])])
    with pytest.raises(AssertionError, match="reloaded"):
        cache.search(KEY, 10, _refuse, q, 10)


def test_many_replacements_compact_the_matrix_and_keep_the_answers() -> None:
    cache = VectorCache()
    rng = np.random.default_rng(0)
    ids = [f"e{i}" for i in range(10)]
    rows = {oid: rng.normal(size=4).astype(np.float32) for oid in ids}
    cache.search(KEY, 1, _loader(ids, [rows[i] for i in ids]), rows["e0"], 3)
    for version in range(1, 200):
        oid = ids[version % 10]
        rows[oid] = rng.normal(size=4).astype(np.float32)
        cache.advance("ns", [VectorStep("entity:service", version, version + 1, "m1", [(oid, rows[oid])])])
    q = rng.normal(size=4).astype(np.float32)
    want = sorted(ids, key=lambda i: -float(rows[i] @ q))[:5]
    assert [oid for oid, _ in cache.search(KEY, 200, _refuse, q, 5)] == want


def _gated_rows(n: int, dim: int, used: slice, rng: np.random.Generator) -> np.ndarray:
    """Rows that fill only ``used`` of ``dim`` columns, as a gated embedder's English texts do."""
    rows = np.zeros((n, dim), dtype=np.float32)
    rows[:, used] = rng.normal(size=(n, used.stop - used.start))
    normed: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return normed


def test_a_matrix_keeps_only_the_columns_its_rows_use_and_scores_as_the_full_rows() -> None:
    rng = np.random.default_rng(3)
    n, dim = 25_000, 96  # past QUANTISE_FROM: the int8 pass runs on the narrowed rows too
    rows = _gated_rows(n, dim, slice(0, 24), rng)
    ids = [f"s{i}" for i in range(n)]
    cache = VectorCache()
    q = rng.normal(size=dim).astype(np.float32)  # uses every column, as an English query does
    want_scores = rows @ q
    want = [ids[i] for i in np.argsort(-want_scores, kind="stable")[:20]]
    for _ in range(3):  # float32 scan, then the int8 companion is built and used
        hits = cache.search(KEY, 1, _loader(ids, list(rows)), q, 20)
        assert [oid for oid, _ in hits] == want
        assert [s for _, s in hits] == pytest.approx(
            [float(want_scores[ids.index(o)]) for o in want], abs=1e-5
        )
    entry = cache._entries[KEY]
    assert entry.buf.shape[1] == 24 and entry.dim == dim  # kept narrow
    got = cache.lookup(KEY, 1, _refuse, ["s7"])["s7"]
    assert got.shape == (dim,) and np.array_equal(got, rows[7])  # handed out at full width

    # A write inside the kept columns is applied in place, narrowed.
    new = _gated_rows(1, dim, slice(0, 24), rng)[0]
    cache.advance("ns", [VectorStep("entity:service", 1, 2, "m1", [("x", new)])])
    assert cache.search(KEY, 2, _refuse, new, 1)[0][0] == "x"
    # A write using a column left out (a text in another language) widens the matrix and its
    # int8 companion in place, without a reload, and every score is still the full rows'.
    foreign = _gated_rows(1, dim, slice(24, 60), rng)[0]
    cache.advance("ns", [VectorStep("entity:service", 2, 3, "m1", [("de", foreign)])])
    hits = cache.search(KEY, 3, _refuse, foreign, 1)
    assert hits[0][0] == "de" and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    entry = cache._entries[KEY]
    assert entry.buf.shape[1] == 60 and entry.quant is not None
    all_ids, all_rows = [*ids, "x", "de"], np.vstack([rows, new, foreign])
    for query in (q, foreign + q):
        scores = all_rows @ query
        want = [all_ids[i] for i in np.argsort(-scores, kind="stable")[:20]]
        hits = cache.search(KEY, 3, _refuse, query, 20)
        assert [oid for oid, _ in hits] == want
        assert [s for _, s in hits] == pytest.approx(
            [float(scores[all_ids.index(o)]) for o in want], abs=1e-5
        )
    assert np.array_equal(cache.lookup(KEY, 3, _refuse, ["s7"])["s7"], rows[7])
    # Past NARROW_BELOW of the columns the matrix keeps every one.
    wide = _gated_rows(1, dim, slice(0, dim), rng)[0]
    cache.advance("ns", [VectorStep("entity:service", 3, 4, "m1", [("all", wide)])])
    assert cache.search(KEY, 4, _refuse, wide, 1)[0][0] == "all"
    assert cache._entries[KEY].cols is None and cache._entries[KEY].buf.shape[1] == dim


def test_the_first_rows_of_a_partition_cached_empty_are_taken_in_place() -> None:
    cache = VectorCache()
    q = _unit(1, 0, 0)
    assert cache.search(KEY, 5, lambda: ([], np.zeros((0, 0), dtype=np.float32)), q, 10) == []
    cache.advance(
        "ns", [VectorStep("entity:service", 5, 6, "m1", [("a", _unit(1, 1, 0)), ("b", _unit(0, 1, 0))])]
    )
    assert [oid for oid, _ in cache.search(KEY, 6, _refuse, q, 10)] == ["a", "b"]


def test_a_matrix_that_uses_most_columns_is_kept_whole() -> None:
    rng = np.random.default_rng(4)
    rows = _gated_rows(50, 16, slice(0, 14), rng)
    cache = VectorCache()
    cache.search(KEY, 1, _loader([f"s{i}" for i in range(50)], list(rows)), rows[0], 5)
    assert cache._entries[KEY].buf.shape[1] == 16 and cache._entries[KEY].cols is None
