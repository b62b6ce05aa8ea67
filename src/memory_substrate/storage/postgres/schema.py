"""Versioned schema migrations for the PostgreSQL store.

Every table leads its primary key and its indexes with ``namespace``, so a distributed
PostgreSQL (Citus) can shard every table by namespace and route every query to one shard.
Text keys use the "C" collation so ordering matches the embedded store (byte order) on any
server locale. Migrations run one per transaction under an advisory lock, so several
server processes starting at once migrate exactly once.
"""

from __future__ import annotations

from typing import Any

import psycopg

# Advisory-lock key space of this application (first key of the two-int form).
LOCK_CLASS_NAMESPACE = 0x6D73  # write sessions: (class, hashtext(namespace))
LOCK_CLASS_DDL = 0x6D74  # migrations and lazily created vector indexes
LOCK_MIGRATIONS = 1

_C = 'text COLLATE "C"'

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        f"""
        CREATE TABLE objects (
            namespace {_C} NOT NULL,
            id {_C} NOT NULL,
            object_type {_C} NOT NULL,
            kind {_C} NOT NULL,
            status {_C} NOT NULL,
            uri {_C},
            claim_key {_C},
            created_at {_C} NOT NULL,
            updated_at {_C} NOT NULL,
            data json NOT NULL,
            tsv tsvector NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX objects_ns_type_updated ON objects (namespace, object_type, updated_at);
        CREATE INDEX objects_ns_updated ON objects (namespace, updated_at);
        CREATE INDEX objects_ns_created ON objects (namespace, created_at);
        CREATE INDEX objects_ns_claim ON objects (namespace, claim_key) WHERE claim_key IS NOT NULL;
        CREATE INDEX objects_ns_uri ON objects (namespace, uri) WHERE uri IS NOT NULL;

        CREATE TABLE segments (
            namespace {_C} NOT NULL,
            source_id {_C} NOT NULL,
            id {_C} NOT NULL,
            ordinal integer NOT NULL,
            text json NOT NULL,  -- a JSON string, so NUL characters survive (PostgreSQL text refuses them)
            locator json NOT NULL,
            hash {_C} NOT NULL,
            metadata json NOT NULL,
            created_at {_C} NOT NULL,
            tsv tsvector NOT NULL,
            PRIMARY KEY (namespace, source_id, id)
        );
        CREATE INDEX segments_ns_source_ord ON segments (namespace, source_id, ordinal);

        CREATE TABLE relations (
            namespace {_C} NOT NULL,
            id {_C} NOT NULL,
            rel_type {_C} NOT NULL,
            source_id {_C} NOT NULL,
            target_id {_C} NOT NULL,
            origin_id {_C},
            payload json NOT NULL,
            created_at {_C} NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX relations_ns_source ON relations (namespace, source_id);
        CREATE INDEX relations_ns_target ON relations (namespace, target_id);
        CREATE INDEX relations_ns_origin ON relations (namespace, origin_id);
        CREATE INDEX relations_ns_created ON relations (namespace, created_at, id);

        -- One untyped vector column: the dimension is the embedder's, known only at write time.
        -- Exact search uses vectors_ns_model; an HNSW index per dimension is added on first use.
        CREATE TABLE vectors (
            namespace {_C} NOT NULL,
            owner_type {_C} NOT NULL,
            owner_id {_C} NOT NULL,
            model {_C} NOT NULL,
            dim integer NOT NULL,
            vec vector NOT NULL,
            PRIMARY KEY (namespace, owner_type, owner_id)
        );
        CREATE INDEX vectors_ns_model ON vectors (namespace, owner_type, model, dim);

        CREATE TABLE patches (
            namespace {_C} NOT NULL,
            id {_C} NOT NULL,
            tool {_C} NOT NULL,
            mode {_C} NOT NULL,
            reason text,
            created_at {_C} NOT NULL,
            operations integer NOT NULL,
            summary json NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX patches_ns_created ON patches (namespace, created_at);

        CREATE TABLE audit_events (
            namespace {_C} NOT NULL,
            id {_C} NOT NULL,
            patch_id {_C} NOT NULL,
            object_id {_C} NOT NULL,
            action {_C} NOT NULL,
            created_at {_C} NOT NULL,
            data json NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX audit_ns_object ON audit_events (namespace, object_id, created_at);
        CREATE INDEX audit_ns_created ON audit_events (namespace, created_at);

        CREATE TABLE config (
            namespace {_C} NOT NULL,
            key {_C} NOT NULL,
            value json NOT NULL,
            PRIMARY KEY (namespace, key)
        );

        -- Not sharded: on Citus this is a reference table (one row per token, looked up by hash).
        CREATE TABLE tokens (
            token_hash {_C} PRIMARY KEY,
            namespace {_C} NOT NULL,
            label text NOT NULL,
            created_at {_C} NOT NULL
        );
        CREATE INDEX tokens_ns ON tokens (namespace);

        -- Full-text indexes lead with namespace where btree_gin is available (most managed
        -- services allow it); otherwise a plain GIN index on the tsvector.
        DO $$
        BEGIN
            BEGIN
                CREATE EXTENSION IF NOT EXISTS btree_gin;
            EXCEPTION WHEN OTHERS THEN
                RAISE NOTICE 'btree_gin unavailable (%); full-text indexes without namespace', SQLERRM;
            END;
            IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
                EXECUTE 'CREATE INDEX objects_fts ON objects USING gin (namespace, tsv)';
                EXECUTE 'CREATE INDEX segments_fts ON segments USING gin (namespace, tsv)';
            ELSE
                EXECUTE 'CREATE INDEX objects_fts ON objects USING gin (tsv)';
                EXECUTE 'CREATE INDEX segments_fts ON segments USING gin (tsv)';
            END IF;
        END
        $$;
        """,
    ),
    # Version 2 is the SQLite store's term-count table; PostgreSQL needs nothing for it. Kept so
    # one version number means the same schema on both backends.
    (2, "SELECT 1"),
    (
        3,
        # The knowledge graph: lookup keys derived from objects, extraction jobs, traces.
        f"""
        CREATE TABLE object_keys (
            namespace {_C} NOT NULL,
            key {_C} NOT NULL,
            object_id {_C} NOT NULL,
            PRIMARY KEY (namespace, key, object_id)
        );
        CREATE INDEX object_keys_ns_object ON object_keys (namespace, object_id);

        CREATE TABLE jobs (
            namespace {_C} NOT NULL,
            id {_C} NOT NULL,
            kind {_C} NOT NULL,
            target_id {_C} NOT NULL,
            status {_C} NOT NULL,
            attempts integer NOT NULL,
            created_at {_C} NOT NULL,
            updated_at {_C} NOT NULL,
            error text,
            data json NOT NULL,
            PRIMARY KEY (namespace, id),
            UNIQUE (namespace, kind, target_id)
        );
        CREATE INDEX jobs_ns_kind_status ON jobs (namespace, kind, status, created_at);

        CREATE TABLE traces (
            namespace {_C} NOT NULL,
            id {_C} NOT NULL,
            kind {_C} NOT NULL,
            subject_id {_C},
            created_at {_C} NOT NULL,
            data json NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX traces_ns_kind_created ON traces (namespace, kind, created_at);
        CREATE INDEX traces_ns_subject ON traces (namespace, subject_id);
        """,
    ),
    (
        4,
        # Deferred HNSW maintenance (see vector_index.py). Rows written before this
        # version get batch 1, pending until the first build; later small writes get batch 0.
        # The per-dimension indexes of version 1 (``WHERE dim = D``) would take every bulk row
        # row by row: they are dropped, and the first write or build makes the new ones.
        f"""
        ALTER TABLE vectors ADD COLUMN batch bigint NOT NULL DEFAULT 1;
        ALTER TABLE vectors ALTER COLUMN batch SET DEFAULT 0;
        CREATE SEQUENCE vectors_batch_seq START 2;
        DROP INDEX IF EXISTS vectors_ns_model;
        CREATE INDEX vectors_ns_model ON vectors (namespace, owner_type, model, dim, batch);
        CREATE INDEX vectors_pending ON vectors (namespace, dim, batch) WHERE batch > 0;
        -- Not sharded: one row per vector dimension (on Citus a reference table).
        CREATE TABLE vector_indexes (
            dim integer PRIMARY KEY,
            watermark bigint NOT NULL,
            built_at {_C} NOT NULL
        );
        DO $$
        DECLARE name text;
        BEGIN
            FOR name IN SELECT indexname FROM pg_indexes
                        WHERE tablename = 'vectors' AND indexname LIKE 'vectors\\_hnsw\\_d%'
            LOOP
                EXECUTE format('DROP INDEX %I', name);
            END LOOP;
        END
        $$;
        """,
    ),
    (
        5,
        # Ids touched by a write, recorded in its transaction, replayed into derived backends.
        f"""
        CREATE TABLE derived_outbox (
            namespace {_C} NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            kind {_C} NOT NULL,
            item_id {_C} NOT NULL,
            detail {_C} NOT NULL DEFAULT '',
            created_at {_C} NOT NULL,
            PRIMARY KEY (namespace, seq)
        );
        """,
    ),
    (
        6,
        # Graph walks (get_trace, get_context) read edges by one end and test the other;
        # with both ends, the type and the id in the key, an edge read (and a meet between two
        # frontiers) is answered from the index. They replace the two single-end indexes.
        """
        DROP INDEX IF EXISTS relations_ns_source;
        DROP INDEX IF EXISTS relations_ns_target;
        CREATE INDEX relations_ns_source_edge ON relations (namespace, source_id, target_id, rel_type, id);
        CREATE INDEX relations_ns_target_edge ON relations (namespace, target_id, source_id, rel_type, id);
        """,
    ),
    (
        8,
        # What the segment ranker reads of each window turn, as columns (see the SQLite migration).
        """
        ALTER TABLE segments ADD COLUMN IF NOT EXISTS terms text,
            ADD COLUMN IF NOT EXISTS speaker text, ADD COLUMN IF NOT EXISTS said_at text;
        UPDATE segments SET speaker = metadata->>'name', said_at = metadata->>'created_at'
            WHERE metadata->>'name' IS NOT NULL OR metadata->>'created_at' IS NOT NULL;
        """,
    ),
    (
        9,
        # The working set of a segment search in default shared buffers.
        # - The segment tsvectors move to a narrow table of their own: ranking a full-text match
        #   reads its row from the heap, and ~2,000 of the ~850-byte segment rows per query pushed
        #   the HNSW index out of the cache; the narrow rows are a fraction of that.
        # - vector_indexes records whether a dimension's HNSW index holds half-precision vectors
        #   (pgvector >= 0.7: half the index). Indexes built before are full-precision; the next
        #   deferred build replaces them (vector_index.py).
        # Writers of segments wait (SHARE) while the rows are copied and indexed, so none is
        # missed; readers go on until the old index and column are dropped, the last step.
        f"""
        LOCK TABLE segments IN SHARE MODE;
        CREATE TABLE segment_search (
            namespace {_C} NOT NULL,
            source_id {_C} NOT NULL,
            id {_C} NOT NULL,
            tsv tsvector NOT NULL,
            PRIMARY KEY (namespace, source_id, id)
        );
        INSERT INTO segment_search (namespace, source_id, id, tsv)
            SELECT namespace, source_id, id, tsv FROM segments ORDER BY namespace, source_id, ordinal;
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
                EXECUTE 'CREATE INDEX segment_search_fts ON segment_search USING gin (namespace, tsv)';
            ELSE
                EXECUTE 'CREATE INDEX segment_search_fts ON segment_search USING gin (tsv)';
            END IF;
        END
        $$;
        ANALYZE segment_search;
        ALTER TABLE vector_indexes ADD COLUMN halfvec boolean NOT NULL DEFAULT false;
        DROP INDEX IF EXISTS segments_fts;
        ALTER TABLE segments DROP COLUMN tsv;
        """,
    ),
    (
        10,
        # tokens may expire (NULL: never).
        "ALTER TABLE tokens ADD COLUMN IF NOT EXISTS expires_at text;",
    ),
    (
        12,
        # each segment's language, stored at ingest (see the SQLite migration).
        "ALTER TABLE segments ADD COLUMN IF NOT EXISTS language text;",
    ),
    (
        13,
        # Short ids (ids.py): objects by the last 6 characters of their id (see the SQLite migration).
        "CREATE INDEX IF NOT EXISTS objects_ns_tail ON objects (namespace, right(id, 6), id);",
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]


