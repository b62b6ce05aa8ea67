"""Each namespace's full-text indexes of its own (SQLite).

FTS5 ranks with ``bm25`` over the statistics of its whole table: the document count, the mean
length and each term's document frequency. With one index for every namespace, what namespace B
wrote moved namespace A's scores and its choice of query terms, so a caller of A could tell
whether a term was frequent elsewhere (docs/security.md). Each namespace therefore has its own
three virtual tables, named by a number (namespace names may hold any character):

* ``objects_fts_N``: title, summary, body and metadata of its objects (rowid = ``objects.pk``);
* ``segments_fts_N``: body and metadata of its segments (rowid = ``segments.pk``);
* ``segments_vocab_N``: per-term document counts of ``segments_fts_N`` (``fts5vocab``).

``fts_spaces`` maps a namespace to its number; numbers are never reused (``AUTOINCREMENT``), so a
table name always means one namespace, whatever a cache keyed by it remembers. The tables are
created by the first write that indexes an object or a segment of the namespace, inside that
write's transaction (a rolled-back write leaves neither the tables nor the mapping), and dropped
with the namespace. A namespace with no tables has nothing to find. Migration 14 moved the rows
of the shared tables of before into these; an older version of this package opening a migrated
file fails on the missing shared tables (and rolls back), there is no way back.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

TOKENIZE = 'tokenize = "unicode61 remove_diacritics 2"'
SPACES_DDL = "CREATE TABLE IF NOT EXISTS fts_spaces (n INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL UNIQUE)"


@dataclass(frozen=True)
class FtsTables:
    objects: str
    segments: str
    vocab: str


def _named(n: int) -> FtsTables:
    return FtsTables(f"objects_fts_{n}", f"segments_fts_{n}", f"segments_vocab_{n}")


def lookup(conn: sqlite3.Connection, namespace: str) -> FtsTables | None:
    """The namespace's tables, or None when nothing of it was ever indexed."""
    row = conn.execute("SELECT n FROM fts_spaces WHERE namespace = ?", (namespace,)).fetchone()
    return _named(int(row[0])) if row else None


def ensure(conn: sqlite3.Connection, namespace: str) -> FtsTables:
    """The namespace's tables, created now if need be (call inside a write transaction)."""
    found = lookup(conn, namespace)
    if found is not None:
        return found
    n = conn.execute("INSERT INTO fts_spaces (namespace) VALUES (?)", (namespace,)).lastrowid
    assert n is not None
    t = _named(int(n))
    conn.execute(f"CREATE VIRTUAL TABLE {t.objects} USING fts5 (title, summary, body, meta, {TOKENIZE})")
    conn.execute(f"CREATE VIRTUAL TABLE {t.segments} USING fts5 (body, meta, {TOKENIZE})")
    conn.execute(f"CREATE VIRTUAL TABLE {t.vocab} USING fts5vocab({t.segments}, 'row')")
    return t


def indexed(conn: sqlite3.Connection, table: str) -> int:
    """Rows of one of these FTS5 tables, counted in its ``%_docsize`` shadow table (one row per
    document, documented by FTS5): SQLite counts a table by its pages' cell counts, ~15 µs at 100k
    rows, where counting the virtual table scans its content (seconds) and counting a namespace's
    rows of ``segments`` walks an index range (7-8 ms at 100k)."""
    return int(conn.execute(f"SELECT COUNT(*) FROM {table}_docsize").fetchone()[0])


def drop(conn: sqlite3.Connection, namespace: str) -> int:
    """Drop the namespace's tables and mapping; the rows they held (inside a write transaction)."""
    t = lookup(conn, namespace)
    if t is None:
        return 0
    rows = indexed(conn, t.objects) + indexed(conn, t.segments)
    conn.execute(f"DROP TABLE {t.vocab}")
    conn.execute(f"DROP TABLE {t.segments}")
    conn.execute(f"DROP TABLE {t.objects}")
    conn.execute("DELETE FROM fts_spaces WHERE namespace = ?", (namespace,))
    return rows


def split_shared(conn: sqlite3.Connection) -> None:
    """Migration 14: move the rows of the shared ``objects_fts`` / ``segments_fts`` into each
    namespace's own tables, then drop the shared ones (in the migration's transaction)."""
    conn.execute(SPACES_DDL)
    shared = {
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE name IN ('objects_fts', 'segments_fts')")
    }
    namespaces = [
        r[0] for r in conn.execute("SELECT namespace FROM objects UNION SELECT namespace FROM segments")
    ]
    for namespace in namespaces:
        t = ensure(conn, namespace)
        if "objects_fts" in shared:
            conn.execute(
                f"INSERT INTO {t.objects} (rowid, title, summary, body, meta) "
                "SELECT f.rowid, f.title, f.summary, f.body, f.meta FROM objects_fts f "
                "JOIN objects o ON o.pk = f.rowid WHERE o.namespace = ?",
                (namespace,),
            )
        if "segments_fts" in shared:
            conn.execute(
                f"INSERT INTO {t.segments} (rowid, body, meta) "
                "SELECT f.rowid, f.body, f.meta FROM segments_fts f "
                "JOIN segments s ON s.pk = f.rowid WHERE s.namespace = ?",
                (namespace,),
            )
    conn.execute("DROP TABLE IF EXISTS segments_vocab")
    conn.execute("DROP TABLE IF EXISTS segments_fts")
    conn.execute("DROP TABLE IF EXISTS objects_fts")


class NamespaceFts:
    """A session's way to its namespace's tables, looked up once per session (a session is one
    transaction: the mapping cannot change under it but by its own ``ensure``)."""

    conn: sqlite3.Connection
    namespace: str
    _fts: FtsTables | None = None

    def fts(self) -> FtsTables | None:
        if self._fts is None:
            self._fts = lookup(self.conn, self.namespace)
        return self._fts

    def fts_for_write(self) -> FtsTables:
        if self._fts is None:
            self._fts = ensure(self.conn, self.namespace)
        return self._fts
