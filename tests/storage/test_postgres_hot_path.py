"""PostgreSQL hot-path details: COPY stages stay empty between writes, light reads keep NULs, a
filtered vector search visits a bounded number of index entries."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from memory_substrate.storage.postgres.reads import MAX_SCAN_TUPLES
from memory_substrate.storage.postgres.store import PostgresStore
from tests.storage.builders import seg, seg_row

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg(postgres_url: str) -> Iterator[PostgresStore]:
    # One pooled connection: every session below runs on it, temp tables included.
    store = PostgresStore(postgres_url, min_size=1, max_size=1, idle_build_s=None)
    try:
        yield store
    finally:
        store.close()


def _stage_pages(pg: PostgresStore) -> dict[str, int]:
    with pg._pool.connection() as conn:
        rows = conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid) / current_setting('block_size')::int FROM pg_class c "
            "WHERE c.relname IN ('segments_stage', 'vectors_stage') AND c.relpersistence = 't' "
            "AND pg_table_is_visible(c.oid)"
        ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


def test_copy_stages_are_truncated_at_commit(pg: PostgresStore, namespace: str) -> None:
    """Temp tables are never vacuumed: a stage emptied by DELETE kept every row it ever held as a
    dead tuple, and each later write scanned them all (ingest ~3x slower by 100k turns)."""
    rng = np.random.default_rng(1)
    for batch in range(3):
        rows = [seg_row(seg(f"src:{batch}", n, f"turn {n} of {batch}")) for n in range(1, 101)]
        vectors = [(f"src:{batch}#seg-{n}", rng.normal(size=8).astype(np.float32)) for n in range(1, 101)]
        with pg.write(namespace) as s:
            s.insert_segments(rows)
            s.upsert_vectors("m", "segment", vectors)
            s.upsert_vectors("m", "object", [(f"src:{batch}", rng.normal(size=8).astype(np.float32))])
        assert _stage_pages(pg) == {"segments_stage": 0, "vectors_stage": 0}
    with pg.read(namespace) as s:
        assert s.count_segments() == 300
        # two stagings in one transaction stay apart: each call upserts its own rows only
        assert s.vector_stats() == {"segment:m": 300, "object:m": 3}


def test_rolled_back_stage_rows_never_reach_a_later_write(pg: PostgresStore, namespace: str) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom), pg.write(namespace) as s:
        s.upsert_vectors("m", "segment", [(f"x#seg-{n}", np.ones(8, dtype=np.float32)) for n in range(80)])
        raise Boom
    with pg.write(namespace) as s:
        s.upsert_vectors("m", "segment", [("y#seg-1", np.ones(8, dtype=np.float32))])
    with pg.read(namespace) as s:
        assert s.vector_stats() == {"segment:m": 1}
    assert _stage_pages(pg)["vectors_stage"] == 0


def test_nul_characters_survive_light_reads(pg: PostgresStore, namespace: str) -> None:
    """Light reads decode the JSON texts of all rows at once; NUL escapes decode like the rest."""
    with pg.write(namespace) as s:
        s.insert_segments([seg_row(seg("src:1", 1, "a\x00b")), seg_row(seg("src:1", 2, "plain"))])
    with pg.read(namespace) as s:
        light = s.segment_windows([("src:1", 0, 5)], light=True)
        by_keys = s.get_segments_by_keys([("src:1", "seg-1")], light=True)
    assert sorted(g.text for g in light) == ["a\x00b", "plain"]
    assert [g.text for g in by_keys] == ["a\x00b"]


def test_a_vector_search_bounds_the_entries_it_visits(pg: PostgresStore, namespace: str) -> None:
    """One index per dimension holds every owner type, so a search for a rare type (object vectors
    among a million turns') walked up to pgvector's default 20,000 entries, ~100 ms, usually to
    find none (docs/postgres.md). The bound is set for the search's transaction."""
    with pg.read(namespace) as s:
        if not s.iterative_scan:
            pytest.skip("pgvector before 0.8 has no iterative scan to bound")
        assert s.vector_search("m", np.ones(8, dtype=np.float32), owner_type="object", limit=10) == []
        assert s.conn.execute("SHOW hnsw.max_scan_tuples").fetchone()[0] == str(MAX_SCAN_TUPLES)
        assert s.conn.execute("SHOW hnsw.iterative_scan").fetchone()[0] == "strict_order"
