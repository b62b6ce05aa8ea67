"""Versioned schema migrations for the embedded SQLite store."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from memory_substrate.storage.sqlite.fts_spaces import split_shared

# A migration is SQL statements, or a function run on the connection inside the migration's
# transaction (for steps that depend on what the store holds).
Migration = str | Callable[[sqlite3.Connection], None]

MIGRATIONS: list[tuple[int, Migration]] = [
    (
        1,
        """
        CREATE TABLE objects (
            pk INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            id TEXT NOT NULL,
            object_type TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            uri TEXT,
            claim_key TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            data TEXT NOT NULL,
            UNIQUE (namespace, id)
        );
        CREATE INDEX objects_ns_type_updated ON objects (namespace, object_type, updated_at);
        CREATE INDEX objects_ns_updated ON objects (namespace, updated_at);
        CREATE INDEX objects_ns_claim ON objects (namespace, claim_key) WHERE claim_key IS NOT NULL;
        CREATE INDEX objects_ns_uri ON objects (namespace, uri) WHERE uri IS NOT NULL;

        CREATE VIRTUAL TABLE objects_fts USING fts5 (
            title, summary, body, meta, tokenize = "unicode61 remove_diacritics 2"
        );

        CREATE TABLE segments (
            pk INTEGER PRIMARY KEY,
            namespace TEXT NOT NULL,
            source_id TEXT NOT NULL,
            id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            text TEXT NOT NULL,
            locator TEXT NOT NULL,
            hash TEXT NOT NULL,
            metadata TEXT NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (namespace, source_id, id)
        );
        CREATE INDEX segments_ns_source_ord ON segments (namespace, source_id, ordinal);

        CREATE VIRTUAL TABLE segments_fts USING fts5 (
            body, meta, tokenize = "unicode61 remove_diacritics 2"
        );

        CREATE TABLE relations (
            namespace TEXT NOT NULL,
            id TEXT NOT NULL,
            rel_type TEXT NOT NULL,
            source_id TEXT NOT NULL,
            target_id TEXT NOT NULL,
            origin_id TEXT,
            payload TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX relations_ns_source ON relations (namespace, source_id);
        CREATE INDEX relations_ns_target ON relations (namespace, target_id);
        CREATE INDEX relations_ns_origin ON relations (namespace, origin_id);

        CREATE TABLE vectors (
            namespace TEXT NOT NULL,
            owner_type TEXT NOT NULL,
            owner_id TEXT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (namespace, owner_type, owner_id)
        );

        CREATE TABLE vector_versions (
            namespace TEXT NOT NULL,
            owner_type TEXT NOT NULL,
            version INTEGER NOT NULL,
            PRIMARY KEY (namespace, owner_type)
        );

        CREATE TABLE patches (
            namespace TEXT NOT NULL,
            id TEXT NOT NULL,
            tool TEXT NOT NULL,
            mode TEXT NOT NULL,
            reason TEXT,
            created_at TEXT NOT NULL,
            operations INTEGER NOT NULL,
            summary TEXT NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX patches_ns_created ON patches (namespace, created_at);

        CREATE TABLE audit_events (
            namespace TEXT NOT NULL,
            id TEXT NOT NULL,
            patch_id TEXT NOT NULL,
            object_id TEXT NOT NULL,
            action TEXT NOT NULL,
            created_at TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX audit_ns_object ON audit_events (namespace, object_id, created_at);
        CREATE INDEX audit_ns_created ON audit_events (namespace, created_at);

        CREATE TABLE config (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (namespace, key)
        );

        CREATE TABLE tokens (
            token_hash TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            label TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """,
    ),
    (
        2,
        # Per-term document counts of the segment index, read to skip near-universal query terms.
        "CREATE VIRTUAL TABLE segments_vocab USING fts5vocab(segments_fts, 'row');",
    ),
    (
        3,
        # The knowledge graph: lookup keys (entity names and aliases, fact subjects and predicates,
        # procedure signatures) derived from objects; extraction jobs; extraction and compile traces.
        """
        CREATE TABLE object_keys (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            object_id TEXT NOT NULL,
            PRIMARY KEY (namespace, key, object_id)
        );
        CREATE INDEX object_keys_ns_object ON object_keys (namespace, object_id);

        CREATE TABLE jobs (
            namespace TEXT NOT NULL,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            target_id TEXT NOT NULL,
            status TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            error TEXT,
            data TEXT NOT NULL,
            PRIMARY KEY (namespace, id),
            UNIQUE (namespace, kind, target_id)
        );
        CREATE INDEX jobs_ns_kind_status ON jobs (namespace, kind, status, created_at);

        CREATE TABLE traces (
            namespace TEXT NOT NULL,
            id TEXT NOT NULL,
            kind TEXT NOT NULL,
            subject_id TEXT,
            created_at TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (namespace, id)
        );
        CREATE INDEX traces_ns_kind_created ON traces (namespace, kind, created_at);
        CREATE INDEX traces_ns_subject ON traces (namespace, subject_id);
        """,
    ),
    (
        5,
        # ids touched by a write, recorded in its transaction, replayed into derived backends.
        """
        CREATE TABLE derived_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            kind TEXT NOT NULL,
            item_id TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        );
        CREATE INDEX derived_outbox_ns_seq ON derived_outbox (namespace, seq);
        """,
    ),
    (
        6,
        # graph walks (get_trace, get_context) read edges by one end and test the other;
        # covering indexes answer that from the index alone (no table row per edge), and replace
        # the two single-end indexes they extend, so a write still maintains two.
        """
        DROP INDEX IF EXISTS relations_ns_source;
        DROP INDEX IF EXISTS relations_ns_target;
        CREATE INDEX relations_ns_source_edge ON relations (namespace, source_id, target_id, rel_type, id);
        CREATE INDEX relations_ns_target_edge ON relations (namespace, target_id, source_id, rel_type, id);
        """,
    ),
    (
        8,
        # what the segment ranker reads of every turn in its candidate windows, as columns:
        # the normalised terms (retrieval.terms.lexical_document), so a search does not tokenise and
        # stem each turn, and the speaker and message date, so it does not parse each metadata JSON.
        # Terms are NULL on rows written before (the ranker computes those itself, and
        # ``memory_maintain reindex`` fills them); speaker and date are copied here.
        """
        ALTER TABLE segments ADD COLUMN terms TEXT;
        ALTER TABLE segments ADD COLUMN speaker TEXT;
        ALTER TABLE segments ADD COLUMN said_at TEXT;
        UPDATE segments SET speaker = json_extract(metadata, '$.name'), said_at = json_extract(metadata, '$.created_at');
        """,
    ),
    (
        10,
        # tokens may expire (NULL: never); `token list/revoke/rotate` read and delete rows.
        "ALTER TABLE tokens ADD COLUMN expires_at TEXT;",
    ),
    (
        11,
        # which models made a namespace's vectors, answered by index (the embedder a
        # store written before an upgrade keeps; Store.vector_models). PostgreSQL has had
        # vectors_ns_model since v1.
        "CREATE INDEX IF NOT EXISTS vectors_ns_model ON vectors (namespace, owner_type, model);",
    ),
    (
        12,
        # each segment's language (analysis.main_language, "" when it cannot be told),
        # stored at ingest: a search compares its candidates' languages with the query's
        # (analysis.across_languages), and detecting each of several hundred candidates per search
        # cost ~20 ms uncached at 10k segments. NULL on rows written before (detected at query
        # time; ``memory_maintain reindex`` fills them).
        "ALTER TABLE segments ADD COLUMN language TEXT;",
    ),
    (
        13,
        # Short ids (ids.py): objects by the last 6 characters of their id, the random part of a
        # generated id, so a short id (``src:20b56d``) resolves, and the compiler checks the short
        # ids of a package, in one indexed query (Session.ids_by_tail writes the same expression).
        # The id is in the index so the query reads the index alone: without it, the planner
        # preferred scanning the namespace's (namespace, id) index, which covers the query too.
        "CREATE INDEX IF NOT EXISTS objects_ns_tail ON objects (namespace, substr(id, -6), id);",
    ),
    (
        14,
        # Each namespace's full-text indexes of its own (fts_spaces.py): bm25 statistics and the
        # term statistics segment search plans with were the whole file's, so one namespace's
        # writes moved another's scores. The shared tables' rows move, then the tables go.
        split_shared,
    ),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]


def migrate(conn: sqlite3.Connection) -> int:
    """Apply pending migrations in order; each in its own transaction. Returns the version."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)"
    )
    # Versions are reserved per feature and may land out of order: apply every one not yet recorded.
    applied = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
    current = max(applied, default=0)
    for version, sql in MIGRATIONS:
        if version in applied:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-check under the write lock: another process may have migrated meanwhile.
            done = conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone()
            if not done:
                if callable(sql):
                    sql(conn)
                else:
                    for statement in _split(sql):
                        conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, datetime('now'))",
                    (version,),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        current = max(current, version)
    return int(current)


def _split(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]
