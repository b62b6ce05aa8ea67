"""SQLite half of the derived-index outbox (see ``storage/outbox.py``), and relation lookups by id."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from memory_substrate.json_types import JsonObject
from memory_substrate.models import Relation
from memory_substrate.storage.outbox import BACKEND_KEYS, OutboxEntry, OutboxTracking
from memory_substrate.util import now_iso


class SQLiteOutbox(OutboxTracking):
    conn: sqlite3.Connection
    namespace: str

    def _outbox_config(self) -> JsonObject:
        rows = self.conn.execute(
            f"SELECT key, value FROM config WHERE namespace = ? AND key IN ({','.join('?' * len(BACKEND_KEYS))})",
            (self.namespace, *BACKEND_KEYS),
        )
        return {r[0]: json.loads(r[1]) for r in rows}

    def _outbox_insert(self, rows: list[tuple[str, str, str]]) -> None:
        stamp = now_iso()
        self.conn.executemany(
            "INSERT INTO derived_outbox (namespace, kind, item_id, detail, created_at) VALUES (?, ?, ?, ?, ?)",
            [(self.namespace, kind, item_id, detail, stamp) for kind, item_id, detail in rows],
        )

    def outbox_pending(self, *, limit: int = 10_000) -> list[OutboxEntry]:
        rows = self.conn.execute(
            "SELECT seq, kind, item_id, detail FROM derived_outbox WHERE namespace = ? ORDER BY seq LIMIT ?",
            (self.namespace, limit),
        )
        return [OutboxEntry(int(r[0]), r[1], r[2], r[3]) for r in rows]

    def outbox_count(self) -> int:
        row = self.conn.execute(
            "SELECT COUNT(*) FROM derived_outbox WHERE namespace = ?", (self.namespace,)
        ).fetchone()
        return int(row[0])

    def outbox_delete(self, seqs: Sequence[int]) -> int:
        self._require_write()
        deleted = 0
        for i in range(0, len(seqs), 500):
            chunk = list(seqs[i : i + 500])
            cur = self.conn.execute(
                f"DELETE FROM derived_outbox WHERE namespace = ? AND seq IN ({','.join('?' * len(chunk))})",
                (self.namespace, *chunk),
            )
            deleted += cur.rowcount
        return deleted

    def get_relations(self, relation_ids: Sequence[str]) -> dict[str, Relation]:
        out: dict[str, Relation] = {}
        ids = list(dict.fromkeys(relation_ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            rows = self.conn.execute(
                "SELECT id, rel_type, source_id, target_id, origin_id, payload, created_at FROM relations "
                f"WHERE namespace = ? AND id IN ({','.join('?' * len(chunk))})",
                (self.namespace, *chunk),
            )
            for r in rows:
                out[r[0]] = Relation(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6])
        return out
