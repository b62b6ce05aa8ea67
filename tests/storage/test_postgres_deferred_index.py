"""Bulk vector writes skip the HNSW index until a deferred build; search must not notice.

A conversation ingest of at least BULK_VECTOR_ROWS turns writes its segment vectors as a bulk
batch (pending). A search right after the ingest, before any build, must find the new turns
(the pending rows are scanned exactly beside the index), and after the build it must return
the same answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from memory_substrate import Memory, Settings
from memory_substrate.storage.postgres.store import PostgresStore
from memory_substrate.storage.postgres.vector_index import BULK_VECTOR_ROWS, LOADED_TABLES

pytestmark = pytest.mark.postgres

TOPICS = [
    "the ferry to the island leaves at dawn",
    "our violin teacher moved to Lisbon",
    "the greenhouse tomatoes caught blight",
    "a telescope for the comet next spring",
]


def _pending(url: str, namespace: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT COUNT(*) FROM vectors v JOIN vector_indexes i ON i.dim = v.dim "
            "WHERE v.namespace = %s AND v.batch > i.watermark",
            (namespace,),
        ).fetchone()
    return int(row[0]) if row else 0


def _search(mem: Memory, query: str, unit: str) -> list[str]:
    out = mem.query("search", {"query": query}, {"result_unit": unit, "max_items": 5, "detail": "full"})
    return [str(item.get("id") or item.get("segment_id") or item) for item in out["items"]]


def test_search_before_and_after_the_deferred_build(
    postgres_url: str, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memory_substrate.storage.postgres.store.IDLE_BUILD_S", None)  # builds when told
    mem = Memory(Settings(root=tmp_path, embedder="static", database_url=postgres_url), namespace=namespace)
    try:
        turns = [f"turn {i}: {TOPICS[i % len(TOPICS)]} (note {i})" for i in range(BULK_VECTOR_ROWS + 36)]
        mem.ingest(
            "conversation",
            {"title": "trip", "messages": [{"role": "user", "name": "ana", "content": t} for t in turns]},
        )
        assert _pending(postgres_url, namespace) >= BULK_VECTOR_ROWS  # the bulk rows wait for a build

        queries = ["ferry island dawn", "violin teacher Lisbon", "tomatoes blight", "comet telescope"]
        # Vectors alone: the pending rows must come back from the exact scan.
        embedder = mem.runtime.embedder_or_none()
        assert embedder is not None
        qvec = embedder.embed_query("violin teacher Lisbon")
        with mem.store.read(namespace) as s:
            before_vec = s.vector_search(embedder.name, qvec, owner_type="segment", limit=10)
            exact = sorted(
                ((oid, float(v @ qvec)) for t, oid, _m, v in s.iter_vectors() if t == "segment"),
                key=lambda h: -h[1],
            )[:10]
        assert [h[0] for h in before_vec] == [h[0] for h in exact]
        assert np.allclose([h[1] for h in before_vec], [h[1] for h in exact], atol=1e-5)
        before = {(q, unit): _search(mem, q, unit) for q in queries for unit in ("segment", "object")}
        assert all(before[(q, "segment")] for q in queries)

        built = mem.store.build_deferred_indexes()
        assert sum(built.values()) >= BULK_VECTOR_ROWS
        assert _pending(postgres_url, namespace) == 0
        with mem.store.read(namespace) as s:
            after_vec = s.vector_search(embedder.name, qvec, owner_type="segment", limit=10)
        assert [h[0] for h in after_vec] == [h[0] for h in before_vec]
        after = {(q, unit): _search(mem, q, unit) for q in queries for unit in ("segment", "object")}
        assert after == before
    finally:
        mem.close()


def _vacuum_counts(url: str) -> dict[str, int]:
    """Explicit VACUUMs (autovacuum's are counted apart) of the tables a bulk load fills."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT relname, vacuum_count FROM pg_stat_user_tables WHERE relname = ANY(%s)",
            (list(LOADED_TABLES),),
        ).fetchall()
    return {str(name): int(count) for name, count in rows}


