"""The write half of a SQLite session: every mutation, each inside the session's transaction."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from memory_substrate.errors import StorageError
from memory_substrate.models import AuditEvent, MemoryObject, PatchRecord, Relation, SearchDoc, Segment
from memory_substrate.storage.json_text import dumps
from memory_substrate.storage.outbox import OBJECT, RELATION
from memory_substrate.storage.ranking import ranking_columns, reindexed_columns
from memory_substrate.storage.sqlite.fts_spaces import NamespaceFts
from memory_substrate.storage.sqlite.outbox import SQLiteOutbox
from memory_substrate.storage.vector_cache import VectorStep


class SessionWrites(SQLiteOutbox, NamespaceFts):
    conn: sqlite3.Connection
    namespace: str
    writable: bool
    vectors_written: bool
    vector_steps: list[VectorStep]

    def _require_write(self) -> None:
        if not self.writable:
            raise StorageError("write attempted in a read session")

    def _fts_object(self, pk: int, search: SearchDoc) -> None:
        self.conn.execute(
            f"INSERT INTO {self.fts_for_write().objects} (rowid, title, summary, body, meta) VALUES (?, ?, ?, ?, ?)",
            (pk, search.title, search.summary, search.body, search.meta),
        )

    def insert_object(self, obj: MemoryObject, search: SearchDoc, claim_key: str | None) -> None:
        self._require_write()
        cur = self.conn.execute(
            "INSERT INTO objects (namespace, id, object_type, kind, status, uri, claim_key, created_at, updated_at, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.namespace,
                obj.id,
                obj.object_type,
                obj.kind,
                obj.status,
                obj.metadata.get("uri") if obj.object_type == "source" else None,
                claim_key,
                obj.created_at,
                obj.updated_at,
                dumps(obj.to_dict()),
            ),
        )
        assert cur.lastrowid is not None
        self._fts_object(cur.lastrowid, search)
        self._touch(OBJECT, [obj.id])

    def update_object(self, obj: MemoryObject, search: SearchDoc, claim_key: str | None) -> None:
        self._require_write()
        row = self.conn.execute(
            "SELECT pk FROM objects WHERE namespace = ? AND id = ?", (self.namespace, obj.id)
        ).fetchone()
        if row is None:
            raise StorageError(f"cannot update missing object {obj.id}")
        pk = row[0]
        self.conn.execute(
            "UPDATE objects SET kind = ?, status = ?, claim_key = ?, updated_at = ?, data = ? WHERE pk = ?",
            (obj.kind, obj.status, claim_key, obj.updated_at, dumps(obj.to_dict()), pk),
        )
        self.conn.execute(f"DELETE FROM {self.fts_for_write().objects} WHERE rowid = ?", (pk,))
        self._fts_object(pk, search)
        self._touch(OBJECT, [obj.id])

    def insert_segments(self, segments: Iterable[tuple[Segment, str, str]]) -> None:
        self._require_write()
        fts_insert = ""  # the namespace's tables are made for its first row, not for an empty call
        for seg, body, meta in segments:
            cur = self.conn.execute(
                "INSERT INTO segments (namespace, source_id, id, ordinal, text, locator, hash, metadata, created_at, "
                "terms, speaker, said_at, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.namespace,
                    seg.source_id,
                    seg.id,
                    seg.ordinal,
                    seg.text,
                    dumps(seg.locator),
                    seg.hash,
                    dumps(seg.metadata),
                    seg.created_at,
                    *ranking_columns(seg),
                ),
            )
            fts_insert = (
                fts_insert
                or f"INSERT INTO {self.fts_for_write().segments} (rowid, body, meta) VALUES (?, ?, ?)"
            )
            self.conn.execute(fts_insert, (cur.lastrowid, body, meta))

    def insert_relations(self, relations: Iterable[Relation]) -> None:
        self._require_write()
        relations = list(relations)
        self._touch(RELATION, (r.id for r in relations))
        self.conn.executemany(
            "INSERT OR REPLACE INTO relations (namespace, id, rel_type, source_id, target_id, origin_id, payload, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    self.namespace,
                    r.id,
                    r.rel_type,
                    r.source_id,
                    r.target_id,
                    r.origin_id,
                    dumps(r.payload),
                    r.created_at,
                )
                for r in relations
            ],
        )

    def delete_relations_from_origin(self, origin_id: str) -> int:
        self._require_write()
        ids = [
            r[0]
            for r in self.conn.execute(
                "DELETE FROM relations WHERE namespace = ? AND origin_id = ? RETURNING id",
                (self.namespace, origin_id),
            )
        ]
        self._touch(RELATION, ids)
        return len(ids)

    def delete_relations(self, relation_ids: Sequence[str]) -> int:
        self._require_write()
        ids = list(dict.fromkeys(relation_ids))
        self._touch(RELATION, ids)
        deleted = 0
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            cur = self.conn.execute(
                f"DELETE FROM relations WHERE namespace = ? AND id IN ({','.join('?' * len(chunk))})",
                (self.namespace, *chunk),
            )
            deleted += cur.rowcount
        return deleted

    def delete_object(self, object_id: str) -> bool:
        self._require_write()
        ns = self.namespace
        row = self.conn.execute(
            "SELECT pk FROM objects WHERE namespace = ? AND id = ?", (ns, object_id)
        ).fetchone()
        if row is None:
            return False
        fts = self.fts()
        if fts is not None:
            self.conn.execute(f"DELETE FROM {fts.objects} WHERE rowid = ?", (row[0],))
        self.conn.execute("DELETE FROM objects WHERE pk = ?", (row[0],))
        self.conn.execute("DELETE FROM object_keys WHERE namespace = ? AND object_id = ?", (ns, object_id))
        for rel_col in ("source_id", "target_id", "origin_id"):
            gone = self.conn.execute(
                f"DELETE FROM relations WHERE namespace = ? AND {rel_col} = ? RETURNING id", (ns, object_id)
            ).fetchall()
            # derived backends replay these ids, find them gone from the store, and drop them too
            self._touch(RELATION, [r[0] for r in gone])
        self._touch(OBJECT, [object_id])
        seg_pks = [
            r[0]
            for r in self.conn.execute(
                "SELECT pk FROM segments WHERE namespace = ? AND source_id = ?", (ns, object_id)
            )
        ]
        if fts is not None:
            for pk in seg_pks:
                self.conn.execute(f"DELETE FROM {fts.segments} WHERE rowid = ?", (pk,))
        self.conn.execute("DELETE FROM segments WHERE namespace = ? AND source_id = ?", (ns, object_id))
        # Vector rows are keyed by owner type first; the few owner types come from vector_versions.
        owner_types = [
            r[0]
            for r in self.conn.execute("SELECT owner_type FROM vector_versions WHERE namespace = ?", (ns,))
        ]
        for owner_type in owner_types:
            if owner_type == "segment":
                gone_vectors = self.conn.execute(
                    "DELETE FROM vectors WHERE namespace = ? AND owner_type = 'segment' AND owner_id >= ? AND owner_id < ? "
                    "RETURNING owner_id, model",
                    (ns, object_id + "#", object_id + "#\U0010ffff"),
                ).fetchall()
            else:
                gone_vectors = self.conn.execute(
                    "DELETE FROM vectors WHERE namespace = ? AND owner_type = ? AND owner_id = ? RETURNING owner_id, model",
                    (ns, owner_type, object_id),
                ).fetchall()
            for owner_id, model in gone_vectors:  # a vector mirror (LanceDB) drops them on replay
                self._touch(f"vector:{owner_type}", [owner_id], model)
            if gone_vectors:  # cached matrices of this owner type are now stale
                # ...and this transaction's are its own until it commits: a search later in it
                # must not leave its uncommitted matrix in the shared cache under a version
                # number a rollback frees for reuse.
                self.vectors_written = True
                (version,) = self.conn.execute(
                    "UPDATE vector_versions SET version = version + 1 WHERE namespace = ? AND owner_type = ? "
                    "RETURNING version",
                    (ns, owner_type),
                ).fetchone()
                self.vector_steps.append(
                    VectorStep(owner_type, version - 1, version, removals=[(o, m) for o, m in gone_vectors])
                )
        return True

    def replace_segment_search(self, rows: Iterable[tuple[str, str, str, str]]) -> int:
        self._require_write()
        done = 0
        for source_id, segment_id, body, meta in rows:
            row = self.conn.execute(
                "SELECT pk, text, metadata FROM segments WHERE namespace = ? AND source_id = ? AND id = ?",
                (self.namespace, source_id, segment_id),
            ).fetchone()
            if row is None:
                continue
            # The ranker's stored terms and language are rebuilt with the search row (and filled on
            # rows stored without them).
            self.conn.execute(
                "UPDATE segments SET terms = ?, language = ? WHERE pk = ?",
                (*reindexed_columns(row[1], row[2]), row[0]),
            )
            fts = self.fts_for_write()
            self.conn.execute(f"DELETE FROM {fts.segments} WHERE rowid = ?", (row[0],))
            self.conn.execute(
                f"INSERT INTO {fts.segments} (rowid, body, meta) VALUES (?, ?, ?)", (row[0], body, meta)
            )
            done += 1
        return done

    def upsert_vectors(
        self, model: str, owner_type: str, rows: Sequence[tuple[str, npt.NDArray[np.float32]]]
    ) -> None:
        self._require_write()
        if not rows:
            return
        self._touch(f"vector:{owner_type}", (oid for oid, _ in rows), model)
        self.vectors_written = True
        self.conn.executemany(
            "INSERT OR REPLACE INTO vectors (namespace, owner_type, owner_id, model, dim, vec) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    self.namespace,
                    owner_type,
                    oid,
                    model,
                    int(v.shape[0]),
                    np.asarray(v, dtype=np.float32).tobytes(),
                )
                for oid, v in rows
            ],
        )
        fresh = time.time_ns() // 1000
        (version,) = self.conn.execute(
            # A fresh counter starts from the clock, not 1, so a namespace deleted and re-created
            # never reuses a version another process may still hold a cached matrix for.
            "INSERT INTO vector_versions (namespace, owner_type, version) VALUES (?, ?, ?) "
            "ON CONFLICT (namespace, owner_type) DO UPDATE SET version = version + 1 RETURNING version",
            (self.namespace, owner_type, fresh),
        ).fetchone()
        # After commit the cache applies this step to a matrix cached at version - 1 (see vector_cache).
        self.vector_steps.append(
            VectorStep(owner_type, None if version == fresh else version - 1, version, model, list(rows))
        )

    def record_patch(self, patch: PatchRecord, events: Sequence[AuditEvent]) -> None:
        self._require_write()
        self.conn.execute(
            "INSERT INTO patches (namespace, id, tool, mode, reason, created_at, operations, summary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.namespace,
                patch.id,
                patch.tool,
                patch.mode,
                patch.reason,
                patch.created_at,
                patch.operations,
                dumps(patch.summary),
            ),
        )
        self.conn.executemany(
            "INSERT INTO audit_events (namespace, id, patch_id, object_id, action, created_at, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (self.namespace, e.id, e.patch_id, e.object_id, e.action, e.created_at, dumps(e.data))
                for e in events
            ],
        )

    def set_config(self, key: str, value: object) -> None:
        self._require_write()
        self.conn.execute(
            "INSERT INTO config (namespace, key, value) VALUES (?, ?, ?) "
            "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value",
            (self.namespace, key, dumps(value)),
        )
