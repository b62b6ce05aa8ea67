"""PostgreSQL segment full-text stream on large namespaces: common terms do not make candidates.

The fast path (``fts_plan.py``) must return what the plain query (rank every match) returns
whenever the rows holding a selective term fill the page, and fill the rest from rows holding
only common terms otherwise. Statistics are injected so the tests do not depend on when
autovacuum analyses the shared test database; one test reads the real ``pg_stats``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from memory_substrate.storage.postgres.fts import tsquery
from memory_substrate.storage.postgres.fts_plan import TermStats, _Stats
from memory_substrate.storage.postgres.store import PostgresStore
from memory_substrate.text import index_text
from tests.storage.builders import seg

pytestmark = pytest.mark.postgres

ROWS = 300
RARE = 20  # rows holding "zzrare" (every row holds "zzcommon")


@pytest.fixture
def pg(postgres_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(postgres_url, idle_build_s=None)
    try:
        yield store
    finally:
        store.close()


def _fill(pg: PostgresStore, namespace: str) -> None:
    rows = []
    for n in range(1, ROWS + 1):
        words = ["zzcommon"] * (1 + n % 3) + ["filler", f"w{n}"]
        if n % (ROWS // RARE) == 0:
            words.append("zzrare")
        text = " ".join(words)
        rows.append((seg(f"src:{n % 7}", n, text), index_text(text), ""))
    with pg.write(namespace) as s:
        s.insert_segments(rows)


def _stats(namespace: str, budget: int) -> TermStats:
    """Statistics as ANALYZE would gather them for this namespace alone, never re-read."""
    stats = TermStats(budget=budget, ttl_s=1e9)
    stats._stats = _Stats(
        read_at=time.monotonic(),
        rows=float(ROWS),
        lexeme_freq={"zzcommon": 1.0, "filler": 1.0},
        floor=0.01,
        namespace_freq={namespace: 1.0},
    )
    return stats


def _keys(hits: list[Any]) -> list[tuple[str, str, float]]:
    return [(h.source_id, h.segment_id, round(h.score, 6)) for h in hits]


def test_selective_terms_rarest_first_within_budget() -> None:
    stats = _stats("ns", budget=50)
    assert stats.selective(None, "ns", ["zzcommon", "zzrare", "w1"]) == (["zzrare", "w1"], ["zzcommon"])  # type: ignore[arg-type]
    # the rarest term is always taken, even over the budget
    assert stats.selective(None, "ns", ["zzcommon", "filler"]) == (["filler"], ["zzcommon"])  # type: ignore[arg-type]
    # a namespace within the budget, or no statistics: every term (the plain query)
    assert _stats("ns", budget=ROWS).selective(None, "ns", ["zzcommon", "zzrare"]) == (  # type: ignore[arg-type]
        ["zzcommon", "zzrare"],
        [],
    )
    other = _stats("ns", budget=50)
    other._stats.namespace_freq = {"ns": 0.1}  # 30 rows: within the budget
    assert other.selective(None, "ns", ["zzcommon", "zzrare"]) == (["zzcommon", "zzrare"], [])  # type: ignore[arg-type]
    none = TermStats(budget=50, ttl_s=1e9)
    none._stats = _Stats(read_at=time.monotonic())
    assert none.selective(None, "ns", ["zzcommon", "zzrare"]) == (["zzcommon", "zzrare"], [])  # type: ignore[arg-type]


def test_fast_path_equals_plain_ranking_when_selective_rows_fill_the_page(
    pg: PostgresStore, namespace: str
) -> None:
    _fill(pg, namespace)
    terms = ["zzrare", "zzcommon"]
    with pg.read(namespace) as s:
        plain = s._rank_segments(tsquery(terms), tsquery(terms), 10)
        s.term_stats = _stats(namespace, budget=50)
        assert s.term_stats.selective(s.conn, namespace, terms)[1] == ["zzcommon"]  # the fast path runs
        fast = s.search_segments_text(terms, limit=10)
    assert len(fast) == 10
    assert _keys(fast) == _keys(plain)


def test_fast_path_fills_from_common_rows_when_selective_rows_are_too_few(
    pg: PostgresStore, namespace: str
) -> None:
    _fill(pg, namespace)
    terms = ["zzrare", "zzcommon"]
    with pg.read(namespace) as s:
        plain = s._rank_segments(tsquery(terms), tsquery(terms), 40)
        # A cap above the common rows: the fill ranks them all, so the answer is the plain one.
        s.term_stats = _stats(namespace, budget=ROWS)
        s.term_stats._stats.rows = ROWS * 2.0  # the namespace looks bigger than the budget
        assert s.term_stats.selective(s.conn, namespace, terms)[1] == ["zzcommon"]
        fast = s.search_segments_text(terms, limit=40)
        assert _keys(fast) == _keys(plain)
        # A small cap: the selective rows first (all of them), then common-only rows from the capped scan.
        s.term_stats = _stats(namespace, budget=30)
        capped = s.search_segments_text(terms, limit=40)
        rare_rows = {
            (h.source_id, h.segment_id) for h in s._rank_segments(tsquery(terms), tsquery(["zzrare"]), 100)
        }
    assert len(rare_rows) == RARE
    assert {(h.source_id, h.segment_id) for h in capped[:RARE]} == rare_rows
    assert _keys(capped[:RARE]) == _keys(plain[:RARE])
    assert len(capped) == 40 and len({(h.source_id, h.segment_id) for h in capped}) == 40
    assert all((h.source_id, h.segment_id) not in rare_rows for h in capped[RARE:])


def test_source_filter_ranks_every_match(pg: PostgresStore, namespace: str) -> None:
    _fill(pg, namespace)
    terms = ["zzrare", "zzcommon"]
    with pg.read(namespace) as s:
        s.term_stats = _stats(namespace, budget=5)
        hits = s.search_segments_text(terms, limit=500, source_ids=["src:1"])
        plain = s._rank_segments(
            tsquery(terms), tsquery(terms), 500, extra=" AND s.source_id = ANY(%s)", extra_params=[["src:1"]]
        )
    assert _keys(hits) == _keys(plain)
    assert len(hits) == len([n for n in range(1, ROWS + 1) if n % 7 == 1])


def test_statistics_are_read_from_pg_stats(pg: PostgresStore, namespace: str, postgres_url: str) -> None:
    _fill(pg, namespace)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("ANALYZE segment_search")
    with pg.read(namespace) as s:
        stats = TermStats()._current(s.conn)
    assert stats.rows >= ROWS
    assert stats.lexeme_freq.get("zzcommon", 0.0) > stats.floor > 0.0
    assert stats.namespace_freq.get(namespace, 0.0) > 0.0 or stats.other_namespace_freq > 0.0