def test_the_deferred_build_vacuums_the_loaded_tables(
    postgres_url: str, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rebuild after a bulk load vacuums and analyses what it filled (the first searches on a
    loaded store would otherwise set every new row's commit hint themselves)."""
    monkeypatch.setattr("memory_substrate.storage.postgres.store.IDLE_BUILD_S", None)
    # A rebuild, not a fold into the live index, whatever the other tests left in the database.
    monkeypatch.setattr("memory_substrate.storage.postgres.vector_index.REBUILD_MIN_ROWS", 1)
    monkeypatch.setattr("memory_substrate.storage.postgres.vector_index.REBUILD_FRACTION", 0.0)
    mem = Memory(Settings(root=tmp_path, embedder="static", database_url=postgres_url), namespace=namespace)
    try:
        turns = [f"turn {i}: {TOPICS[i % len(TOPICS)]} (note {i})" for i in range(BULK_VECTOR_ROWS * 4)]
        mem.ingest(
            "conversation",
            {"title": "trip", "messages": [{"role": "user", "name": "ana", "content": t} for t in turns]},
        )
        before = _vacuum_counts(postgres_url)
        mem.store.build_deferred_indexes()
        # The counts reach the statistics views when the building session ends: wait for them.
        deadline = time.monotonic() + 10
        after = _vacuum_counts(postgres_url)
        while any(after.get(t, 0) <= before.get(t, 0) for t in LOADED_TABLES) and time.monotonic() < deadline:
            time.sleep(0.1)
            after = _vacuum_counts(postgres_url)
        assert all(after.get(t, 0) > before.get(t, 0) for t in LOADED_TABLES), (before, after)
    finally:
        mem.close()


def _gin_pending_pages(url: str, index: str) -> int:
    """Pages in a GIN index's pending list, read from its metapage (pageinspect)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT n_pending_pages FROM gin_metapage_info(get_raw_page(%s, 0))", (index,)
        ).fetchone()
    return int(row[0]) if row else 0


@pytest.fixture
def gin_inspectable(postgres_url: str) -> Iterator[None]:
    """pageinspect to read the pending lists (skip where the server lacks it), and autovacuum off
    the two full-text tables meanwhile, so that only the build can merge their pending lists."""
    tables = ("segment_search", "objects")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        except psycopg.Error as exc:
            pytest.skip(f"pageinspect unavailable: {exc}")
        for t in tables:
            conn.execute(f"ALTER TABLE {t} SET (autovacuum_enabled = false)")
        try:
            yield
        finally:
            for t in tables:
                conn.execute(f"ALTER TABLE {t} RESET (autovacuum_enabled)")


def test_the_deferred_build_merges_the_full_text_pending_lists(
    postgres_url: str, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gin_inspectable: None
) -> None:
    """A bulk ingest leaves its full-text entries in GIN's pending lists (scanned in full by every
    query); the build that follows the bulk write merges them, and searches answer the same."""
    monkeypatch.setattr("memory_substrate.storage.postgres.store.IDLE_BUILD_S", None)
    mem = Memory(Settings(root=tmp_path, embedder="static", database_url=postgres_url), namespace=namespace)
    try:
        turns = [f"turn {i}: {TOPICS[i % len(TOPICS)]} (note {i})" for i in range(BULK_VECTOR_ROWS * 4)]
        mem.ingest(
            "conversation",
            {"title": "trip", "messages": [{"role": "user", "name": "ana", "content": t} for t in turns]},
        )
        mem.remember(
            "knowledge",
            {
                "kind": "fact",
                "title": "The ferry leaves at dawn",
                "summary": "From the island pier.",
                "reason": "test",
                "memory_source": "user_declared",
                "scope_refs": ["scope:trip"],
            },
        )
        assert _gin_pending_pages(postgres_url, "segment_search_fts") > 0
        assert _gin_pending_pages(postgres_url, "objects_fts") > 0
        before = {unit: _search(mem, "ferry island dawn", unit) for unit in ("segment", "object")}
        mem.store.build_deferred_indexes()
        assert _gin_pending_pages(postgres_url, "segment_search_fts") == 0
        assert _gin_pending_pages(postgres_url, "objects_fts") == 0
        assert {unit: _search(mem, "ferry island dawn", unit) for unit in ("segment", "object")} == before
        assert before["segment"] and before["object"]
    finally:
        mem.close()


def test_a_bulk_rewrite_of_indexed_rows_is_found_once(postgres_url: str, namespace: str) -> None:
    """Rows already in the index, rewritten in bulk, become pending: each owner comes back once."""
    store = PostgresStore(postgres_url, idle_build_s=None)
    rng = np.random.default_rng(5)
    n = BULK_VECTOR_ROWS * 2
    try:
        with store.write(namespace) as s:
            s.upsert_vectors("m", "object", [(f"o{i}", _unit(rng, 32)) for i in range(n)])
        store.build_deferred_indexes()
        new = [(f"o{i}", _unit(rng, 32)) for i in range(n)]
        with store.write(namespace) as s:
            s.upsert_vectors("m", "object", new)
        assert _pending(postgres_url, namespace) == n
        query = new[7][1]
        with store.read(namespace) as s:
            hits = s.vector_search("m", query, owner_type="object", limit=n)
        assert len(hits) == n == len({h[0] for h in hits})
        assert hits[0][0] == "o7" and hits[0][1] == pytest.approx(1.0, abs=1e-5)
        want = sorted(((oid, float(v @ query)) for oid, v in new), key=lambda h: -h[1])
        assert np.allclose([h[1] for h in hits], [h[1] for h in want], atol=1e-5)
    finally:
        store.close()


def test_the_idle_builder_indexes_after_writes_pause(postgres_url: str, namespace: str) -> None:
    store = PostgresStore(postgres_url, idle_build_s=0.2)
    rng = np.random.default_rng(6)
    try:
        with store.write(namespace) as s:
            s.upsert_vectors("m", "object", [(f"o{i}", _unit(rng, 24)) for i in range(BULK_VECTOR_ROWS)])
        import time

        deadline = time.monotonic() + 60
        while _pending(postgres_url, namespace) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _pending(postgres_url, namespace) == 0
    finally:
        store.close()


def _unit(rng: np.random.Generator, dim: int) -> np.ndarray:
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)
