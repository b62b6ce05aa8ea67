"""Each namespace's own full-text tables (SQLite, ``storage/sqlite/fts_spaces.py``): how they are
made, dropped and numbered, and migration 14, which moved a store's rows out of the tables that
every namespace shared, finding what it found before."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory, Settings
from memory_substrate.storage.sqlite import fts_spaces
from memory_substrate.storage.sqlite.fts_spaces import TOKENIZE
from memory_substrate.storage.sqlite.store import SQLiteStore
from tests.storage.builders import doc, make_obj, seg, seg_row

NAMESPACES = ("alpha", "beta")
NUMBERED = re.compile(
    r"(?:objects_fts|segments_fts|segments_vocab)_(\d+)"
)  # a namespace's tables (and shadows)


def _fill(settings: Settings) -> dict[str, Any]:
    found = {}
    for ns in NAMESPACES:
        with Memory(settings, namespace=ns) as mem:
            mem.ingest(
                "conversation",
                {
                    "title": f"{ns} chat",
                    "messages": [
                        {"role": "user", "content": f"the {ns} rollout uses blue green deploys"},
                        {"role": "assistant", "content": "and the database migration runs first"},
                    ],
                },
            )
            mem.remember(
                "knowledge",
                {
                    "kind": "fact",
                    "title": f"{ns} deploys are blue green",
                    "summary": "rollout policy",
                    "reason": "test",
                    "memory_source": "user_declared",
                    "scope_refs": ["scope:ops"],
                },
            )
            found[ns] = _answers(mem)
    return found


def _answers(mem: Memory) -> tuple[list[str], list[str]]:
    objects = mem.query("search", {"query": "blue green rollout"}, {"detail": "full"})["items"]
    turns = mem.query(
        "search", {"query": "database migration"}, {"detail": "full", "result_unit": "segment"}
    )["items"]
    return [i["id"] for i in objects], [f"{i['source_id']}#{i['segment_id']}" for i in turns]


def _back_to_shared_tables(path: Path) -> dict[str, tuple[int, int]]:
    """Rewrite the file as migration 13 left stores: one set of full-text tables for all."""
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE VIRTUAL TABLE objects_fts USING fts5 (title, summary, body, meta, {TOKENIZE})")
    conn.execute(f"CREATE VIRTUAL TABLE segments_fts USING fts5 (body, meta, {TOKENIZE})")
    conn.execute("CREATE VIRTUAL TABLE segments_vocab USING fts5vocab(segments_fts, 'row')")
    counts = {}
    for ns, n in conn.execute("SELECT namespace, n FROM fts_spaces").fetchall():
        conn.execute(
            f"INSERT INTO objects_fts (rowid, title, summary, body, meta) SELECT rowid, title, summary, body, meta FROM objects_fts_{n}"
        )
        conn.execute(
            f"INSERT INTO segments_fts (rowid, body, meta) SELECT rowid, body, meta FROM segments_fts_{n}"
        )
        counts[ns] = tuple(
            conn.execute(f"SELECT COUNT(*) FROM {t}_fts_{n}").fetchone()[0] for t in ("objects", "segments")
        )
        for t in (f"segments_vocab_{n}", f"segments_fts_{n}", f"objects_fts_{n}"):
            conn.execute(f"DROP TABLE {t}")
    conn.execute("DROP TABLE fts_spaces")
    conn.execute("DELETE FROM schema_migrations WHERE version = 14")
    conn.commit()
    conn.close()
    return counts


def test_shared_full_text_tables_are_split_per_namespace(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, embedder="none")
    before = _fill(settings)
    assert all(objects and turns for objects, turns in before.values())
    path = tmp_path / "memory.sqlite3"
    counts = _back_to_shared_tables(path)
    assert all(o > 0 and s > 0 for o, s in counts.values())

    for ns in NAMESPACES:  # opening the store migrates it
        with Memory(settings, namespace=ns) as mem:
            assert _answers(mem) == before[ns]
    conn = sqlite3.connect(path)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert not names & {"objects_fts", "segments_fts", "segments_vocab"}
        spaces = dict(conn.execute("SELECT namespace, n FROM fts_spaces").fetchall())
        assert set(spaces) == set(NAMESPACES)
        for ns, n in spaces.items():
            moved = tuple(
                conn.execute(f"SELECT COUNT(*) FROM {t}_fts_{n}").fetchone()[0]
                for t in ("objects", "segments")
            )
            assert moved == counts[ns]
    finally:
        conn.close()


def test_a_failed_migration_leaves_the_shared_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(root=tmp_path, embedder="none")
    _fill(settings)
    path = tmp_path / "memory.sqlite3"
    counts = _back_to_shared_tables(path)
    made: list[str] = []
    real = fts_spaces.ensure

    def failing(conn: sqlite3.Connection, namespace: str) -> fts_spaces.FtsTables:
        made.append(namespace)
        if len(made) == 2:
            raise sqlite3.OperationalError("disk I/O error (simulated)")
        return real(conn, namespace)

    monkeypatch.setattr(fts_spaces, "ensure", failing)
    with pytest.raises(Exception, match="simulated"):
        SQLiteStore(path)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == 13
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert {"objects_fts", "segments_fts", "segments_vocab"} <= names
        assert not any(NUMBERED.match(n) for n in names) and "fts_spaces" not in names
        shared = tuple(
            conn.execute(f"SELECT COUNT(*) FROM {t}_fts").fetchone()[0] for t in ("objects", "segments")
        )
        assert shared == tuple(sum(c[i] for c in counts.values()) for i in (0, 1))
    finally:
        conn.close()
    monkeypatch.setattr(fts_spaces, "ensure", real)
    with Memory(settings, namespace="alpha") as mem:  # and the next opening migrates it
        assert _answers(mem)[0]


def _tables(store: SQLiteStore) -> set[str]:
    """The namespaces' numbered tables and their FTS5 shadow tables."""
    with store.read("any") as s:
        return {r[0] for r in s.conn.execute("SELECT name FROM sqlite_master") if NUMBERED.match(r[0])}


