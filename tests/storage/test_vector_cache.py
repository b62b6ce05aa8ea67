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
