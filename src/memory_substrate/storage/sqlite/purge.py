"""Delete a whole namespace from the SQLite store: every row of every table that has one.

Tables are found from the schema itself (every table with a ``namespace`` column), so a table
added by a later migration is covered without touching this module. The namespace's full-text
tables (``fts_spaces.py``) are dropped whole, first.
"""

from __future__ import annotations

import sqlite3

from memory_substrate.storage.sqlite import fts_spaces


def namespaced_tables(conn: sqlite3.Connection) -> list[str]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    out = []
    for name in names:
        try:
            cols = {r[1] for r in conn.execute(f'PRAGMA table_info("{name}")')}
        except sqlite3.DatabaseError:  # virtual tables whose module is not loaded
            continue
        if "namespace" in cols:
            out.append(name)
    return out


def delete_namespace(conn: sqlite3.Connection, namespace: str) -> dict[str, int]:
    """Rows deleted per table, in one transaction (the caller's connection is in autocommit)."""
    counts: dict[str, int] = {}
    conn.execute("BEGIN IMMEDIATE")
    try:
        counts["fts"] = fts_spaces.drop(conn, namespace)
        for table in namespaced_tables(conn):
            cur = conn.execute(f'DELETE FROM "{table}" WHERE namespace = ?', (namespace,))
            counts[table] = cur.rowcount
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return counts
