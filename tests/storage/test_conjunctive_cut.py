"""A segment search whose every word is common ranks the rows holding all its words first
(``storage/conjunctive.py``), on every backend, without ranking every row that holds one of them.

The store holds 1,200 turns: 300 short ones each for "alpha", "beta" and "gamma" (25% of the
turns each, so every query word is common) and five turns holding all three. Ranking only the
rarest word's rows, as the search did before, put those five behind hundreds of shorter "alpha"
turns (BM25 favours short rows when it counts one word).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from memory_substrate.storage.base import Store
from memory_substrate.storage.conjunctive import conjunctive_groups
from memory_substrate.text import index_text
from tests.storage.builders import seg

WORDS = ["alpha", "beta", "gamma"]
ALL_THREE = {f"seg-{n}" for n in range(901, 906)}


def _fill(store: Store, namespace: str) -> None:
    rows = []
    for n in range(1, 1201):
        if n <= 900:
            text = f"{WORDS[(n - 1) // 300]} w{n}"
        elif f"seg-{n}" in ALL_THREE:
            text = f"alpha beta gamma w{n}"
        else:
            text = f"other w{n}"
        rows.append((seg(f"src:{n % 7}", n, text), index_text(text), ""))
    with store.write(namespace) as s:
        s.insert_segments(rows)


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The cut's budget at this store's scale (it is sized for stores of 100k+ rows)."""
    monkeypatch.setattr("memory_substrate.storage.sqlite.fulltext.RANK_BUDGET", 100)
    yield


def test_rows_holding_every_word_come_first(store: Store, namespace: str, small_budget: None) -> None:
    _fill(store, namespace)
    with store.read(namespace) as s:
        if hasattr(s, "term_stats"):  # PostgreSQL plans from ANALYZE's statistics: give it this store's
            from memory_substrate.storage.postgres.fts_plan import TermStats, _Stats

            s.term_stats = TermStats(budget=100, ttl_s=1e9)
            s.term_stats._stats = _Stats(
                read_at=time.monotonic(), rows=1200.0, lexeme_freq={w: 0.25 for w in WORDS}, floor=0.001,
                namespace_freq={namespace: 1.0},
            )
            asked: list[str] = []
            rank = s._rank_segments
            s._rank_segments = lambda query, match, limit, **kw: asked.append(match) or rank(query, match, limit, **kw)
        hits = s.search_segments_text(WORDS, limit=5)
        if hasattr(s, "term_stats"):  # only the rows holding every word were ranked
            assert asked == ["('alpha' & 'beta' & 'gamma')"]
        fewer = s.search_segments_text(WORDS, limit=2)
        # Too few rows hold every word for the page: the rest come from the rows holding one.
        wide = s.search_segments_text(WORDS, limit=40)
    assert {h.segment_id for h in hits} == ALL_THREE
    assert {h.segment_id for h in fewer} <= ALL_THREE and len(fewer) == 2
    assert {h.segment_id for h in wide[:5]} == ALL_THREE
    assert len(wide) == 40 and len({h.segment_id for h in wide}) == 40


def test_groups_all_terms_then_all_but_one() -> None:
    rows = {"a": 300, "b": 100, "c": 200, "none": 0, "most": 900}
    assert conjunctive_groups(rows, 1000) == [[["b", "c", "a"]], [["c", "a"], ["b", "a"], ["b", "c"]]]
    assert conjunctive_groups({"a": 300, "b": 100}, 1000) == [[["b", "a"]]]  # two terms: no "all but one"
    assert conjunctive_groups({"a": 300, "most": 900}, 1000) == []  # one usable term: nothing to intersect
    many = {f"t{i}": 10 + i for i in range(10)}
    assert conjunctive_groups(many, 1000)[0] == [[f"t{i}" for i in range(6)]]  # the six rarest