def _prepare(conn: psycopg.Connection[Any]) -> None:
    """pgvector and the migrations table, under the DDL lock (concurrent CREATE ... IF NOT
    EXISTS can still collide in the catalogs). A role without the right to create the
    extension gets a message naming the fix."""
    from memory_substrate.errors import StorageError

    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS_DDL, LOCK_MIGRATIONS))
            if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version integer PRIMARY KEY, applied_at timestamptz NOT NULL)"
            )
    except (
        psycopg.errors.FeatureNotSupported,
        psycopg.errors.InsufficientPrivilege,
        psycopg.errors.UndefinedFile,
    ) as exc:
        raise StorageError(
            "PostgreSQL needs the pgvector extension: ask an administrator to run "
            "'CREATE EXTENSION vector' in this database (or install pgvector on the server)",
            details={"error": str(exc).strip()},
        ) from exc


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Apply pending migrations in order, each in its own transaction. Returns the version.

    ``conn`` must be in autocommit mode. Raises ``StorageError`` when pgvector is missing
    and cannot be created.
    """
    _prepare(conn)
    # Versions are reserved per feature and may land out of order: apply every one not yet recorded.
    applied = {r[0] for r in conn.execute("SELECT version FROM schema_migrations").fetchall()}
    for version, sql in MIGRATIONS:
        if version in applied:
            continue
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS_DDL, LOCK_MIGRATIONS))
            # Re-check under the lock: another process may have migrated meanwhile.
            if not conn.execute("SELECT 1 FROM schema_migrations WHERE version = %s", (version,)).fetchone():
                conn.execute(sql)  # no parameters: sent as one multi-statement script
                conn.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (%s, now())", (version,)
                )
    return _current(conn)


def _current(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(row[0]) if row else 0
