"""rank_segments / analyse_query on tiny hand-made conversations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, cast

import numpy as np
import pytest

from memory_substrate.embed import StaticEmbedder
from memory_substrate.retrieval import (
    RankConfig,
    RankedSegment,
    RankSegment,
    TermStats,
    analyse_query,
    rank_segments,
)
from memory_substrate.retrieval.terms import index_terms


class TinyStore:
    """Just enough of a store: term-overlap lexical hits, neighbours by position, term stats."""

    def __init__(
        self, turns: list[tuple[str, str]], *, source: str = "conv1", dates: list[datetime] | None = None
    ):
        self.segs = [
            RankSegment(
                id=f"s{i}",
                text=text,
                source_id=source,
                index=i,
                speaker=speaker,
                created_at=dates[i] if dates else datetime(2023, 1, 1),
            )
            for i, (speaker, text) in enumerate(turns)
        ]
        self.by_id = {s.id: s for s in self.segs}

    def lexical(self, terms: Sequence[str], n: int = 50) -> list[tuple[str, float]]:
        scored = []
        for s in self.segs:
            overlap = len(set(terms) & set(index_terms(s.text)))
            if overlap:
                scored.append((s.id, float(overlap)))
        scored.sort(key=lambda x: (-x[1], x[0]))
        return scored[:n]

    def fetch(self, ids: Sequence[str]) -> dict[str, RankSegment]:
        return {i: self.by_id[i] for i in ids if i in self.by_id}

    def neighbours(self, ids: Sequence[str], before: int, after: int) -> dict[str, list[RankSegment]]:
        out = {}
        for i in ids:
            k = self.segs.index(self.by_id[i])
            out[i] = self.segs[max(0, k - before) : k + after + 1]
        return out

    def term_stats(self, terms: Sequence[str]) -> TermStats:
        return TermStats(len(self.segs), {t: sum(t in index_terms(s.text) for s in self.segs) for t in terms})

    def rank(self, query: str, **kw: Any) -> list[RankedSegment]:
        a = analyse_query(query, sorted({s.speaker for s in self.segs if s.speaker}))
        return rank_segments(
            a,
            self.lexical(a.terms),
            kw.pop("vector_hits", []),
            self.fetch,
            fetch_neighbours=kw.pop("fetch_neighbours", self.neighbours),
            term_stats=self.term_stats,
            **kw,
        )


CHAT = [
    ("Alice", "Hi Bob! Long time no see."),
    ("Bob", "Hey Alice, how was your trip to the mountains?"),
    ("Alice", "Great! I adopted a kitten on the way back."),
    ("Bob", "Alice, you always loved cats. Alice is a cat person, everyone knows that."),
    ("Bob", "I started pottery classes last week."),
    ("Alice", "Pottery sounds fun. How often do you go?"),
    ("Bob", "Twice a week, on Tuesdays and Fridays."),
    ("Alice", "Nice. I should try that too."),
]


def test_analyse_query_separates_participants_and_periods() -> None:
    a = analyse_query("What did Alice's brother adopt in May 2023?", ["Alice", "Bob"])
    assert a.speakers == ["Alice"]
    assert "alice" not in a.terms and "brother" in a.terms and "adopt" in a.terms
    assert [p.text for p in a.periods] == ["May 2023"]
    assert a.terms[0] == "brother"
    b = analyse_query("What will Will do?", ["Will", "Ann"])
    assert b.speakers == ["Will"] and b.content == "What will do?"  # the modal stays, the name goes
    assert analyse_query("what will we do?", ["Will"]).speakers == []


def test_named_speakers_own_turn_beats_turns_addressed_to_them() -> None:
    store = TinyStore(CHAT)
    ranked = store.rank("What pet did Alice adopt?")
    assert ranked[0].segment_id == "s2"
    feats = {r.segment_id: r.features for r in ranked}
    assert feats["s2"]["speaker"] == 1.0 and feats["s3"]["speaker"] == 0.0
    # the name is not a content term: the turn repeating "Alice" gets no lexical credit for it
    plain = analyse_query("What pet did Alice adopt?", [])
    assert "alic" in plain.terms
    solo = RankConfig(window_before=0, window_after=0, neighbour_candidates=0)
    blind = rank_segments(plain, store.lexical(plain.terms), [], store.fetch, config=solo)
    named = rank_segments(
        analyse_query("What pet did Alice adopt?", ["Alice", "Bob"]),
        store.lexical(plain.terms),
        [],
        store.fetch,
        config=solo,
    )
    lex: Callable[[list[RankedSegment], str], float] = lambda rs, sid: next(  # noqa: E731
        r.features["lexical"] for r in rs if r.segment_id == sid
    )
    assert lex(blind, "s3") > 0.0 and lex(named, "s3") == 0.0


def test_short_answer_found_through_its_context() -> None:
    store = TinyStore(CHAT)
    ranked = store.rank("How often does Bob go to pottery?")
    ids = [r.segment_id for r in ranked]
    assert "s6" in ids[:2]  # "Twice a week" has no query word; its window has
    r6 = next(r for r in ranked if r.segment_id == "s6")
    assert r6.retrieval_sources == ["context"] and r6.retrieval_ranks == {}
    # no neighbour access: the answer turn cannot be found
    alone = store.rank("How often does Bob go to pottery?", fetch_neighbours=None)
    assert "s6" not in [r.segment_id for r in alone]


def test_time_expression_prefers_segments_from_that_period() -> None:
    turns = [("Ann", "We went hiking in the hills."), ("Ann", "We went hiking in the hills.")]
    store = TinyStore(turns, dates=[datetime(2023, 2, 10), datetime(2023, 5, 12)])
    assert store.rank("Where did Ann go hiking in May 2023?")[0].segment_id == "s1"
    assert store.rank("Where did Ann go hiking in February 2023?")[0].segment_id == "s0"


def test_result_fields_and_limits() -> None:
    store = TinyStore(CHAT)
    vec_hits = [("s4", 0.9), ("s2", 0.5)]
    ranked = store.rank("pottery classes", vector_hits=vec_hits, limit=3)
    assert len(ranked) == 3
    assert ranked[0].rank_score >= ranked[1].rank_score >= ranked[2].rank_score
    top = ranked[0]
    assert top.segment_id == "s4"
    assert top.retrieval_sources == ["lexical", "semantic"]
    assert top.retrieval_ranks["semantic"] == 1 and top.retrieval_ranks["lexical"] >= 1
    assert top.lexical_score is not None and top.semantic_score == pytest.approx(0.9)
    d = top.as_dict()
    assert set(d) == {
        "segment_id",
        "rank_score",
        "retrieval_sources",
        "retrieval_ranks",
        "lexical_score",
        "semantic_score",
    }


def test_no_candidates_gives_empty_list() -> None:
    store = TinyStore(CHAT)
    assert rank_segments("zebra", [], [], store.fetch) == []
    assert store.rank("zebra quantum") == []


def test_deterministic_order() -> None:
    store = TinyStore(CHAT)
    a = [r.segment_id for r in store.rank("Alice trip mountains cats")]
    b = [r.segment_id for r in store.rank("Alice trip mountains cats")]
    assert a == b


def test_semantic_scores_from_embedder_and_vectors() -> None:
    emb = StaticEmbedder()
    turns = [
        ("Ann", "I adore my new puppy, he is so playful."),
        ("Ann", "The quarterly budget is overdue."),
        ("Ann", "Let us meet at noon."),
    ]
    store = TinyStore(turns)
    vecs = emb.embed_documents([t for _, t in turns])
    store.segs = [
        RankSegment(s.id, s.text, s.source_id, s.index, s.created_at, s.speaker, vector=v)
        for s, v in zip(store.segs, vecs, strict=True)
    ]
    store.by_id = {s.id: s for s in store.segs}
    q = "my dog"
    qv = emb.embed_query(q)
    vec_hits = sorted(
        ((s.id, float(cast(np.ndarray, s.vector) @ qv)) for s in store.segs), key=lambda x: -x[1]
    )
    ranked = rank_segments(q, [], vec_hits, store.fetch, query_vector=qv)
    assert ranked[0].segment_id == "s0"
    assert ranked[0].semantic_score == pytest.approx(float(vecs[0] @ qv), abs=1e-5)
    # same ranking when the ranker embeds texts itself (no stored vectors)
    plain = TinyStore(turns)
    ranked2 = rank_segments(q, [], vec_hits, plain.fetch, embedder=emb)
    assert [r.segment_id for r in ranked2] == [r.segment_id for r in ranked]


def test_idf_fallback_without_term_stats() -> None:
    store = TinyStore(CHAT)
    a = analyse_query("Bob pottery", ["Alice", "Bob"])
    ranked = rank_segments(a, store.lexical(a.terms), [], store.fetch, fetch_neighbours=store.neighbours)
    ids = [r.segment_id for r in ranked]
    assert "s4" in ids[:2]
    with_stats = store.rank("Bob pottery")
    assert {r.segment_id for r in with_stats[:3]} == set(ids[:3])


def test_rrf() -> None:
    from memory_substrate.search.fusion import rrf  # the one fusion

    fused = rrf({"x": [("a", 1.0), ("b", 0.5), ("c", 0.1)], "y": [("b", 1.0), ("c", 0.5), ("a", 0.1)]})
    assert fused[0].key == "b"
    assert np.isclose(sum(f.rank_score for f in fused), 2 * (1 / 61 + 1 / 62 + 1 / 63))
