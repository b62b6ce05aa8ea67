"""Segment full-text hits are this namespace's (and these sources') best, in score order, however
many better matches other namespaces hold: a smaller ``limit`` gives a prefix of a larger one.
Both backends (the SQLite store ranks inside FTS5 and looks up only as many of the ranked rows
as it needs, falling back to ranking every match when other namespaces crowd them out)."""

from __future__ import annotations

from memory_substrate.storage.base import Store
from tests.storage.builders import seg, seg_row


def test_segment_hits_are_the_namespaces_best_in_order(store: Store, namespace: str) -> None:
    other = namespace + "-other"
    with store.write(other) as s:  # 30 strong matches in another namespace
        s.insert_segments([seg_row(seg("src:o", i, " ".join(["kafka"] * 40))) for i in range(1, 31)])
    with store.write(namespace) as s:  # 18 weaker ones here, each as strong as its count (no ties)
        s.insert_segments(
            [seg_row(seg(f"src:m{1 + i % 2}", i, " ".join(["kafka"] * i))) for i in range(1, 19)]
        )
    with store.read(namespace) as s:
        every = s.search_segments_text(["kafka"], limit=50)
        keys = [(h.source_id, h.segment_id) for h in every]
        assert len(keys) == 18 and {src for src, _ in keys} == {"src:m1", "src:m2"}
        assert [h.score for h in every] == sorted((h.score for h in every), reverse=True)
        assert len({h.score for h in every}) == 18
        for limit in (1, 5, 10, 17):
            got = s.search_segments_text(["kafka"], limit=limit)
            assert [(h.source_id, h.segment_id, h.score) for h in got] == [
                (h.source_id, h.segment_id, h.score) for h in every[:limit]
            ], limit
        m2 = [h for h in every if h.source_id == "src:m2"]
        for limit in (3, 9, 20):
            got = s.search_segments_text(["kafka"], limit=limit, source_ids=["src:m2"])
            assert [(h.segment_id, h.score) for h in got] == [(h.segment_id, h.score) for h in m2[:limit]], (
                limit
            )
        assert s.search_segments_text(["kafka"], limit=0) == []
    with store.read(other) as s:
        assert {h.source_id for h in s.search_segments_text(["kafka"], limit=50)} == {"src:o"}
