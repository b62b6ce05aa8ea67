"""The stored ranking columns and the concurrent vector stream change speed, not answers.

* Rows stored without the ranking columns have no stored terms: the ranker tokenises them itself and ranks them
  exactly as stored terms would, and ``reindex`` fills the column.
* A store migrated to the ranking columns copies each turn's speaker and date out of its metadata.
* The vector stream gives the same ranking whether it runs on a worker thread beside the
  full-text stream or inline.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.search import streams

SPEAKERS = ["ana", "bo"]
LINES = [
    "we moved the database migration to friday",
    "the vector index rebuild took two hours",
    "payment service alerts fired again last night",
    "ana asked about the login failure on staging",
    "cache eviction is too aggressive for the feed",
    "bo will de-stress the release checklist",
    "the migration of the billing tables is done",
    "running the backfill before the index swap",
]
QUERIES = [
    "database migration",
    "what did ana ask about login",
    "vector index rebuild",
    "release checklist",
    "billing",
]


def _fill(mem: Memory) -> None:
    for c in range(3):
        msgs = [
            {
                "role": "user",
                "name": SPEAKERS[(c + i) % 2],
                "content": f"{LINES[(c * 3 + i) % len(LINES)]} ({c}-{i})",
                "created_at": f"2024-0{c + 1}-1{i % 9}T10:00:00+00:00",
            }
            for i in range(12)
        ]
        mem.ingest("conversation", {"title": f"standup {c}", "messages": msgs})


def _ranked(mem: Memory) -> list[list[Any]]:
    out = []
    for q in QUERIES:
        for unit in ("segment", "object"):
            res = mem.query("search", {"query": q}, {"result_unit": unit, "max_items": 8, "detail": "full"})
            out.append([(i.get("id"), i.get("segment_id"), i.get("rank_score")) for i in res["items"]])
    return out


def _sql(mem: Memory, sql: str) -> list[Any]:
    """Run raw SQL on this namespace's segments (``{ns}`` is its quoted name); rows of a SELECT."""
    with mem.store.write(mem.namespace) as s:
        raw: Any = s  # the backend's own session, for its connection
        cur = raw.conn.execute(sql.format(ns=f"'{mem.namespace}'"))
        return list(cur.fetchall()) if sql.lstrip().upper().startswith("SELECT") else []


@pytest.mark.parametrize("embedder", ["none", "static"])
def test_rows_without_stored_terms_rank_the_same_and_reindex_fills_them(
    make_settings: Any, namespace: str, embedder: str
) -> None:
    mem = Memory(make_settings(embedder=embedder), namespace=namespace)
    try:
        _fill(mem)
        stored = _ranked(mem)
        assert any(stored), "the corpus must give results"
        _sql(
            mem, "UPDATE segments SET terms = NULL WHERE namespace = {ns}"
        )  # as rows written without stored terms
        assert (
            _sql(mem, "SELECT COUNT(*) FROM segments WHERE namespace = {ns} AND terms IS NOT NULL")[0][0] == 0
        )
        assert _ranked(mem) == stored
        mem.maintain("reindex", {}, {"apply": True})
        assert _sql(mem, "SELECT COUNT(*) FROM segments WHERE namespace = {ns} AND terms IS NULL")[0][0] == 0
        assert _ranked(mem) == stored
    finally:
        mem.close()


