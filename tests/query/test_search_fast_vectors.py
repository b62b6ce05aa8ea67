"""Search answers the same with the int8-prefiltered vector top-k as with a plain float32 scan.

The fast path only engages on large matrices; here its size threshold is lowered so a small
generated corpus goes through it, and each search is compared with the reference scan. Only
stores that keep vectors as rows scored in-process use it (SQLite; PostgreSQL asks pgvector), so
on PostgreSQL the two runs must agree trivially and the test still checks the search end to end.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.storage import vector_topk

TOPICS = ["database migration", "vector index", "payment service", "login failure", "cache eviction"]


def _fill(mem: Memory) -> list[str]:
    rng = random.Random(14)
    vocab = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(3, 7))) for _ in range(300)]
    for c in range(6):
        msgs = []
        for _ in range(40):
            words = rng.choices(vocab, k=rng.randint(6, 14))
            if rng.random() < 0.4:
                words.insert(rng.randint(0, len(words)), rng.choice(TOPICS))
            msgs.append({"role": "user", "name": rng.choice(["ann", "bob"]), "content": " ".join(words)})
        mem.ingest("conversation", {"title": f"conv {c}", "messages": msgs})
    return [rng.choice(TOPICS) + " " + rng.choice(vocab) for _ in range(12)]


def _ranked(mem: Memory, queries: list[str], unit: str) -> list[list[Any]]:
    out = []
    for q in queries:
        res = mem.query("search", {"query": q}, {"result_unit": unit, "max_items": 10, "detail": "full"})
        out.append([(i.get("id"), i.get("segment_id"), i.get("rank_score")) for i in res["items"]])
    return out


@pytest.mark.skipif(not vector_topk.available(), reason="simsimd is not installed")
@pytest.mark.parametrize("unit", ["segment", "object"])
def test_fast_vector_path_ranks_like_the_reference(
    make_settings: Any, namespace: str, monkeypatch: pytest.MonkeyPatch, unit: str
) -> None:
    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    try:
        queries = _fill(mem)
        monkeypatch.setattr(vector_topk, "QUANTISE_FROM", 10**9)
        reference = _ranked(mem, queries, unit)
        monkeypatch.setattr(vector_topk, "QUANTISE_FROM", 1)
        first = _ranked(mem, queries, unit)  # the first search of a matrix version scans plainly
        calls = []
        real = vector_topk.top_k

        def counted(*a: Any) -> Any:
            calls.append(a[1] is not None)
            return real(*a)

        monkeypatch.setattr(vector_topk, "top_k", counted)
        fast = _ranked(mem, queries, unit)
    finally:
        mem.close()
    assert any(r for r in reference), "the corpus must give results"
    assert first == reference
    assert fast == reference
    if mem.store.backend == "sqlite":
        assert calls and all(calls), "the int8 path must have served every vector search"
