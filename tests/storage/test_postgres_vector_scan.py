"""A filtered HNSW search on PostgreSQL visits a bounded number of index entries.

One index per dimension holds every owner type, so a search for a rare type (object vectors
among a million turns') walked up to pgvector's default 20,000 entries, ~100 ms, usually to find
none (docs/benchmarks.md, "Conjunction first"). The bound is set for the search's transaction.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from memory_substrate.storage.postgres.reads import MAX_SCAN_TUPLES
from memory_substrate.storage.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg(postgres_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(postgres_url, idle_build_s=None)
    try:
        yield store
    finally:
        store.close()


def test_a_vector_search_bounds_the_entries_it_visits(pg: PostgresStore, namespace: str) -> None:
    with pg.read(namespace) as s:
        if not s.iterative_scan:
            pytest.skip("pgvector before 0.8 has no iterative scan to bound")
        assert s.vector_search("m", np.ones(8, dtype=np.float32), owner_type="object", limit=10) == []
        assert s.conn.execute("SHOW hnsw.max_scan_tuples").fetchone()[0] == str(MAX_SCAN_TUPLES)
        assert s.conn.execute("SHOW hnsw.iterative_scan").fetchone()[0] == "strict_order"
