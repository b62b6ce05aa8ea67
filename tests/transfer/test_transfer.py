"""Export/import: a namespace moves between SQLite and PostgreSQL with nothing lost."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from memory_substrate import Memory, Settings
from memory_substrate.cli.main import main
from memory_substrate.errors import ValidationError
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import Store
from memory_substrate.storage.factory import open_store
from memory_substrate.transfer import FORMAT, ExportSummary, ImportSummary, export_namespace, import_namespace


def _fill(memory: Memory) -> None:
    """Every kind of record: objects of each family, segments (CJK too), relations, lifecycle
    history, config and vectors."""
    base = {"reason": "test", "memory_source": "user_declared", "scope_refs": ["scope:project"]}
    first = memory.remember(
        "knowledge",
        {
            **base,
            "kind": "fact",
            "title": "API runs on port 8080",
            "summary": "The API listens on 8080.",
            "subject_refs": ["node:api"],
            "payload": {
                "subject": "node:api",
                "predicate": "port",
                "value": 8080,
                "metadata": {"z": 1, "a": 2},
            },
            "confidence": 0.9,
        },
    )
    second = memory.remember(
        "knowledge",
        {
            **base,
            "kind": "fact",
            "title": "API runs on port 9090",
            "summary": "Moved to 9090 (é, 数据库).",
            "payload": {"subject": "node:api", "predicate": "port", "value": 9090},
        },
    )
    memory.remember(
        "supersede",
        {
            "old_knowledge_id": first["object_id"],
            "new_knowledge_id": second["object_id"],
            "reason": "the port changed",
        },
    )
    memory.remember(
        "work_item",
        {
            **base,
            "kind": "task",
            "title": "Rotate keys",
            "summary": "Rotate the API keys.",
            "status": "open",
            "related_node_refs": ["node:api"],
        },
    )
    conv = memory.ingest(
        "conversation",
        {
            "title": "数据库迁移会议",
            "messages": [
                {"role": "user", "content": "我们讨论了数据库迁移。"},
                {"role": "assistant", "content": "Migration finishes Thursday.", "name": "bot"},
            ],
        },
    )
    memory.remember(
        "activity",
        {
            **base,
            "kind": "meeting",
            "title": "Migration sync",
            "summary": "Synced.",
            "source_refs": [conv["source_id"]],
        },
    )
    with memory.store.write(memory.namespace) as s:
        s.set_config("decay_days", 30)
        s.set_config("weights", {"b": 1, "a": [0.5, "x"]})
        rng = np.random.default_rng(7)
        s.upsert_vectors(
            "test-model", "object", [(second["object_id"], rng.standard_normal(8).astype(np.float32))]
        )
        s.upsert_vectors(
            "test-model",
            "segment",
            [(f"{conv['source_id']}#seg-1", rng.standard_normal(8).astype(np.float32))],
        )


def _export(store: Store, namespace: str, vectors: bool = True) -> tuple[ExportSummary, list[str]]:
    buf = io.StringIO()
    summary = export_namespace(_runtime(store, namespace), buf, vectors=vectors)
    lines = buf.getvalue().splitlines()
    return summary, lines


def _import(store: Store, lines: list[str], namespace: str | None = None) -> ImportSummary:
    return import_namespace(
        _runtime(store, "default"), io.StringIO("\n".join(lines) + "\n"), namespace=namespace
    )


def _runtime(store: Store, namespace: str) -> Runtime:
    return Runtime(store, namespace, Settings(embedder="none"))


def test_sqlite_postgres_sqlite_round_trip(tmp_path: Path, postgres_url: str, namespace: str) -> None:
    sqlite_a = Settings(root=tmp_path / "a", embedder="none")
    with Memory(sqlite_a, namespace=namespace) as mem:
        _fill(mem)
        original, lines_a = _export(mem.store, namespace)
    counts = original["counts"]
    assert all(
        counts[k] > 0 for k in ("object", "segment", "relation", "patch", "event", "config", "vector")
    ), counts
    header = json.loads(lines_a[0])
    assert header["format"] == FORMAT and header["version"] == 2 and header["namespace"] == namespace
    # header, one line per record, the end record
    assert header["counts"] == counts and len(lines_a) == 2 + sum(counts.values())
    end = json.loads(lines_a[-1])
    assert end == {
        "type": "end",
        "data": {"records": sum(counts.values()), "content_sha256": original["content_sha256"]},
    }

    pg = open_store(Settings(database_url=postgres_url, embedder="none"))
    try:
        assert _import(pg, lines_a)["counts"] == counts
        via_pg, lines_pg = _export(pg, namespace)
    finally:
        pg.close()
    sqlite_b = open_store(Settings(root=tmp_path / "b", embedder="none"))
    try:
        _import(sqlite_b, lines_pg)
        back, lines_b = _export(sqlite_b, namespace)
    finally:
        sqlite_b.close()

    assert original["counts"] == via_pg["counts"] == back["counts"]
    assert original["content_sha256"] == via_pg["content_sha256"] == back["content_sha256"]
    assert lines_a[1:] == lines_pg[1:] == lines_b[1:]  # byte-identical records
    assert json.loads(lines_pg[0])["source"]["backend"] == "postgres"


def test_imported_namespace_is_searchable(make_settings: Any, tmp_path: Path, namespace: str) -> None:
    """Derived indexes (full text, claim keys) are rebuilt on import, on either backend."""
    with Memory(Settings(root=tmp_path / "src", embedder="none"), namespace="origin") as mem:
        _fill(mem)
        _, lines = _export(mem.store, "origin")
    with Memory(make_settings(), namespace=namespace) as mem:
        result = _import(mem.store, lines, namespace=namespace)
        assert result["namespace"] == namespace and result["source_namespace"] == "origin"
        hits = mem.query("search", {"query": "数据库"})["items"]
        assert any(i["id"].startswith("src:") for i in hits)  # compact items: the id prefix names the type
        assert (
            next(i["title"] for i in mem.query("search", {"query": "rotate keys"})["items"]) == "Rotate keys"
        )
        with pytest.raises(Exception) as info:  # the claim key came back: governance still sees the claim
            mem.remember(
                "knowledge",
                {
                    "kind": "fact",
                    "title": "dup",
                    "summary": "dup",
                    "reason": "t",
                    "memory_source": "user_declared",
                    "scope_refs": ["scope:project"],
                    "payload": {"subject": "node:api", "predicate": "port", "value": 9090},
                },
            )
        assert getattr(info.value, "code", None) == "memory_duplicate"
        with mem.store.read(namespace) as s:
            assert s.vector_stats() == {"object:test-model": 1, "segment:test-model": 1}


def test_import_refuses_bad_input_and_writes_nothing(
    make_settings: Any, tmp_path: Path, namespace: str
) -> None:
    with Memory(Settings(root=tmp_path / "src", embedder="none"), namespace="origin") as mem:
        _fill(mem)
        _, lines = _export(mem.store, "origin", vectors=False)
    assert json.loads(lines[0])["counts"]["vector"] == 0
    store = open_store(make_settings())
    try:
        bad_cases = {
            "not json": ["nope", *lines[1:]],
            "wrong format": [json.dumps({"format": "other", "version": 1}), *lines[1:]],
            "future version": [json.dumps({**json.loads(lines[0]), "version": 99}), *lines[1:]],
            "truncated": lines[:-3],
            "malformed record": [*lines[:5], '{"type": "object"}', *lines[5:]],
            "unknown record type": [*lines, '{"type": "hologram", "data": {}}'],
        }
        for case, bad in bad_cases.items():
            with pytest.raises(ValidationError):
                _import(store, bad, namespace=namespace)
            with store.read(namespace) as s:
                assert s.count_objects() == [] and s.list_patches() == [], case
        _import(store, lines, namespace=namespace)
        with pytest.raises(ValidationError, match="not empty"):
            _import(store, lines, namespace=namespace)
    finally:
        store.close()


def test_cli_export_and_import(tmp_path: Path) -> None:
    runner = CliRunner()
    root = ["--root", str(tmp_path / "root"), "--embedder", "none"]
    with Memory(Settings(root=tmp_path / "root", embedder="none"), namespace="team") as mem:
        _fill(mem)
    out = tmp_path / "team.jsonl"
    result = runner.invoke(main, [*root, "--namespace", "team", "export", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text().splitlines()[0])["namespace"] == "team"
    result = runner.invoke(main, [*root, "--namespace", "team-copy", "import", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["namespace"] == "team-copy"
    again = runner.invoke(main, [*root, "--namespace", "team-copy", "import", str(out)])
    assert again.exit_code == 2 and "not empty" in again.output
    copy = runner.invoke(main, [*root, "--namespace", "team-copy", "export", "--no-vectors"])
    assert copy.exit_code == 0
    assert json.loads(copy.stdout.splitlines()[0])["counts"]["vector"] == 0
