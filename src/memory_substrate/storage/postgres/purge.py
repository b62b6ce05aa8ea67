"""Delete a whole namespace from PostgreSQL: every row of every table that has a ``namespace``
column (found from the catalogue, so tables of later migrations are covered), in one
transaction holding the namespace's write lock."""

from __future__ import annotations

from typing import Any

from psycopg import IsolationLevel, sql

from memory_substrate.storage.postgres.schema import LOCK_CLASS_NAMESPACE


def namespaced_tables(conn: Any) -> list[str]:
    rows = conn.execute(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND column_name = 'namespace' ORDER BY table_name"
    ).fetchall()
    return [r[0] for r in rows]


def delete_namespace(conn: Any, namespace: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    # Pooled connections keep the settings of their last session: make this one writable.
    conn.read_only = False
    conn.isolation_level = IsolationLevel.READ_COMMITTED
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_CLASS_NAMESPACE, namespace))
        for table in namespaced_tables(conn):
            cur = conn.execute(
                sql.SQL("DELETE FROM {} WHERE namespace = %s").format(sql.Identifier(table)), (namespace,)
            )
            counts[table] = cur.rowcount
    return counts
