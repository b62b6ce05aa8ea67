"""A segment search whose every word is common ranks the rows holding all its words first
(``storage/conjunctive.py``), on every backend, without ranking every row that holds one of them.

The store holds 1,200 turns: 250 short ones each for "alpha", "beta" and "gamma" (21% of the
turns each, so every query word is common) and five turns holding all three. Ranking only the
rarest word's rows, as the search did before, put those five behind hundreds of shorter "alpha"
turns (BM25 favours short rows when it counts one word).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from memory_substrate.storage.base import Store
from memory_substrate.storage.conjunctive import conjunctive_groups, words_of
from memory_substrate.text import index_text
from tests.storage.builders import seg

WORDS = ["alpha", "beta", "gamma"]
ALL_THREE = {f"seg-{n}" for n in range(901, 906)}


def _fill(store: Store, namespace: str) -> None:
    rows = []
    for n in range(1, 1201):
        if n <= 750:
            text = f"{WORDS[(n - 1) // 250]} w{n}"
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
            _pg_stats(s, namespace, {w: 0.21 for w in WORDS})
            asked: list[str] = []
            pg: Any = s  # a PostgreSQL session: its private ranking step is wrapped to watch it
            rank = pg._rank_segments

            def ranked(query: Any, match: Any, limit: Any, **kw: Any) -> Any:
                asked.append(match)
                return rank(query, match, limit, **kw)

            pg._rank_segments = ranked
        hits = s.search_segments_text(WORDS, limit=5)
        if hasattr(s, "term_stats"):  # only the rows holding every word were ranked
            assert asked == ["(('alpha') & ('beta') & ('gamma'))"]
        fewer = s.search_segments_text(WORDS, limit=2)
        # Too few rows hold every word for the page: the rest come from the rows holding one.
        wide = s.search_segments_text(WORDS, limit=40)
    assert {h.segment_id for h in hits} == ALL_THREE
    assert {h.segment_id for h in fewer} <= ALL_THREE and len(fewer) == 2
    assert {h.segment_id for h in wide[:5]} == ALL_THREE
    assert len(wide) == 40 and len({h.segment_id for h in wide}) == 40


def _pg_stats(s: object, namespace: str, freq: dict[str, float]) -> None:
    from memory_substrate.storage.postgres.fts_plan import TermStats, _Stats

    stats = TermStats(budget=100, ttl_s=1e9)
    stats._stats = _Stats(
        read_at=time.monotonic(), rows=1200.0, lexeme_freq=freq, floor=0.001, namespace_freq={namespace: 1.0}
    )
    s.term_stats = stats  # type: ignore[attr-defined]


def test_one_common_word_ranks_a_bounded_share(store: Store, namespace: str, small_budget: None) -> None:
    """One word in 250 rows, a budget of 100: the page comes from 100 of them, not all 250
    (SQLite: the newest)."""
    _fill(store, namespace)
    with store.read(namespace) as s:
        caps: list[int | None] = []
        if hasattr(s, "term_stats"):
            _pg_stats(s, namespace, {"alpha": 0.21})
            pg: Any = s  # a PostgreSQL session: its private ranking step is wrapped to watch it
            rank = pg._rank_segments

            def ranked(query: Any, match: Any, limit: Any, **kw: Any) -> Any:
                caps.append(kw.get("cap"))
                return rank(query, match, limit, **kw)

            pg._rank_segments = ranked
        hits = s.search_segments_text(["alpha"], limit=5)
    assert len(hits) == 5
    if caps:
        assert caps == [100]
    else:
        assert all(150 < int(h.segment_id.removeprefix("seg-")) <= 250 for h in hits)


def test_words_and_groups() -> None:
    assert words_of(["booked", "book", "may", "beehiv", "beehive"]) == [
        ("may",),
        ("book", "booked"),
        ("beehiv", "beehive"),
    ]
    rows = {"a": 200, "b": 100, "c": 150, "none": 0, "most": 300}
    a, b, c = ("a",), ("b",), ("c",)
    assert conjunctive_groups(rows, 1000) == [[[b, c, a]], [[c, a], [b, a], [b, c]]]
    assert conjunctive_groups({"a": 200, "b": 100}, 1000) == [[[b, a]]]  # two words: no "all but one"
    assert conjunctive_groups({"a": 200, "most": 300}, 1000) == []  # one usable word: nothing to intersect
    # a word and its stem are one word, asked for by its commonest and its longest form
    assert conjunctive_groups({"booked": 90, "book": 120, "may": 100}, 1000) == [
        [[("may",), ("book", "booked")]]
    ]
    assert conjunctive_groups({"beehive": 90, "beehiv": 90}, 1000) == []
    # a compound and its heads (German analysis indexes them all): one word, two forms asked
    assert words_of(["fensterplatz", "terplatz", "platz", "eiche"]) == [
        ("eiche",),
        ("platz", "terplatz", "fensterplatz"),
    ]
    assert conjunctive_groups({"fensterplatz": 120, "terplatz": 120, "platz": 130, "eiche": 100}, 1000) == [
        [[("eiche",), ("platz", "fensterplatz")]]
    ]
    # two words the grouping joins (car, carpet) are asked for as either: a row holding only
    # "carpet" still matches
    assert conjunctive_groups({"car": 150, "carpet": 60, "clean": 100}, 1000) == [
        [[("clean",), ("car", "carpet")]]
    ]
    many = {f"t{i}x": 10 + i for i in range(10)}
    assert conjunctive_groups(many, 1000)[0] == [[(f"t{i}x",) for i in range(6)]]  # the six rarest


def test_postgres_queries_of_groups() -> None:
    from memory_substrate.storage.postgres.fts import tsquery_groups

    assert tsquery_groups([[("car", "carpet"), ("clean",)], [("it's",)]]) == (
        "(('car' | 'carpet') & ('clean')) | (('it''s'))"
    )


def test_rare_terms_over_the_budget_together_rank_every_match(
    store: Store, namespace: str, small_budget: None
) -> None:
    """Three words each under the budget whose rows together are over it: no row holds two of
    them, so the OR query ranks every match, as without the conjunction (no newest-rows cut)."""
    rows = []
    for n in range(1, 1201):
        word = "sigma" if n <= 5 else "delta" if n <= 65 else "omega" if n <= 125 else "other"
        text = f"{word} w{n}"
        rows.append((seg(f"src:{n % 7}", n, text), index_text(text), ""))
    with store.write(namespace) as s:
        s.insert_segments(rows)
    with store.read(namespace) as s:
        caps: list[int | None] = []
        if hasattr(s, "term_stats"):
            _pg_stats(s, namespace, {"delta": 0.05, "omega": 0.05, "sigma": 0.004})
            pg: Any = s  # a PostgreSQL session: its private ranking step is wrapped to watch it
            rank = pg._rank_segments

            def ranked(query: Any, match: Any, limit: Any, **kw: Any) -> Any:
                caps.append(kw.get("cap"))
                return rank(query, match, limit, **kw)

            pg._rank_segments = ranked
        hits = s.search_segments_text(["delta", "omega", "sigma"], limit=5)
    if caps:  # ts_rank has no idf to tell the rows apart: check that the selective rows were not capped
        assert caps[0] is None
    else:  # the rarest word scores highest, and its rows are the oldest: a newest-rows cut loses them
        assert {h.segment_id for h in hits} == {f"seg-{n}" for n in range(1, 6)}
