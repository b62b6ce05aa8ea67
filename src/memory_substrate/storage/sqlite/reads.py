"""Reads inside one namespace of the SQLite store: objects, segments, vectors, relations, events
and patches (the read half of ``StoreSession``; writes.py holds the other, as on PostgreSQL)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.json_types import JsonObject
from memory_substrate.models import (
    AuditEvent,
    MemoryObject,
    ObjectHead,
    PatchRecord,
    Relation,
    Segment,
)
from memory_substrate.storage.base import ID_TAIL_CHARS
from memory_substrate.storage.ranges import merge_ranges
from memory_substrate.storage.sqlite.fts_spaces import NamespaceFts
from memory_substrate.storage.vector_cache import VectorCache

_LIGHT_COLS = "s.source_id, s.id, s.ordinal, s.text, s.speaker, s.said_at, s.created_at, s.terms, s.language"
_LOAD_BATCH = 4_096  # vector rows read at a time when a partition is loaded


def _light_segment(r: tuple[Any, ...]) -> Segment:
    # Runs for every window row of a segment search (several hundred): positional arguments and
    # no comprehension (a third of the cost of the keyword form).
    meta = {}
    if r[4] is not None:
        meta["name"] = r[4]
    if r[5] is not None:
        meta["created_at"] = r[5]
    return Segment(r[0], r[1], r[2], r[3], {}, "", meta, r[6], r[7], r[8])


def _obj(row: sqlite3.Row | tuple[Any, ...]) -> MemoryObject:
    return MemoryObject.from_dict(json.loads(row[0]))


class SQLiteReads(NamespaceFts):
    """The session's reads. ``conn`` holds the session's transaction; ``_vectors`` is the store's
    shared matrix cache, which a session that wrote vectors (``vectors_written``) must not use."""

    conn: sqlite3.Connection
    namespace: str
    _vectors: VectorCache
    vectors_written: bool

    # --- objects -------------------------------------------------------------------
    def get_object(self, object_id: str) -> MemoryObject | None:
        row = self.conn.execute(
            "SELECT data FROM objects WHERE namespace = ? AND id = ?", (self.namespace, object_id)
        ).fetchone()
        return _obj(row) if row else None

    def get_objects(self, object_ids: Sequence[str]) -> dict[str, MemoryObject]:
        out: dict[str, MemoryObject] = {}
        ids = list(dict.fromkeys(object_ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                f"SELECT data FROM objects WHERE namespace = ? AND id IN ({marks})", (self.namespace, *chunk)
            ):
                obj = _obj(row)
                out[obj.id] = obj
        return out

    def get_object_heads(self, object_ids: Sequence[str]) -> dict[str, ObjectHead]:
        out: dict[str, ObjectHead] = {}
        ids = list(dict.fromkeys(object_ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            rows = self.conn.execute(
                "SELECT id, object_type, kind, status, json_extract(data, '$.title'), json_extract(data, '$.summary') "
                f"FROM objects WHERE namespace = ? AND id IN ({','.join('?' * len(chunk))})",
                (self.namespace, *chunk),
            )
            for r in rows:
                out[r[0]] = ObjectHead(r[0], r[1], r[2], r[3], r[4] or "", r[5] or "")
        return out

    def ids_by_tail(self, tails: Sequence[str]) -> list[str]:
        wanted = sorted({t for t in tails if len(t) == ID_TAIL_CHARS})
        out: set[str] = set()
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            rows = self.conn.execute(  # substr(id, -6) as written in the index objects_ns_tail
                f"SELECT id FROM objects WHERE namespace = ? AND substr(id, -6) IN ({','.join('?' * len(chunk))})",
                (self.namespace, *chunk),
            )
            out.update(r[0] for r in rows)
        return sorted(out)

    def list_objects(
        self,
        *,
        object_types: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
        order: str = "updated_desc",
        limit: int = 50,
        offset: int = 0,
    ) -> list[MemoryObject]:
        where = ["namespace = ?"]
        params: list[Any] = [self.namespace]
        for column, values in (
            ("object_type", object_types),
            ("kind", kinds),
            ("status", statuses),
            ("id", ids),
        ):
            if values:
                where.append(f"{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        order_sql = {
            "updated_desc": "updated_at DESC, id DESC",
            "created_asc": "created_at ASC, id ASC",
            "created_desc": "created_at DESC, id DESC",
        }[order]
        sql = f"SELECT data FROM objects WHERE {' AND '.join(where)} ORDER BY {order_sql} LIMIT ? OFFSET ?"
        return [_obj(r) for r in self.conn.execute(sql, (*params, limit, offset))]

    def find_by_claim(self, claim_key: str) -> list[MemoryObject]:
        rows = self.conn.execute(
            "SELECT data FROM objects WHERE namespace = ? AND claim_key = ?", (self.namespace, claim_key)
        )
        return [_obj(r) for r in rows]

    def find_source_by_uri(self, uri: str) -> MemoryObject | None:
        row = self.conn.execute(
            "SELECT data FROM objects WHERE namespace = ? AND uri = ? AND object_type = 'source' "
            "AND status = 'active' ORDER BY created_at DESC LIMIT 1",
            (self.namespace, uri),
        ).fetchone()
        return _obj(row) if row else None

    def count_objects(self) -> list[tuple[str, str, str, int]]:
        rows = self.conn.execute(
            "SELECT object_type, kind, status, COUNT(*) FROM objects WHERE namespace = ? "
            "GROUP BY object_type, kind, status ORDER BY 1, 2, 3",
            (self.namespace,),
        )
        return [(r[0], r[1], r[2], int(r[3])) for r in rows]

    # --- segments --------------------------------------------------------------------
    @staticmethod
    def _seg(row: tuple[Any, ...]) -> Segment:
        return Segment(
            source_id=row[0],
            id=row[1],
            ordinal=row[2],
            text=row[3],
            locator=json.loads(row[4]),
            hash=row[5],
            metadata=json.loads(row[6]),
            created_at=row[7],
        )

    _SEG_COLS = "source_id, id, ordinal, text, locator, hash, metadata, created_at"

    def get_segments(
        self,
        source_id: str,
        *,
        segment_ids: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Segment]:
        params: list[Any] = [self.namespace, source_id]
        extra = ""
        if segment_ids is not None:
            if not segment_ids:
                return []
            extra = f" AND id IN ({','.join('?' * len(segment_ids))})"
            params.extend(segment_ids)
        sql = (
            f"SELECT {self._SEG_COLS} FROM segments WHERE namespace = ? AND source_id = ?{extra} "
            f"ORDER BY ordinal LIMIT ? OFFSET ?"
        )
        params.extend([-1 if limit is None else limit, offset])
        return [self._seg(r) for r in self.conn.execute(sql, params)]

    def _segments_joined(
        self, rows: Sequence[tuple[Any, ...]], columns: str, join: str, batch: int, *, light: bool = False
    ) -> list[Segment]:
        """Segments matched by a VALUES list of keys: SQLite probes the segment index once per row."""
        out: list[Segment] = []
        cols = _LIGHT_COLS if light else ", ".join(f"s.{c.strip()}" for c in self._SEG_COLS.split(","))
        convert = _light_segment if light else self._seg
        marks = "(" + ", ".join("?" * len(rows[0])) + ")" if rows else ""
        for i in range(0, len(rows), batch):
            chunk = rows[i : i + batch]
            flat = [v for r in chunk for v in r]
            sql = (
                f"WITH k({columns}) AS (VALUES {','.join(marks for _ in chunk)}) SELECT {cols} FROM k "
                f"JOIN segments s ON s.namespace = ? AND {join}"
            )
            out.extend(convert(r) for r in self.conn.execute(sql, (*flat, self.namespace)))
        return out

    def get_segments_by_keys(self, keys: Sequence[tuple[str, str]], *, light: bool = False) -> list[Segment]:
        keys = list(dict.fromkeys(keys))
        return self._segments_joined(
            keys, "src, sid", "s.source_id = k.src AND s.id = k.sid", 400, light=light
        )

    def segment_windows(
        self, ranges: Sequence[tuple[str, int, int]], *, light: bool = False
    ) -> list[Segment]:
        # Disjoint ranges, so no segment comes back twice, whichever batch its range falls in.
        merged = merge_ranges(ranges)
        join = "s.source_id = k.src AND s.ordinal BETWEEN k.lo AND k.hi"
        return self._segments_joined(merged, "src, lo, hi", join, 300, light=light)

    def count_segments(self, source_id: str | None = None) -> int:
        if source_id is None:
            row = self.conn.execute(
                "SELECT COUNT(*) FROM segments WHERE namespace = ?", (self.namespace,)
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT COUNT(*) FROM segments WHERE namespace = ? AND source_id = ?",
                (self.namespace, source_id),
            ).fetchone()
        return int(row[0])

    def iter_segments(self, *, batch_size: int = 1000) -> Iterator[Segment]:
        """Every segment of the namespace, ordered by (source_id, ordinal, id): bulk export."""
        cur = self.conn.execute(
            f"SELECT {self._SEG_COLS} FROM segments WHERE namespace = ? ORDER BY source_id, ordinal, id",
            (self.namespace,),
        )
        while rows := cur.fetchmany(batch_size):
            yield from (self._seg(r) for r in rows)

    # --- text and vectors ----------------------------------------------------------------
    def _vector_version(self, owner_type: str) -> int:
        row = self.conn.execute(
            "SELECT version FROM vector_versions WHERE namespace = ? AND owner_type = ?",
            (self.namespace, owner_type),
        ).fetchone()
        return int(row[0]) if row else 0

    def _vector_loader(
        self, model: str, owner_type: str
    ) -> Callable[[], tuple[list[str], npt.NDArray[np.float32]]]:
        def load() -> tuple[list[str], npt.NDArray[np.float32]]:
            # Read in batches into one matrix: the rows' blobs and a joined copy of them, held
            # together, were twice the matrix's size at its peak (314 MB each at 100k turns of the
            # default embedder's 784 dimensions). The count and the rows are read in the
            # session's one transaction, so they agree.
            where = (self.namespace, owner_type, model)
            clause = "FROM vectors WHERE namespace = ? AND owner_type = ? AND model = ?"
            count = int(self.conn.execute(f"SELECT COUNT(*) {clause}", where).fetchone()[0])
            cur = self.conn.execute(f"SELECT owner_id, vec, dim {clause}", where)
            ids: list[str] = []
            matrix = np.zeros((0, 0), dtype=np.float32)
            while rows := cur.fetchmany(_LOAD_BATCH):
                if not ids:
                    matrix = np.empty((count, rows[0][2]), dtype=np.float32)
                block = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                matrix[len(ids) : len(ids) + len(rows)] = block.reshape(len(rows), matrix.shape[1])
                ids.extend(r[0] for r in rows)
            return ids, matrix[: len(ids)]

        return load

    def vector_search(
        self, model: str, query: npt.NDArray[np.float32], *, owner_type: str, limit: int
    ) -> list[tuple[str, float]]:
        version = self._vector_version(owner_type)
        load = self._vector_loader(model, owner_type)
        return self._vectors.search(
            (self.namespace, owner_type, model), version, load, query, limit, cache=not self.vectors_written
        )

    def get_vectors(
        self, model: str, owner_type: str, owner_ids: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        version = self._vector_version(owner_type)
        load = self._vector_loader(model, owner_type)
        return self._vectors.lookup(
            (self.namespace, owner_type, model),
            version,
            load,
            list(owner_ids),
            cache=not self.vectors_written,
        )

    def vector_stats(self) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT owner_type || ':' || model, COUNT(*) FROM vectors WHERE namespace = ? GROUP BY 1",
            (self.namespace,),
        )
        return {r[0]: int(r[1]) for r in rows}

    def vector_owners(self, owner_type: str) -> list[tuple[str, str]]:
        rows = self.conn.execute(
            "SELECT owner_id, model FROM vectors WHERE namespace = ? AND owner_type = ?",
            (self.namespace, owner_type),
        )
        return [(r[0], r[1]) for r in rows]

    def objects_missing_search(self, *, limit: int = 100_000) -> list[str]:
        fts = self.fts()
        indexed = f"AND NOT EXISTS (SELECT 1 FROM {fts.objects} f WHERE f.rowid = o.pk) " if fts else ""
        rows = self.conn.execute(
            f"SELECT o.id FROM objects o WHERE o.namespace = ? {indexed}ORDER BY o.id LIMIT ?",
            (self.namespace, limit),
        )
        return [r[0] for r in rows]

    def segments_missing_search(self, *, limit: int = 100_000) -> list[tuple[str, str]]:
        fts = self.fts()
        indexed = f"AND NOT EXISTS (SELECT 1 FROM {fts.segments} f WHERE f.rowid = s.pk) " if fts else ""
        rows = self.conn.execute(
            f"SELECT s.source_id, s.id FROM segments s WHERE s.namespace = ? {indexed}ORDER BY s.source_id, s.ordinal LIMIT ?",
            (self.namespace, limit),
        )
        return [(r[0], r[1]) for r in rows]

    def iter_vectors(
        self, *, batch_size: int = 1000
    ) -> Iterator[tuple[str, str, str, npt.NDArray[np.float32]]]:
        """Every stored vector as (owner_type, owner_id, model, vector), ordered by owner: bulk export."""
        cur = self.conn.execute(
            "SELECT owner_type, owner_id, model, vec FROM vectors WHERE namespace = ? ORDER BY owner_type, owner_id",
            (self.namespace,),
        )
        while rows := cur.fetchmany(batch_size):
            for r in rows:
                yield r[0], r[1], r[2], np.frombuffer(r[3], dtype=np.float32).copy()

    # --- graph, history, config -------------------------------------------------------
    _REL_COLS = "id, rel_type, source_id, target_id, origin_id, payload, created_at"

    @staticmethod
    def _rel(r: tuple[Any, ...]) -> Relation:
        return Relation(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6])

    def relations_of(self, object_ids: Sequence[str], *, limit: int = 500) -> list[Relation]:
        if not object_ids:
            return []
        marks = ",".join("?" * len(object_ids))
        rows = self.conn.execute(
            f"SELECT {self._REL_COLS} FROM relations WHERE namespace = ? AND source_id IN ({marks}) "
            f"UNION SELECT {self._REL_COLS} FROM relations WHERE namespace = ? AND target_id IN ({marks}) "
            "ORDER BY created_at, id LIMIT ?",
            (self.namespace, *object_ids, self.namespace, *object_ids, limit),
        )
        return [self._rel(r) for r in rows]

    def edges_of(self, object_ids: Sequence[str], *, limit: int) -> list[tuple[str, str, str, str]]:
        if not object_ids:
            return []
        marks = ",".join("?" * len(object_ids))
        cols = "id, rel_type, source_id, target_id"
        # UNION ALL stops at the limit; UNION would first collect every edge of a hub (25x slower).
        # The second half skips edges the first has (both ends among the ids), so the limit counts
        # distinct edges and a read that returns fewer than ``limit`` is complete.
        rows = self.conn.execute(
            f"SELECT {cols} FROM relations WHERE namespace = ? AND source_id IN ({marks}) "
            f"UNION ALL SELECT {cols} FROM relations WHERE namespace = ? AND target_id IN ({marks}) "
            f"AND +source_id NOT IN ({marks}) LIMIT ?",
            (self.namespace, *object_ids, self.namespace, *object_ids, *object_ids, limit),
        )
        return list(rows)

    def edges_between(
        self, ids_a: Sequence[str], ids_b: Sequence[str], *, limit: int
    ) -> list[tuple[str, str, str, str]]:
        if not ids_a or not ids_b:
            return []
        # Driven from the smaller side's covering index; the other side's ids are tested, not
        # sought ("+" keeps SQLite from seeking every (a, b) pair: |a| x |b| seeks).
        small, big = (ids_a, ids_b) if len(ids_a) <= len(ids_b) else (ids_b, ids_a)
        ms, mb = ",".join("?" * len(small)), ",".join("?" * len(big))
        cols = "id, rel_type, source_id, target_id"
        # The second half skips the edges the first has, so the limit counts distinct edges.
        rows = self.conn.execute(
            f"SELECT {cols} FROM relations WHERE namespace = ? AND source_id IN ({ms}) AND +target_id IN ({mb}) "
            f"UNION ALL SELECT {cols} FROM relations WHERE namespace = ? AND target_id IN ({ms}) "
            f"AND +source_id IN ({mb}) AND NOT (+source_id IN ({ms}) AND +target_id IN ({mb})) LIMIT ?",
            (self.namespace, *small, *big, self.namespace, *small, *big, *small, *big, limit),
        )
        return list(rows)

    def relations_among(self, object_ids: Sequence[str], *, limit: int = 10_000) -> list[Relation]:
        if not object_ids:
            return []
        marks = ",".join("?" * len(object_ids))
        rows = self.conn.execute(
            f"SELECT {self._REL_COLS} FROM relations WHERE namespace = ? AND source_id IN ({marks}) "
            f"AND target_id IN ({marks}) ORDER BY created_at, id LIMIT ?",
            (self.namespace, *object_ids, *object_ids, limit),
        )
        return [self._rel(r) for r in rows]

    def list_relations(self, *, limit: int = 10_000) -> list[Relation]:
        rows = self.conn.execute(
            f"SELECT {self._REL_COLS} FROM relations WHERE namespace = ? ORDER BY created_at, id LIMIT ?",
            (self.namespace, limit),
        )
        return [self._rel(r) for r in rows]

    def list_events(self, *, object_id: str | None = None, limit: int = 50) -> list[AuditEvent]:
        cols = "id, patch_id, object_id, action, created_at, data"
        if object_id:
            rows = self.conn.execute(
                f"SELECT {cols} FROM audit_events WHERE namespace = ? AND object_id = ? "
                "ORDER BY created_at DESC, id DESC LIMIT ?",
                (self.namespace, object_id, limit),
            )
        else:
            rows = self.conn.execute(
                f"SELECT {cols} FROM audit_events WHERE namespace = ? ORDER BY created_at DESC, id DESC LIMIT ?",
                (self.namespace, limit),
            )
        return [AuditEvent(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows]

    def list_patches(self, *, limit: int = 50) -> list[PatchRecord]:
        rows = self.conn.execute(
            "SELECT id, tool, mode, reason, created_at, operations, summary FROM patches WHERE namespace = ? "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            (self.namespace, limit),
        )
        return [PatchRecord(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6])) for r in rows]

    def get_config(self) -> JsonObject:
        rows = self.conn.execute("SELECT key, value FROM config WHERE namespace = ?", (self.namespace,))
        return {r[0]: json.loads(r[1]) for r in rows}
