"""``fetch_vectors``: the ranker asks the store for the vectors of its candidates only, once,
and ranks exactly as when every segment came with its vector."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from memory_substrate.retrieval import RankConfig, RankedSegment, RankSegment, rank_segments

TEXTS = [
    "the deployment pipeline failed on friday",
    "we rolled back the release",
    "lunch was pasta again",
    "the cache eviction policy changed",
    "nobody noticed the memory leak",
    "weekend plans involve hiking",
    "the deployment pipeline is green now",
    "search latency doubled after the change",
    "the vector index needs a rebuild",
    "coffee machine is broken",
    "the release schedule slipped a week",
    "graph traversal got faster",
]


def _segments() -> list[RankSegment]:
    rng = np.random.default_rng(7)
    out = []
    for i, text in enumerate(TEXTS):
        v = rng.normal(size=16).astype(np.float32)
        out.append(RankSegment(id=f"c#s{i}", text=text, source_id="c", index=i, vector=v / np.linalg.norm(v)))
    return out


def _index(s: RankSegment) -> int:
    assert s.index is not None
    return s.index


def _rank(segs: list[RankSegment], **kw: Any) -> list[RankedSegment]:
    by_id = {s.id: s for s in segs}

    def fetch(ids: Sequence[str]) -> dict[str, RankSegment]:
        return {i: by_id[i] for i in ids if i in by_id}

    def neighbours(ids: Sequence[str], before: int, after: int) -> dict[str, list[RankSegment]]:
        return {
            i: [s for s in segs if _index(by_id[i]) - before <= _index(s) <= _index(by_id[i]) + after]
            for i in ids
        }

    qv = np.ones(16, dtype=np.float32) / 4.0
    lexical = [("c#s0", 3.0), ("c#s6", 2.5)]
    vector = [("c#s8", 0.9)]
    return rank_segments(
        "deployment pipeline",
        lexical,
        vector,
        fetch,
        fetch_neighbours=neighbours,
        query_vector=qv,
        config=RankConfig(),
        limit=20,
        **kw,
    )


def test_fetch_vectors_ranks_as_vectors_on_segments_and_asks_for_candidates_only() -> None:
    segs = _segments()
    with_vectors = _rank(segs)
    asked: list[list[str]] = []
    stored = {s.id: s.vector for s in segs}

    def fetch_vectors(ids: Sequence[str]) -> dict[str, Any]:
        asked.append(list(ids))
        return {i: stored[i] for i in ids}

    bare = [replace(s, vector=None) for s in segs]
    fetched = _rank(bare, fetch_vectors=fetch_vectors)
    assert [(r.segment_id, round(r.rank_score, 9), r.semantic_score) for r in fetched] == [
        (r.segment_id, round(r.rank_score, 9), r.semantic_score) for r in with_vectors
    ]
    assert len(asked) == 1  # one read for every candidate
    candidates = {r.segment_id for r in with_vectors}
    assert set(asked[0]) == candidates
    # the windows hold more turns than there are candidates; their vectors are not read
    assert len(candidates) < len(TEXTS)


def test_fetch_vectors_missing_vector_falls_back_as_before() -> None:
    bare = [replace(s, vector=None) for s in _segments()]
    without = _rank(bare)  # no vectors at all: the vector stream's score stands in
    none_found = _rank(bare, fetch_vectors=lambda ids: {})
    assert [(r.segment_id, r.rank_score) for r in none_found] == [
        (r.segment_id, r.rank_score) for r in without
    ]
