"""PostgreSQL half of the derived-index outbox (see ``storage/outbox.py``), and relation lookups by id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from memory_substrate.json_types import JsonObject
from memory_substrate.models import Relation
from memory_substrate.storage.outbox import BACKEND_KEYS, OutboxEntry, OutboxTracking
from memory_substrate.util import now_iso


class PostgresOutbox(OutboxTracking):
    conn: psycopg.Connection[Any]
    namespace: str

    def _outbox_config(self) -> JsonObject:
        rows = self.conn.execute(
            "SELECT key, value FROM config WHERE namespace = %s AND key = ANY(%s)",
            (self.namespace, list(BACKEND_KEYS)),
        ).fetchall()
        return {r[0]: r[1] for r in rows}

    def _outbox_insert(self, rows: list[tuple[str, str, str]]) -> None:
        stamp = now_iso()
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO derived_outbox (namespace, kind, item_id, detail, created_at) VALUES (%s, %s, %s, %s, %s)",
                [(self.namespace, kind, item_id, detail, stamp) for kind, item_id, detail in rows],
            )

    def outbox_pending(self, *, limit: int = 10_000) -> list[OutboxEntry]:
        rows = self.conn.execute(
            "SELECT seq, kind, item_id, detail FROM derived_outbox WHERE namespace = %s ORDER BY seq LIMIT %s",
            (self.namespace, limit),
        ).fetchall()
        return [OutboxEntry(int(r[0]), r[1], r[2], r[3]) for r in rows]

    def outbox_count(self) -> int:
        row = self.conn.execute(
            "SELECT COUNT(*) FROM derived_outbox WHERE namespace = %s", (self.namespace,)
        ).fetchone()
        return int(row[0]) if row else 0

    def outbox_delete(self, seqs: Sequence[int]) -> int:
        self._require_write()
        if not seqs:
            return 0
        cur = self.conn.execute(
            "DELETE FROM derived_outbox WHERE namespace = %s AND seq = ANY(%s)", (self.namespace, list(seqs))
        )
        return cur.rowcount

    def get_relations(self, relation_ids: Sequence[str]) -> dict[str, Relation]:
        ids = list(dict.fromkeys(relation_ids))
        if not ids:
            return {}
        rows = self.conn.execute(
            "SELECT id, rel_type, source_id, target_id, origin_id, payload, created_at FROM relations "
            "WHERE namespace = %s AND id = ANY(%s)",
            (self.namespace, ids),
        ).fetchall()
        return {r[0]: Relation(r[0], r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows}
