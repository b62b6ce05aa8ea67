"""SQLite's cached term document counts (``storage/sqlite/fulltext.py``) are always the counts a
session would read: a commit by another connection or a write by this one forgets them, and the
common terms a segment search drops are the ones an uncached read drops."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from memory_substrate import Memory, Settings
from memory_substrate.storage.sqlite.fulltext import TermDocs


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def test_counts_are_forgotten_when_the_database_changes(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    a, b = _connect(path), _connect(path)
    a.execute("CREATE TABLE t (x)")
    cache = TermDocs()

    def read() -> dict[str, int]:
        a.execute("BEGIN")
        a.execute("SELECT COUNT(*) FROM t").fetchone()  # the snapshot starts with a read
        try:
            return cache.lookup(a, "v", ["alpha", "beta"])
        finally:
            a.execute("COMMIT")

    assert read() == {}
    cache.store("v", {"alpha": 3})
    assert read() == {"alpha": 3}, "unchanged database: kept"
    b.execute("INSERT INTO t VALUES (1)")  # another connection commits
    assert read() == {}
    cache.store("v", {"alpha": 4})
    assert read() == {"alpha": 4}
    a.execute("INSERT INTO t VALUES (2)")  # this connection writes
    assert read() == {}
    cache.store("v", {"beta": 1})
    a.execute("BEGIN")
    a.execute("INSERT INTO t VALUES (3)")
    a.execute("ROLLBACK")  # even a write that was rolled back
    assert read() == {}
    a.close()
    b.close()


def _talk(mem: Memory, lines: list[str]) -> None:
    mem.ingest("conversation", {"title": "t", "messages": [{"role": "user", "content": x} for x in lines]})


def test_dropped_common_terms_follow_the_writes(tmp_path: Path) -> None:
    mem = Memory(Settings(root=tmp_path, embedder="none"), namespace="ns")
    try:
        # 1,100 turns (the drop starts at 1,000 full-text rows): "alpha" and "beta" in 1% each.
        _talk(
            mem,
            [
                ("alpha " if i % 100 == 0 else "beta " if i % 100 == 1 else "") + f"turn {i}"
                for i in range(1100)
            ],
        )

        def planned() -> tuple[list[str], list[str]]:
            with mem.store.read(mem.namespace) as s:
                inner: Any = getattr(s, "inner", s)  # the SQLite session behind a wrapping one
                cached = inner._plan_terms(["alpha", "beta", "gamma"])[0]
                cache, inner.term_docs = inner.term_docs, None
                try:
                    return cached, inner._plan_terms(["alpha", "beta", "gamma"])[0]
                finally:
                    inner.term_docs = cache

        assert planned() == (["alpha", "beta", "gamma"], ["alpha", "beta", "gamma"])
        assert planned()[0] == ["alpha", "beta", "gamma"], "served from the cache"
        # Another thread (another connection) makes "alpha" common: it is dropped at once.
        writer = threading.Thread(target=_talk, args=(mem, [f"alpha again {i}" for i in range(300)]))
        writer.start()
        writer.join()
        assert planned() == (["beta", "gamma"], ["beta", "gamma"])
        # This thread's connection makes "beta" common too.
        _talk(mem, [f"beta again {i}" for i in range(300)])
        assert planned() == (["gamma"], ["gamma"])
    finally:
        mem.close()
