"""Schema v9 on a store built before it: segment tsvectors move to ``segment_search``, and the
full-precision HNSW index keeps serving until the next build replaces it with a half-precision
one. Answers stay the same throughout.

The store is built with today's code in a database of its own, then taken back to the v8 layout
(tsvector column and GIN index on ``segments``, a ``vector``-typed HNSW index, no
``vector_indexes.halfvec``) and reopened.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from memory_substrate import Memory, Settings
from memory_substrate.storage.postgres.schema import SCHEMA_VERSION
from memory_substrate.storage.postgres.store import PostgresStore
from memory_substrate.storage.postgres.vector_index import index_name, index_sql

pytestmark = pytest.mark.postgres

TOPICS = [
    "the ferry to the island leaves at dawn",
    "our violin teacher moved to Lisbon",
    "the greenhouse tomatoes caught blight",
    "a telescope for the comet next spring",
    "the database migration moved to friday",
    "login failures after the cache eviction",
]
QUERIES = ["ferry island dawn", "violin teacher Lisbon", "database migration", "cache eviction login"]


@pytest.fixture
def database(postgres_url: str) -> Iterator[str]:
    name = f"ms_v9_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield urlunsplit(urlsplit(postgres_url)._replace(path="/" + name))
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _answers(mem: Memory) -> list[Any]:
    out: list[Any] = []
    for q in QUERIES:
        for unit in ("segment", "object"):
            res = mem.query("search", {"query": q}, {"result_unit": unit, "max_items": 6, "detail": "full"})
            out.append([(i.get("id"), i.get("segment_id"), i.get("rank_score")) for i in res["items"]])
    embedder = mem.runtime.embedder_or_none()
    assert embedder is not None
    with mem.store.read(mem.namespace) as s:
        for q in QUERIES:
            hits = s.vector_search(embedder.name, embedder.embed_query(q), owner_type="segment", limit=8)
            out.append([(oid, round(score, 5)) for oid, score in hits])
    return out


def _back_to_v8(url: str) -> None:
    """The layout a v8 store has: what migration 9 finds."""
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("ALTER TABLE segments ADD COLUMN tsv tsvector")
        conn.execute(
            "UPDATE segments s SET tsv = f.tsv FROM segment_search f "
            "WHERE f.namespace = s.namespace AND f.source_id = s.source_id AND f.id = s.id"
        )
        conn.execute("ALTER TABLE segments ALTER COLUMN tsv SET NOT NULL")
        conn.execute("CREATE INDEX segments_fts ON segments USING gin (namespace, tsv)")
        conn.execute("DROP TABLE segment_search")
        for dim, watermark in conn.execute("SELECT dim, watermark FROM vector_indexes").fetchall():
            conn.execute(f"DROP INDEX {index_name(dim, watermark)}")
            conn.execute(index_sql(dim, watermark, halfvec=False, concurrently=False))
        conn.execute("ALTER TABLE vector_indexes DROP COLUMN halfvec")
        conn.execute("DELETE FROM schema_migrations WHERE version = 9")


def _index_defs(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%'"
            ).fetchall()
        ]


def test_a_v8_store_migrates_and_answers_the_same(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memory_substrate.storage.postgres.store.IDLE_BUILD_S", None)  # builds when told
    settings = Settings(root=tmp_path, embedder="static", database_url=database)
    mem = Memory(settings, namespace="ns-v9")
    for c in range(2):
        msgs = [
            {"role": "user", "name": "ana", "content": f"{TOPICS[(i + c) % len(TOPICS)]} (note {c}-{i})"}
            for i in range(90)
        ]
        mem.ingest("conversation", {"title": f"chat {c}", "messages": msgs})
    mem.store.build_deferred_indexes()
    before = _answers(mem)
    mem.close()

    _back_to_v8(database)
    assert all("vector_ip_ops" in d for d in _index_defs(database))

    mem = Memory(settings, namespace="ns-v9")
    store = PostgresStore(database, idle_build_s=None)
    try:
        assert store.schema_version() == SCHEMA_VERSION  # v9 and every later migration
        with psycopg.connect(database) as conn:
            counts = conn.execute(
                "SELECT (SELECT COUNT(*) FROM segments), (SELECT COUNT(*) FROM segment_search)"
            ).fetchone()
            columns = {
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = 'segments'"
                )
            }
            halfvec = conn.execute("SELECT bool_or(halfvec) FROM vector_indexes").fetchone()
        assert counts is not None and counts[0] == counts[1] == 180
        assert "tsv" not in columns and halfvec == (False,)
        with mem.store.read("ns-v9") as s:
            assert s.segments_missing_search() == []
        # The full-precision index still serves, and a build is due (the idle builder would start it).
        assert store._has_pending()
        assert _answers(mem) == before

        store.build_deferred_indexes()
        defs = _index_defs(database)
        assert len(defs) == 1 and "halfvec_ip_ops" in defs[0]
        assert not store._has_pending()
        assert _answers(mem) == before
    finally:
        store.close()
        mem.close()
