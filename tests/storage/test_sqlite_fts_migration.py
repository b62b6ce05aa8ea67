"""Migration 14 (SQLite): a store whose full-text rows sat in tables shared by every namespace
moves them into each namespace's own tables, and finds what it found before."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from memory_substrate import Memory, Settings
from memory_substrate.storage.sqlite.fts_spaces import TOKENIZE

NAMESPACES = ("alpha", "beta")


def _fill(settings: Settings) -> dict[str, Any]:
    found = {}
    for ns in NAMESPACES:
        with Memory(settings, namespace=ns) as mem:
            mem.ingest("conversation", {"title": f"{ns} chat", "messages": [
                {"role": "user", "content": f"the {ns} rollout uses blue green deploys"},
                {"role": "assistant", "content": "and the database migration runs first"},
            ]})
            mem.remember("knowledge", {"kind": "fact", "title": f"{ns} deploys are blue green",
                                       "summary": "rollout policy", "reason": "test",
                                       "memory_source": "user_declared", "scope_refs": ["scope:ops"]})
            found[ns] = _answers(mem)
    return found


def _answers(mem: Memory) -> tuple[list[str], list[str]]:
    objects = mem.query("search", {"query": "blue green rollout"}, {"detail": "full"})["items"]
    turns = mem.query("search", {"query": "database migration"}, {"detail": "full", "result_unit": "segment"})["items"]
    return [i["id"] for i in objects], [f"{i['source_id']}#{i['segment_id']}" for i in turns]


def _back_to_shared_tables(path: Path) -> dict[str, tuple[int, int]]:
    """Rewrite the file as migration 13 left stores: one set of full-text tables for all."""
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE VIRTUAL TABLE objects_fts USING fts5 (title, summary, body, meta, {TOKENIZE})")
    conn.execute(f"CREATE VIRTUAL TABLE segments_fts USING fts5 (body, meta, {TOKENIZE})")
    conn.execute("CREATE VIRTUAL TABLE segments_vocab USING fts5vocab(segments_fts, 'row')")
    counts = {}
    for ns, n in conn.execute("SELECT namespace, n FROM fts_spaces").fetchall():
        conn.execute(f"INSERT INTO objects_fts (rowid, title, summary, body, meta) SELECT rowid, title, summary, body, meta FROM objects_fts_{n}")
        conn.execute(f"INSERT INTO segments_fts (rowid, body, meta) SELECT rowid, body, meta FROM segments_fts_{n}")
        counts[ns] = tuple(conn.execute(f"SELECT COUNT(*) FROM {t}_fts_{n}").fetchone()[0] for t in ("objects", "segments"))
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
            moved = tuple(conn.execute(f"SELECT COUNT(*) FROM {t}_fts_{n}").fetchone()[0] for t in ("objects", "segments"))
            assert moved == counts[ns]
    finally:
        conn.close()
