"""Stored JSON that SQLite's JSON functions cannot read, found and repaired (storage/json_text.py).

SQLite keeps JSON as text. A row written with a bare ``NaN`` or ``Infinity`` (Python's
``json`` writes them; releases before the strict writer stored them) fails ``json_extract``
in every query that touches it, so one such row broke every search and context of its
namespace. ``json_valid`` finds them: it accepts exactly strict JSON text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memory_substrate.storage.json_text import NON_FINITE, NOT_JSON, StoredJson, dumps, scrub

# (table, the columns keying a row within its namespace, its JSON columns)
JSON_COLUMNS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("objects", ("id",), ("data",)),
    ("segments", ("source_id", "id"), ("locator", "metadata")),
    ("relations", ("id",), ("payload",)),
    ("patches", ("id",), ("summary",)),
    ("audit_events", ("id",), ("data",)),
    ("config", ("key",), ("value",)),
    ("jobs", ("id",), ("data",)),
    ("traces", ("id",), ("data",)),
)


class SessionJsonHealth:
    conn: sqlite3.Connection
    namespace: str

    def _require_write(self) -> None:  # provided by SessionWrites, which precedes this mixin
        raise NotImplementedError

    def stored_json_problems(self, *, limit: int = 1000) -> list[StoredJson]:
        found: list[StoredJson] = []
        for table, keys, columns in JSON_COLUMNS:
            for column in columns:
                rows = self.conn.execute(
                    f"SELECT {', '.join(keys)}, {column} FROM {table} WHERE namespace = ? AND NOT json_valid({column}) "
                    "LIMIT ?",
                    (self.namespace, limit - len(found)),
                )
                for *key, text in rows:
                    scrubbed = scrub(text)
                    problem, fields = (NOT_JSON, []) if scrubbed is None else (NON_FINITE, scrubbed[1])
                    found.append(
                        StoredJson(table, column, dict(zip(keys, key, strict=True)), problem, fields)
                    )
                if len(found) >= limit:
                    return found
        return found

    def repair_stored_json(self, rows: Sequence[StoredJson]) -> list[StoredJson]:
        self._require_write()
        repaired: list[StoredJson] = []
        for row in rows:
            if row.problem != NON_FINITE:
                continue
            where = " AND ".join(f"{k} = ?" for k in row.key)
            params = (self.namespace, *row.key.values())
            current = self.conn.execute(
                f"SELECT {row.column} FROM {row.table} WHERE namespace = ? AND {where}", params
            ).fetchone()
            scrubbed = scrub(current[0]) if current is not None else None
            if scrubbed is None:
                continue
            self.conn.execute(
                f"UPDATE {row.table} SET {row.column} = ? WHERE namespace = ? AND {where}",
                (dumps(scrubbed[0]), *params),
            )
            repaired.append(row)
        return repaired