def test_vector_stream_beside_or_inline_ranks_the_same(
    make_settings: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    try:
        _fill(mem)
        inner = getattr(mem.store, "inner", mem.store)
        monkeypatch.setattr(type(inner), "parallel_reads", False)
        monkeypatch.setattr(type(mem.store), "parallel_reads", False, raising=False)
        monkeypatch.setattr(mem.store, "parallel_reads", False, raising=False)
        inline = _ranked(mem)
        submitted: list[int] = []
        real = streams._pool

        def counting() -> Any:
            submitted.append(1)
            return real()

        monkeypatch.setattr(streams, "_pool", counting)
        monkeypatch.setattr(mem.store, "parallel_reads", True, raising=False)
        beside = _ranked(mem)
    finally:
        mem.close()
    assert any(inline)
    assert beside == inline
    assert len(submitted) == len(QUERIES) * 2, "every search must have run its vector stream on the worker"


def test_migration_to_v8_copies_speaker_and_date(make_settings: Any, namespace: str, backend: str) -> None:
    if backend != "sqlite":
        pytest.skip("rebuilds a pre-v8 SQLite file")
    settings = make_settings(embedder="none")
    mem = Memory(settings, namespace=namespace)
    _fill(mem)
    before = _ranked(mem)
    path = mem.store.location
    mem.close()
    conn = sqlite3.connect(path)
    for col in ("terms", "speaker", "said_at"):
        conn.execute(f"ALTER TABLE segments DROP COLUMN {col}")
    conn.execute("DELETE FROM schema_migrations WHERE version = 8")
    conn.commit()
    conn.close()
    mem = Memory(settings, namespace=namespace)
    try:
        rows = _sql(
            mem,
            "SELECT speaker, said_at, json_extract(metadata, '$.name'), "
            "json_extract(metadata, '$.created_at'), terms FROM segments WHERE namespace = {ns}",
        )
        assert rows and all(r[0] == r[2] and r[1] == r[3] and r[4] is None for r in rows)
        assert all(r[0] in SPEAKERS and r[1].startswith("2024-") for r in rows)
        assert _ranked(mem) == before
    finally:
        mem.close()


MIXED = [
    "we moved the database migration to friday and the billing tables follow",
    "Wir haben die Datenbankmigration auf Freitag verschoben, die Abrechnung folgt danach",
    "Hemos movido la migración de la base de datos al viernes, la facturación después",
    "the vector index rebuild took two hours on the staging database",
    "Der Neuaufbau des Vektorindex hat auf dem Testsystem zwei Stunden gedauert",
]


def test_segment_languages_are_stored_and_not_detected_again_per_search(
    make_settings: Any, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each turn's language is kept at ingest: a search in a store of several
    languages ranks the same from the stored column as from detecting each candidate, runs the
    detector only for the query, and ``reindex`` fills rows stored without it."""
    import memory_substrate.analysis as analysis

    mem = Memory(make_settings(embedder="none"), namespace=namespace)
    try:
        mem.ingest(
            "conversation",
            {"title": "mixed", "messages": [{"role": "user", "name": "ana", "content": t} for t in MIXED]},
        )
        rows = dict(_sql(mem, "SELECT text, language FROM segments WHERE namespace = {ns}"))
        assert rows == {t: analysis.main_language(t) or "" for t in MIXED}
        assert set(rows.values()) == {"en", "de", "es"}
        queries = ["database migration friday", "vector index rebuild"]

        def ranked() -> list[Any]:
            return [
                [
                    (i["segment_id"], i["rank_score"])
                    for i in mem.query("search", {"query": q}, {"result_unit": "segment", "detail": "full"})[
                        "items"
                    ]
                ]
                for q in queries
            ]

        asked: list[str] = []
        real = analysis.main_language

        def counting(text: str) -> str | None:
            asked.append(text)
            return real(text)

        monkeypatch.setattr(analysis, "main_language", counting)
        monkeypatch.setattr("memory_substrate.analysis.crosslang.main_language", counting)
        stored = ranked()
        assert all(stored) and not set(asked) & set(MIXED), "stored rows must not be detected again"
        _sql(
            mem, "UPDATE segments SET language = NULL WHERE namespace = {ns}"
        )  # as rows stored before languages were kept
        asked.clear()
        assert ranked() == stored
        assert set(asked) & set(MIXED), "rows without a stored language are detected"
        mem.maintain("reindex", {}, {"apply": True})
        assert dict(_sql(mem, "SELECT text, language FROM segments WHERE namespace = {ns}")) == rows
        asked.clear()
        assert ranked() == stored and not set(asked) & set(MIXED)
    finally:
        mem.close()
