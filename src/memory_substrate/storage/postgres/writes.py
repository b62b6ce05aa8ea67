"""Write methods of a PostgreSQL session. All run inside the session's one transaction."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg

from memory_substrate.errors import StorageError
from memory_substrate.models import AuditEvent, MemoryObject, PatchRecord, Relation, SearchDoc, Segment
from memory_substrate.storage.json_text import StoredJson, dumps
from memory_substrate.storage.outbox import OBJECT, RELATION
from memory_substrate.storage.postgres.fts import field_text
from memory_substrate.storage.postgres.fts_plan import TermStats
from memory_substrate.storage.postgres.graph import PostgresGraph
from memory_substrate.storage.postgres.outbox import PostgresOutbox
from memory_substrate.storage.postgres.reads import HNSW_MAX_DIM, PostgresReads
from memory_substrate.storage.postgres.schema import LOCK_CLASS_DDL
from memory_substrate.storage.postgres.vector_index import BULK_VECTOR_ROWS, index_sql
from memory_substrate.storage.ranking import ranking_columns, reindexed_columns
from memory_substrate.util import now_iso

OBJECT_TSV = (
    "setweight(to_tsvector('simple', %s), 'A') || setweight(to_tsvector('simple', %s), 'B') || "
    "setweight(to_tsvector('simple', %s), 'C') || setweight(to_tsvector('simple', %s), 'D')"
)
SEGMENT_TSV = "setweight(to_tsvector('simple', %s), 'A') || setweight(to_tsvector('simple', %s), 'B')"


def _json(value: object) -> str:
    return dumps(value)


def _doc(search: SearchDoc) -> tuple[str, str, str, str]:
    return (
        field_text(search.title),
        field_text(search.summary),
        field_text(search.body),
        field_text(search.meta),
    )


def _stage(conn: psycopg.Connection[Any], table: str) -> None:
    """Create a per-connection staging table for COPY unless this connection has it.

    Temp tables are never vacuumed: rows deleted from a stage stay in its heap as dead tuples,
    and every later statement on the stage scans them (a stage emptied with DELETE after each
    write grew by 100 rows per ingest, and the ingest slowed ~3x by 100k turns). ON COMMIT DELETE
    ROWS truncates the file at each commit instead, and only in transactions that touched a
    temp table (read sessions pay nothing). Callers still DELETE right after use, because one
    transaction may stage twice (those dead rows go with the commit's truncate).
    """
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table} ON COMMIT DELETE ROWS")


def _no_nul(text: str, what: str) -> str:
    # PostgreSQL text cannot hold NUL (JSON columns can, escaped); refuse rather than alter.
    if "\x00" in text:
        raise StorageError(f"{what} contains a NUL character, which PostgreSQL text cannot store")
    return text


class PostgresWrites(PostgresReads, PostgresOutbox):
    """Writes; each checks that the session was opened for writing."""

    hnsw_dims: set[int]
    pending_dims: set[int]  # dimensions this session wrote pending (bulk) rows of

    def insert_object(self, obj: MemoryObject, search: SearchDoc, claim_key: str | None) -> None:
        self._require_write()
        uri = obj.metadata.get("uri") if obj.object_type == "source" else None
        self.conn.execute(
            "INSERT INTO objects (namespace, id, object_type, kind, status, uri, claim_key, created_at, updated_at, "
            f"data, tsv) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::json, {OBJECT_TSV})",
            (
                self.namespace,
                obj.id,
                obj.object_type,
                obj.kind,
                obj.status,
                None if uri is None else _no_nul(str(uri), "uri"),
                claim_key,
                obj.created_at,
                obj.updated_at,
                _json(obj.to_dict()),
                *_doc(search),
            ),
        )
        self._touch(OBJECT, [obj.id])

    def update_object(self, obj: MemoryObject, search: SearchDoc, claim_key: str | None) -> None:
        self._require_write()
        cur = self.conn.execute(
            "UPDATE objects SET kind = %s, status = %s, claim_key = %s, updated_at = %s, data = %s::json, "
            f"tsv = {OBJECT_TSV} WHERE namespace = %s AND id = %s",
            (
                obj.kind,
                obj.status,
                claim_key,
                obj.updated_at,
                _json(obj.to_dict()),
                *_doc(search),
                self.namespace,
                obj.id,
            ),
        )
        if cur.rowcount == 0:
            raise StorageError(f"cannot update missing object {obj.id}")
        self._touch(OBJECT, [obj.id])

    def insert_segments(self, segments: Iterable[tuple[Segment, str, str]]) -> None:
        """Insert segments with their normalised search text (body, meta)."""
        self._require_write()
        rows = [
            (
                self.namespace,
                seg.source_id,
                seg.id,
                seg.ordinal,
                _json(seg.text),
                _json(seg.locator),
                seg.hash,
                _json(seg.metadata),
                seg.created_at,
                field_text(body),
                field_text(meta),
                *ranking_columns(seg),
            )
            for seg, body, meta in segments
        ]
        if not rows:
            return
        # COPY into a per-connection staging table, then one INSERT ... SELECT that computes the
        # weighted tsvectors server-side: one round trip for the rows instead of one per row.
        _stage(
            self.conn,
            "segments_stage (namespace text, source_id text, id text, ordinal integer, text json, locator json, "
            "hash text, metadata json, created_at text, body text, meta text, terms text, speaker text, said_at text, "
            "language text)",
        )
        with self.conn.cursor() as cur:
            with cur.copy(
                "COPY segments_stage (namespace, source_id, id, ordinal, text, locator, hash, metadata, created_at, "
                "body, meta, terms, speaker, said_at, language) FROM STDIN"
            ) as copy:
                for row in rows:
                    copy.write_row(row)
            cur.execute(
                "INSERT INTO segments (namespace, source_id, id, ordinal, text, locator, hash, metadata, created_at, "
                "terms, speaker, said_at, language) SELECT namespace, source_id, id, ordinal, text, locator, hash, "
                "metadata, created_at, terms, speaker, said_at, language FROM segments_stage"
            )
            # The tsvectors live in a narrow table of their own: a full-text search
            # reads the rows it ranks, and these are a fraction of the size of segment rows.
            cur.execute(
                "INSERT INTO segment_search (namespace, source_id, id, tsv) SELECT namespace, source_id, id, "
                "setweight(to_tsvector('simple', body), 'A') || setweight(to_tsvector('simple', meta), 'B') "
                "FROM segments_stage"
            )
            cur.execute("DELETE FROM segments_stage")

    def insert_relations(self, relations: Iterable[Relation]) -> None:
        self._require_write()
        rows = [
            (
                self.namespace,
                r.id,
                r.rel_type,
                r.source_id,
                r.target_id,
                r.origin_id,
                _json(r.payload),
                r.created_at,
            )
            for r in relations
        ]
        if not rows:
            return
        self._touch(RELATION, (row[1] for row in rows))
        with self.conn.cursor() as cur:
            # INSERT OR REPLACE, as in the embedded store: a re-derived edge replaces the old row.
            cur.executemany(
                "INSERT INTO relations (namespace, id, rel_type, source_id, target_id, origin_id, payload, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s::json, %s) ON CONFLICT (namespace, id) DO UPDATE SET "
                "rel_type = excluded.rel_type, source_id = excluded.source_id, target_id = excluded.target_id, "
                "origin_id = excluded.origin_id, payload = excluded.payload, created_at = excluded.created_at",
                rows,
            )

    def delete_relations_from_origin(self, origin_id: str) -> int:
        self._require_write()
        ids = [
            r[0]
            for r in self.conn.execute(
                "DELETE FROM relations WHERE namespace = %s AND origin_id = %s RETURNING id",
                (self.namespace, origin_id),
            ).fetchall()
        ]
        self._touch(RELATION, ids)
        return len(ids)

    def delete_relations(self, relation_ids: Sequence[str]) -> int:
        self._require_write()
        ids = list(dict.fromkeys(relation_ids))
        if not ids:
            return 0
        self._touch(RELATION, ids)
        cur = self.conn.execute(
            "DELETE FROM relations WHERE namespace = %s AND id = ANY(%s)", (self.namespace, ids)
        )
        return cur.rowcount

    def delete_object(self, object_id: str) -> bool:
        self._require_write()
        ns = self.namespace
        cur = self.conn.execute("DELETE FROM objects WHERE namespace = %s AND id = %s", (ns, object_id))
        if cur.rowcount == 0:
            return False
        self.conn.execute("DELETE FROM object_keys WHERE namespace = %s AND object_id = %s", (ns, object_id))
        gone = self.conn.execute(
            "DELETE FROM relations WHERE namespace = %s AND (source_id = %s OR target_id = %s OR origin_id = %s) "
            "RETURNING id",
            (ns, object_id, object_id, object_id),
        ).fetchall()
        # derived backends replay these ids, find them gone from the store, and drop them too
        self._touch(OBJECT, [object_id])
        self._touch(RELATION, [r[0] for r in gone])
        self.conn.execute("DELETE FROM segments WHERE namespace = %s AND source_id = %s", (ns, object_id))
        self.conn.execute(
            "DELETE FROM segment_search WHERE namespace = %s AND source_id = %s", (ns, object_id)
        )
        gone_vectors = self.conn.execute(
            "DELETE FROM vectors WHERE namespace = %s AND (owner_id = %s OR "
            "(owner_type = 'segment' AND owner_id >= %s AND owner_id < %s)) RETURNING owner_type, owner_id, model",
            (ns, object_id, object_id + "#", object_id + "#\U0010ffff"),
        ).fetchall()
        for owner_type, owner_id, model in gone_vectors:  # a vector mirror (LanceDB) drops them on replay
            self._touch(f"vector:{owner_type}", [owner_id], model)
        return True

    def replace_segment_search(self, rows: Iterable[tuple[str, str, str, str]]) -> int:
        """Rewrite the full-text vectors of existing segments: (source_id, segment_id, body, meta)."""
        self._require_write()
        done = 0
        for source_id, segment_id, body, meta in rows:
            found = self.conn.execute(
                "SELECT text, metadata FROM segments WHERE namespace = %s AND source_id = %s AND id = %s",
                (self.namespace, source_id, segment_id),
            ).fetchone()
            if found is None:
                continue
            # The ranker's stored terms and language are rebuilt with the search row (and filled on
            # rows stored without them).
            key = (self.namespace, source_id, segment_id)
            self.conn.execute(
                "UPDATE segments SET terms = %s, language = %s WHERE namespace = %s AND source_id = %s AND id = %s",
                (*reindexed_columns(found[0], found[1]), *key),
            )
            # An upsert: the search row is rebuilt even where it went missing.
            cur = self.conn.execute(
                f"INSERT INTO segment_search (namespace, source_id, id, tsv) VALUES (%s, %s, %s, {SEGMENT_TSV}) "
                "ON CONFLICT (namespace, source_id, id) DO UPDATE SET tsv = excluded.tsv",
                (*key, field_text(body), field_text(meta)),
            )
            done += cur.rowcount
        return done

    def upsert_vectors(
        self, model: str, owner_type: str, rows: Sequence[tuple[str, npt.NDArray[np.float32]]]
    ) -> None:
        self._require_write()
        if not rows:
            return
        data = [(oid, np.asarray(v, dtype=np.float32)) for oid, v in rows]
        self._touch(f"vector:{owner_type}", (oid for oid, _ in data), model)
        dims = sorted({int(v.shape[0]) for _, v in data})
        for dim in dims:
            self._ensure_hnsw(dim)
        latest = {oid: v for oid, v in data}  # one row per owner, as the upsert semantics require
        batch = 0
        if len(latest) >= BULK_VECTOR_ROWS:
            # A bulk write: its rows stay out of the HNSW index until the deferred build.
            seq = self.conn.execute("SELECT nextval('vectors_batch_seq')").fetchone()
            batch = int(seq[0]) if seq else 0
            self.pending_dims.update(d for d in dims if 0 < d <= HNSW_MAX_DIM)
        _stage(self.conn, "vectors_stage (owner_id text, dim integer, vec vector)")
        with self.conn.cursor() as cur:
            # Binary COPY: pgvector's text form would be formatted float by float in Python.
            with cur.copy("COPY vectors_stage (owner_id, dim, vec) FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["text", "int4", "vector"])
                for oid, v in latest.items():
                    copy.write_row((oid, int(v.shape[0]), v))
            cur.execute(
                "INSERT INTO vectors (namespace, owner_type, owner_id, model, dim, vec, batch) "
                "SELECT %s, %s, owner_id, %s, dim, vec, %s FROM vectors_stage "
                "ON CONFLICT (namespace, owner_type, owner_id) DO UPDATE SET "
                "model = excluded.model, dim = excluded.dim, vec = excluded.vec, batch = excluded.batch",
                (self.namespace, owner_type, model, batch),
            )
            cur.execute("DELETE FROM vectors_stage")

    def _ensure_hnsw(self, dim: int) -> None:
        """Create the first HNSW index of a dimension (watermark 0) the first time it is written.

        Runs before this transaction touches ``vectors``: CREATE INDEX waits for writers
        that already hold the table, and those never wait on us, so no deadlock. Later
        indexes of the dimension come from the deferred build (vector_index.py).
        """
        if dim in self.hnsw_dims or not 0 < dim <= HNSW_MAX_DIM:
            return
        if self.conn.execute("SELECT 1 FROM vector_indexes WHERE dim = %s", (dim,)).fetchone():
            self.hnsw_dims.add(dim)
            return
        self.conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS_DDL, dim))
        if self.conn.execute("SELECT 1 FROM vector_indexes WHERE dim = %s", (dim,)).fetchone():
            return
        self.conn.execute(index_sql(dim, 0, halfvec=self.halfvec, concurrently=False))
        self.conn.execute(
            "INSERT INTO vector_indexes (dim, watermark, halfvec, built_at) VALUES (%s, 0, %s, %s)",
            (dim, self.halfvec, now_iso()),
        )
        # Rows of this dimension written before (under an older schema) are pending: a build indexes them.
        if self.conn.execute(f"SELECT 1 FROM vectors WHERE dim = {dim} AND batch > 0 LIMIT 1").fetchone():
            self.pending_dims.add(dim)

    def record_patch(self, patch: PatchRecord, events: Sequence[AuditEvent]) -> None:
        self._require_write()
        self.conn.execute(
            "INSERT INTO patches (namespace, id, tool, mode, reason, created_at, operations, summary) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s::json)",
            (
                self.namespace,
                patch.id,
                patch.tool,
                patch.mode,
                patch.reason,
                patch.created_at,
                patch.operations,
                _json(patch.summary),
            ),
        )
        if not events:
            return
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO audit_events (namespace, id, patch_id, object_id, action, created_at, data) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s::json)",
                [
                    (self.namespace, e.id, e.patch_id, e.object_id, e.action, e.created_at, _json(e.data))
                    for e in events
                ],
            )

    def set_config(self, key: str, value: object) -> None:
        self._require_write()
        self.conn.execute(
            "INSERT INTO config (namespace, key, value) VALUES (%s, %s, %s::json) "
            "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value",
            (self.namespace, key, dumps(value)),
        )

    def repair_stored_json(self, rows: Sequence[StoredJson]) -> list[StoredJson]:
        self._require_write()
        return []  # none can be found (PostgresReads.stored_json_problems)


class PostgresSession(PostgresWrites, PostgresGraph):
    """One namespace, one transaction on one pooled connection."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        namespace: str,
        writable: bool,
        *,
        hnsw_dims: set[int],
        iterative_scan: bool,
        halfvec: bool,
        term_stats: TermStats,
    ) -> None:
        self.conn = conn
        self.namespace = namespace
        self.writable = writable
        self.hnsw_dims = hnsw_dims
        self.iterative_scan = iterative_scan
        self.halfvec = halfvec
        self.term_stats = term_stats
        self.pending_dims = set()
