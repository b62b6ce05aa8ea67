"""Read methods of a PostgreSQL session (used by read and write sessions alike)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg

from memory_substrate.errors import StorageError
from memory_substrate.json_types import JsonObject
from memory_substrate.models import (
    AuditEvent,
    MemoryObject,
    ObjectHead,
    PatchRecord,
    Relation,
    Segment,
    SegmentHit,
    TextHit,
)
from memory_substrate.storage.base import ID_TAIL_CHARS
from memory_substrate.storage.json_text import StoredJson
from memory_substrate.storage.postgres.fts import (
    OBJECT_WEIGHTS,
    SEGMENT_WEIGHTS,
    fold,
    tsquery,
    tsquery_groups,
)
from memory_substrate.storage.postgres.fts_plan import TermStats
from memory_substrate.storage.postgres.vector_index import index_expression
from memory_substrate.storage.ranges import merge_ranges

ORDERS = {
    "updated_desc": "updated_at DESC, id DESC",
    "created_asc": "created_at ASC, id ASC",
    "created_desc": "created_at DESC, id DESC",
}
SEG_COLS = "source_id, id, ordinal, text, locator, hash, metadata, created_at"
# Light rows, for ranking only: no locator or hash, just the speaker and date of the metadata.
# The text comes as its JSON literal, decoded for all rows at once (``_light_segs``).
LIGHT_COLS = "source_id, id, ordinal, text::text, speaker, said_at, created_at, terms, language"
REL_COLS = "id, rel_type, source_id, target_id, origin_id, payload, created_at"
# pgvector's HNSW index handles up to 2000 dimensions; larger vectors are searched exactly.
HNSW_MAX_DIM = 2000
# Extra candidates asked of a half-precision index (at most as many as wanted), rescored exactly.
RESCORE_EXTRA = 10
# Index entries a filtered HNSW search may visit (pgvector's hnsw.max_scan_tuples, default 20,000).
# Each dimension has one index over every owner type, so a search for a rare type (10,000 object
# vectors among a million turns') walks about a hundred entries for each row it keeps: at 1M
# turns 106 / 117 ms (p50 / p95) for the object stream, against 15 / 20 ms with this bound. The
# bound keeps the nearest rows of the type among the entries nearest the query; a type that
# common rows crowd out of those returns fewer rows than asked. It never binds on a store of
# fewer vectors than this, nor for a type that is most of the index.
MAX_SCAN_TUPLES = 2_000


def _seg(r: Sequence[Any]) -> Segment:
    return Segment(
        source_id=r[0],
        id=r[1],
        ordinal=r[2],
        text=r[3],
        locator=r[4],
        hash=r[5],
        metadata=r[6],
        created_at=r[7],
    )


def _light_segs(rows: Sequence[Sequence[Any]]) -> list[Segment]:
    # The text column holds a JSON string (so NUL characters survive). One json.loads over all
    # the rows' literals costs a fraction of the driver's decode per row (~700 rows a search).
    texts = json.loads("[" + ",".join(r[3] for r in rows) + "]") if rows else []
    return [
        Segment(
            source_id=r[0],
            id=r[1],
            ordinal=r[2],
            text=text,
            locator={},
            hash="",
            metadata={k: v for k, v in (("name", r[4]), ("created_at", r[5])) if v is not None},
            created_at=r[6],
            terms=r[7],
            language=r[8],
        )
        for r, text in zip(rows, texts, strict=True)
    ]


def _as_array(value: Any) -> npt.NDArray[np.float32]:
    # pgvector loads text-format vectors as numpy arrays and binary-format ones as Vector.
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def _rel(r: Sequence[Any]) -> Relation:
    return Relation(r[0], r[1], r[2], r[3], r[4], r[5], r[6])


class PostgresReads:
    """Reads inside one namespace. ``conn`` holds an open transaction for the session's lifetime."""

    conn: psycopg.Connection[Any]
    namespace: str
    writable: bool
    iterative_scan: bool
    halfvec: bool
    term_stats: TermStats

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()

    def stored_json_problems(self, *, limit: int = 1000) -> list[StoredJson]:
        # Every JSON column has PostgreSQL's json type, which refuses at write any text that is
        # not JSON, and NaN and Infinity are not JSON: no stored row can hold what readers refuse.
        return []

    # --- objects -------------------------------------------------------------------
    def get_object(self, object_id: str) -> MemoryObject | None:
        rows = self._rows(
            "SELECT data FROM objects WHERE namespace = %s AND id = %s", (self.namespace, object_id)
        )
        return MemoryObject.from_dict(rows[0][0]) if rows else None

    def get_objects(self, object_ids: Sequence[str]) -> dict[str, MemoryObject]:
        ids = list(dict.fromkeys(object_ids))
        if not ids:
            return {}
        rows = self._rows(
            "SELECT data FROM objects WHERE namespace = %s AND id = ANY(%s)", (self.namespace, ids)
        )
        out: dict[str, MemoryObject] = {}
        for (data,) in rows:
            obj = MemoryObject.from_dict(data)
            out[obj.id] = obj
        return out

    def get_object_heads(self, object_ids: Sequence[str]) -> dict[str, ObjectHead]:
        ids = list(dict.fromkeys(object_ids))
        if not ids:
            return {}
        rows = self._rows(
            "SELECT id, object_type, kind, status, data->>'title', data->>'summary' FROM objects "
            "WHERE namespace = %s AND id = ANY(%s)",
            (self.namespace, ids),
        )
        return {r[0]: ObjectHead(r[0], r[1], r[2], r[3], r[4] or "", r[5] or "") for r in rows}

    def ids_by_tail(self, tails: Sequence[str]) -> list[str]:
        wanted = sorted({t for t in tails if len(t) == ID_TAIL_CHARS})
        if not wanted:
            return []
        rows = self._rows(  # right(id, 6) as written in the index objects_ns_tail
            "SELECT id FROM objects WHERE namespace = %s AND right(id, 6) = ANY(%s) ORDER BY id",
            (self.namespace, wanted),
        )
        return [r[0] for r in rows]

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
        where = ["namespace = %s"]
        params: list[Any] = [self.namespace]
        for column, values in (
            ("object_type", object_types),
            ("kind", kinds),
            ("status", statuses),
            ("id", ids),
        ):
            if values:
                where.append(f"{column} = ANY(%s)")
                params.append(list(values))
        order_sql = ORDERS[order]
        sql = f"SELECT data FROM objects WHERE {' AND '.join(where)} ORDER BY {order_sql} LIMIT %s OFFSET %s"
        return [MemoryObject.from_dict(r[0]) for r in self._rows(sql, (*params, limit, offset))]

    def find_by_claim(self, claim_key: str) -> list[MemoryObject]:
        rows = self._rows(
            "SELECT data FROM objects WHERE namespace = %s AND claim_key = %s ORDER BY created_at, id",
            (self.namespace, claim_key),
        )
        return [MemoryObject.from_dict(r[0]) for r in rows]

    def find_source_by_uri(self, uri: str) -> MemoryObject | None:
        rows = self._rows(
            "SELECT data FROM objects WHERE namespace = %s AND uri = %s AND object_type = 'source' "
            "AND status = 'active' ORDER BY created_at DESC LIMIT 1",
            (self.namespace, uri),
        )
        return MemoryObject.from_dict(rows[0][0]) if rows else None

    def count_objects(self) -> list[tuple[str, str, str, int]]:
        rows = self._rows(
            "SELECT object_type, kind, status, COUNT(*) FROM objects WHERE namespace = %s "
            "GROUP BY object_type, kind, status ORDER BY 1, 2, 3",
            (self.namespace,),
        )
        return [(r[0], r[1], r[2], int(r[3])) for r in rows]

    # --- segments --------------------------------------------------------------------
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
            extra = " AND id = ANY(%s)"
            params.append(list(segment_ids))
        params.extend([limit, offset])  # LIMIT NULL is no limit
        sql = (
            f"SELECT {SEG_COLS} FROM segments WHERE namespace = %s AND source_id = %s{extra} "
            "ORDER BY ordinal LIMIT %s OFFSET %s"
        )
        return [_seg(r) for r in self._rows(sql, params)]

    def get_segments_by_keys(self, keys: Sequence[tuple[str, str]], *, light: bool = False) -> list[Segment]:
        keys = list(dict.fromkeys(keys))
        if not keys:
            return []
        rows = self._rows(
            f"SELECT {LIGHT_COLS if light else SEG_COLS} FROM segments WHERE namespace = %s "
            "AND (source_id, id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            (self.namespace, [k[0] for k in keys], [k[1] for k in keys]),
        )
        return _light_segs(rows) if light else [_seg(r) for r in rows]

    def segment_windows(
        self, ranges: Sequence[tuple[str, int, int]], *, light: bool = False
    ) -> list[Segment]:
        if not ranges:
            return []
        merged = merge_ranges(ranges)  # disjoint ranges: the join returns each segment once
        cols = (
            ", ".join("s." + c.strip() for c in LIGHT_COLS.split(","))
            if light
            else ", ".join("s." + c.strip() for c in SEG_COLS.split(","))
        )
        rows = self._rows(
            f"SELECT {cols} FROM unnest(%s::text[], %s::int[], %s::int[]) AS k(src, lo, hi) "
            "JOIN segments s ON s.namespace = %s AND s.source_id = k.src AND s.ordinal BETWEEN k.lo AND k.hi",
            ([r[0] for r in merged], [r[1] for r in merged], [r[2] for r in merged], self.namespace),
        )
        return _light_segs(rows) if light else [_seg(r) for r in rows]

    def count_segments(self, source_id: str | None = None) -> int:
        if source_id is None:
            rows = self._rows("SELECT COUNT(*) FROM segments WHERE namespace = %s", (self.namespace,))
        else:
            rows = self._rows(
                "SELECT COUNT(*) FROM segments WHERE namespace = %s AND source_id = %s",
                (self.namespace, source_id),
            )
        return int(rows[0][0])

    def iter_segments(self, *, batch_size: int = 1000) -> Iterator[Segment]:
        """Every segment of the namespace, ordered by (source_id, ordinal), fetched in batches."""
        with self.conn.cursor(name="ms_iter_segments") as cur:
            cur.itersize = batch_size
            cur.execute(
                f"SELECT {SEG_COLS} FROM segments WHERE namespace = %s ORDER BY source_id, ordinal, id",
                (self.namespace,),
            )
            for row in cur:
                yield _seg(row)

    # --- text and vectors ----------------------------------------------------------------
    def search_objects_text(self, terms: Sequence[str], *, limit: int) -> list[TextHit]:
        query = tsquery(terms)
        if not query:
            return []
        rows = self._rows(
            "SELECT o.id, ts_rank(%s::float4[], o.tsv, q) AS s FROM objects o, to_tsquery('simple', %s) q "
            "WHERE o.namespace = %s AND o.tsv @@ q ORDER BY s DESC, o.id LIMIT %s",
            (OBJECT_WEIGHTS, query, self.namespace, limit),
        )
        return [TextHit(r[0], float(r[1])) for r in rows]

    def search_segments_text(
        self, terms: Sequence[str], *, limit: int, source_ids: Sequence[str] | None = None
    ) -> list[SegmentHit]:
        query = tsquery(terms)
        if not query:
            return []
        if source_ids:  # the sources bound the scan: rank every match
            return self._rank_segments(
                query, query, limit, extra=" AND s.source_id = ANY(%s)", extra_params=[list(source_ids)]
            )
        folded = list(dict.fromkeys(fold(t) for t in terms if t and t.strip()))
        selective, common = self.term_stats.selective(self.conn, self.namespace, folded)
        levels, over = self.term_stats.conjunctive(self.conn, self.namespace, folded)
        if not common and not over:
            return self._rank_segments(query, query, limit)
        # Even the rarest term over the budget: the rows holding all the words, then all but
        # one, ranked by the whole query (storage/conjunctive.py), when they fill the page.
        hits: list[SegmentHit] = []
        taken: str | None = None
        for level in levels:
            taken = tsquery_groups(level)
            hits = self._rank_segments(query, taken, limit)
            if len(hits) >= limit:
                return hits
        # See fts_plan.py: rows holding a selective term, ranked by the whole query (from a capped
        # scan when even the rarest term is over the budget, after the rows the conjunction found);
        # rows holding only common terms fill the list when those are too few, from a capped scan.
        narrow = tsquery(selective)
        if taken is None:
            hits = self._rank_segments(query, narrow, limit, cap=self.term_stats.budget if over else None)
        else:
            hits += self._rank_segments(
                query, narrow, limit - len(hits), exclude=taken, cap=self.term_stats.budget
            )
            hits.sort(key=lambda h: (-h.score, h.source_id, h.segment_id))
            narrow = f"({narrow}) | {taken}"
        if len(hits) < limit and common:
            hits += self._rank_segments(
                query, tsquery(common), limit - len(hits), exclude=narrow, cap=self.term_stats.budget
            )
        return hits

    def _rank_segments(
        self,
        query: str,
        match: str,
        limit: int,
        *,
        extra: str = "",
        extra_params: Sequence[Any] = (),
        exclude: str | None = None,
        cap: int | None = None,
    ) -> list[SegmentHit]:
        """Rows matching the tsquery ``match`` and not ``exclude``, best ``ts_rank`` for ``query``
        first; with ``cap``, only the first ``cap`` matches the index scan finds are ranked."""
        where = f"s.namespace = %s AND s.tsv @@ to_tsquery('simple', %s){extra}"
        params: list[Any] = [self.namespace, match, *extra_params]
        if exclude is not None:
            where += " AND NOT s.tsv @@ to_tsquery('simple', %s)"
            params.append(exclude)
        source = f"segment_search s, to_tsquery('simple', %s) q WHERE {where}"
        if cap is not None:
            source = (
                f"(SELECT s.source_id, s.id, s.tsv FROM segment_search s WHERE {where} LIMIT %s) s, "
                "to_tsquery('simple', %s) q"
            )
            params = [*params, cap, query]
        else:
            params = [query, *params]
        # The ranking query is a FROM item, parsed once: inside ts_rank() a generic plan (psycopg
        # prepares a statement after a few runs) would parse it again for every matching row.
        rows = self._rows(
            "SELECT s.source_id, s.id, ts_rank(%s::float4[], s.tsv, q) AS score "
            f"FROM {source} ORDER BY score DESC, s.source_id, s.id LIMIT %s",
            [SEGMENT_WEIGHTS, *params, limit],
        )
        return [SegmentHit(r[0], r[1], float(r[2])) for r in rows]

    def vector_search(
        self, model: str, query: npt.NDArray[np.float32], *, owner_type: str, limit: int
    ) -> list[tuple[str, float]]:
        dim = int(query.shape[0])
        if dim == 0 or limit <= 0:
            return []
        vec = np.asarray(query, dtype=np.float32)
        where = f"namespace = %s AND owner_type = %s AND model = %s AND dim = {dim}"
        if dim > HNSW_MAX_DIM:
            distance = "vec <#> %s::vector"
            return self._nearest(distance, where, vec, owner_type, model, limit)
        fetch = limit + min(limit, RESCORE_EXTRA)  # see below
        settings = f"SET LOCAL hnsw.ef_search = {max(40, min(fetch, 1000))}; "
        if self.iterative_scan:  # pgvector >= 0.8: keep scanning until enough rows pass the filter
            settings += f"SET LOCAL hnsw.iterative_scan = strict_order; SET LOCAL hnsw.max_scan_tuples = {MAX_SCAN_TUPLES}; "
        # No parameters: one round trip for the settings and the index (the last result).
        cur = self.conn.execute(settings + f"SELECT watermark, halfvec FROM vector_indexes WHERE dim = {dim}")
        while cur.nextset():
            pass
        row = cur.fetchone()
        # Written so the partial expression index vectors_hnsw_d<dim>_w<watermark> matches; the
        # planner still prefers the exact (namespace, owner_type, model) scan for small namespaces.
        distance = f"(vec::vector({dim})) <#> %s::vector({dim})"
        if row is None:  # no index for this dimension yet: every row is scanned exactly
            return self._nearest(distance, where, vec, owner_type, model, limit)
        watermark, half = int(row[0]), bool(row[1])
        # Rows the index covers, from the index; rows of bulk writes since its build (pending,
        # see vector_index.py), exactly. A row can come from both when a build switched the
        # watermark after this session read it: keep one. A half-precision index orders by its
        # own rounded distance: it is asked for a few more candidates than wanted, all scored in
        # full precision from the table, so scores are exact and the cut is made on them.
        keys = (vec, self.namespace, owner_type, model, vec)
        order = f"{index_expression(dim, half)} <#> %s::{'halfvec' if half else 'vector'}({dim})"
        rows = self._rows(
            f"(SELECT owner_id, -({distance}) FROM vectors WHERE {where} AND batch <= {watermark} "
            f"ORDER BY {order} LIMIT %s) UNION ALL "
            f"(SELECT owner_id, -({distance}) FROM vectors WHERE {where} AND batch > {watermark} "
            f"ORDER BY {distance} LIMIT %s)",
            (*keys, fetch if half else limit, *keys, limit),
        )
        best: dict[str, float] = {}
        for oid, score in rows:
            if oid not in best or score > best[oid]:
                best[oid] = float(score)
        # Equal scores in owner order: the index's candidate order is not the exact one.
        return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]

    def _nearest(
        self, distance: str, where: str, vec: Any, owner_type: str, model: str, limit: int
    ) -> list[tuple[str, float]]:
        rows = self._rows(
            f"SELECT owner_id, -({distance}) AS score FROM vectors WHERE {where} "
            f"ORDER BY {distance} LIMIT %s",  # a tie-breaker here would keep the index from being used
            (vec, self.namespace, owner_type, model, vec, limit),
        )
        return [(r[0], float(r[1])) for r in rows]

    def get_vectors(
        self, model: str, owner_type: str, owner_ids: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        if not owner_ids:
            return {}
        # Each id one primary-key probe whatever the planner's row estimates say (a filter on
        # ANY(), or a hash join, scans every vector of the namespace). OFFSET 0 keeps the planner
        # from pulling the LATERAL subquery up into a join: on a table not yet analysed it did,
        # and hashed all 100k vectors of the namespace for 300 ids (~60 ms a call).
        # Binary results: pgvector's text format would be parsed float by float in Python.
        rows = (
            self.conn.cursor(binary=True)
            .execute(
                "SELECT v.owner_id, v.vec FROM unnest(%s::text[]) AS k(oid) CROSS JOIN LATERAL ("
                "SELECT owner_id, vec, model FROM vectors WHERE namespace = %s AND owner_type = %s "
                "AND owner_id = k.oid OFFSET 0) v WHERE v.model = %s",
                (list(dict.fromkeys(owner_ids)), self.namespace, owner_type, model),
            )
            .fetchall()
        )
        return {r[0]: _as_array(r[1]) for r in rows}

    def vector_stats(self) -> dict[str, int]:
        rows = self._rows(
            "SELECT owner_type || ':' || model, COUNT(*) FROM vectors WHERE namespace = %s GROUP BY 1",
            (self.namespace,),
        )
        return {r[0]: int(r[1]) for r in rows}

    def vector_owners(self, owner_type: str) -> list[tuple[str, str]]:
        """(owner_id, model) of every stored vector of ``owner_type`` ("object" or "segment")."""
        rows = self._rows(
            "SELECT owner_id, model FROM vectors WHERE namespace = %s AND owner_type = %s ORDER BY owner_id",
            (self.namespace, owner_type),
        )
        return [(r[0], r[1]) for r in rows]

    def objects_missing_search(self, *, limit: int = 100_000) -> list[str]:
        """Always empty: the tsvector is a NOT NULL column of the object row, never a separate row."""
        return []

    def segments_missing_search(self, *, limit: int = 100_000) -> list[tuple[str, str]]:
        """Segments without a row in ``segment_search`` (written together, so only after damage)."""
        rows = self._rows(
            "SELECT s.source_id, s.id FROM segments s WHERE s.namespace = %s AND NOT EXISTS (SELECT 1 FROM "
            "segment_search f WHERE f.namespace = s.namespace AND f.source_id = s.source_id AND f.id = s.id) "
            "ORDER BY s.source_id, s.ordinal LIMIT %s",
            (self.namespace, limit),
        )
        return [(r[0], r[1]) for r in rows]

    def iter_vectors(
        self, *, batch_size: int = 1000
    ) -> Iterator[tuple[str, str, str, npt.NDArray[np.float32]]]:
        """Every stored vector as (owner_type, owner_id, model, vector), fetched in batches."""
        with self.conn.cursor(name="ms_iter_vectors") as cur:
            cur.itersize = batch_size
            cur.execute(
                "SELECT owner_type, owner_id, model, vec FROM vectors WHERE namespace = %s "
                "ORDER BY owner_type, owner_id",
                (self.namespace,),
            )
            for r in cur:
                yield r[0], r[1], r[2], _as_array(r[3])

    # --- graph, history, config -------------------------------------------------------
    def relations_of(self, object_ids: Sequence[str], *, limit: int = 500) -> list[Relation]:
        if not object_ids:
            return []
        ids = list(object_ids)
        rows = self._rows(
            # Rows are unique by key, so OR equals the embedded store's UNION (json has no equality).
            f"SELECT {REL_COLS} FROM relations WHERE namespace = %s AND (source_id = ANY(%s) OR target_id = ANY(%s)) "
            "ORDER BY created_at, id LIMIT %s",
            (self.namespace, ids, ids, limit),
        )
        return [_rel(r) for r in rows]

    def edges_of(self, object_ids: Sequence[str], *, limit: int) -> list[tuple[str, str, str, str]]:
        if not object_ids:
            return []
        ids = list(object_ids)
        rows = self._rows(
            # UNION ALL stops at the limit; UNION would first collect every edge of a hub.
            "SELECT id, rel_type, source_id, target_id FROM relations WHERE namespace = %s AND source_id = ANY(%s) "
            # The second half skips edges the first has: the limit counts distinct edges.
            "UNION ALL SELECT id, rel_type, source_id, target_id FROM relations WHERE namespace = %s "
            "AND target_id = ANY(%s) AND NOT source_id = ANY(%s) LIMIT %s",
            (self.namespace, ids, self.namespace, ids, ids, limit),
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def edges_between(
        self, ids_a: Sequence[str], ids_b: Sequence[str], *, limit: int
    ) -> list[tuple[str, str, str, str]]:
        if not ids_a or not ids_b:
            return []
        a, b = list(ids_a), list(ids_b)
        rows = self._rows(
            "SELECT id, rel_type, source_id, target_id FROM relations WHERE namespace = %s AND source_id = ANY(%s) "
            "AND target_id = ANY(%s) UNION ALL SELECT id, rel_type, source_id, target_id FROM relations "
            "WHERE namespace = %s AND target_id = ANY(%s) AND source_id = ANY(%s) "
            "AND NOT (source_id = ANY(%s) AND target_id = ANY(%s)) LIMIT %s",  # each edge once
            (self.namespace, a, b, self.namespace, a, b, a, b, limit),
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def relations_among(self, object_ids: Sequence[str], *, limit: int = 10_000) -> list[Relation]:
        if not object_ids:
            return []
        ids = list(object_ids)
        rows = self._rows(
            f"SELECT {REL_COLS} FROM relations WHERE namespace = %s AND source_id = ANY(%s) AND target_id = ANY(%s) "
            "ORDER BY created_at, id LIMIT %s",
            (self.namespace, ids, ids, limit),
        )
        return [_rel(r) for r in rows]

    def list_relations(self, *, limit: int = 10_000) -> list[Relation]:
        rows = self._rows(
            f"SELECT {REL_COLS} FROM relations WHERE namespace = %s ORDER BY created_at, id LIMIT %s",
            (self.namespace, limit),
        )
        return [_rel(r) for r in rows]

    def list_events(self, *, object_id: str | None = None, limit: int = 50) -> list[AuditEvent]:
        cols = "id, patch_id, object_id, action, created_at, data"
        if object_id:
            rows = self._rows(
                f"SELECT {cols} FROM audit_events WHERE namespace = %s AND object_id = %s "
                "ORDER BY created_at DESC, id DESC LIMIT %s",
                (self.namespace, object_id, limit),
            )
        else:
            rows = self._rows(
                f"SELECT {cols} FROM audit_events WHERE namespace = %s ORDER BY created_at DESC, id DESC LIMIT %s",
                (self.namespace, limit),
            )
        return [AuditEvent(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]

    def list_patches(self, *, limit: int = 50) -> list[PatchRecord]:
        rows = self._rows(
            "SELECT id, tool, mode, reason, created_at, operations, summary FROM patches WHERE namespace = %s "
            "ORDER BY created_at DESC, id DESC LIMIT %s",
            (self.namespace, limit),
        )
        return [PatchRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows]

    def get_config(self) -> JsonObject:
        rows = self._rows(
            "SELECT key, value FROM config WHERE namespace = %s ORDER BY key", (self.namespace,)
        )
        return {r[0]: r[1] for r in rows}

    def _require_write(self) -> None:
        if not self.writable:
            raise StorageError("write attempted in a read session")