def _spaces(store: SQLiteStore) -> dict[str, int]:
    with store.read("any") as s:
        return dict(s.conn.execute("SELECT namespace, n FROM fts_spaces").fetchall())


def _index_one(store: SQLiteStore, namespace: str) -> None:
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:1", title="alpha"), doc("alpha"), None)
        s.insert_segments([seg_row(seg("src:1", 1, "alpha turn"))])


def test_tables_are_made_by_the_first_indexing_write_and_dropped_with_the_namespace(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite3")
    try:
        with store.write("a") as s:  # writes that index nothing make nothing
            s.set_config("k", "v")
            s.insert_segments([])
            assert s.replace_segment_search([]) == 0
        assert _spaces(store) == {}
        with pytest.raises(RuntimeError), store.write("a") as s:  # a first write rolled back
            s.insert_object(make_obj("know:1", title="alpha"), doc("alpha"), None)
            raise RuntimeError("abort")
        assert _spaces(store) == {} and _tables(store) == set()

        _index_one(store, "a")
        _index_one(store, "b")
        spaces = _spaces(store)
        assert set(spaces) == {"a", "b"}
        b = spaces["b"]
        assert {f"objects_fts_{b}", f"segments_fts_{b}", f"segments_vocab_{b}"} <= _tables(store)

        store.delete_namespace("b")  # the highest number goes with its tables ...
        assert _spaces(store) == {"a": spaces["a"]}
        assert b not in {int(m.group(1)) for name in _tables(store) if (m := NUMBERED.match(name))}
        _index_one(store, "c")  # ... and is not given to the next namespace
        assert _spaces(store)["c"] > b
        with store.read("c") as s:
            assert [h.object_id for h in s.search_objects_text(["alpha"], limit=5)] == ["know:1"]
    finally:
        store.close()
