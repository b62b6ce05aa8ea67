"""Backups and imports never carry NaN or Infinity: ``export`` refuses to write a record holding
one (naming it and pointing at ``maintain repair``) and leaves no half file; every import path
(a JSON Lines export, a graph.v1 snapshot, an mcp-memory file) refuses one, naming where; and
``contracts graph validate`` calls such a document invalid."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from memory_substrate import Memory
from memory_substrate.errors import ValidationError
from memory_substrate.importers.mcp_memory import import_mcp_memory
from memory_substrate.transfer import export_namespace, import_namespace
from tests.cli.test_cli import _run
from tests.poisoned import MARK, poisoned_store, seed


def test_export_refuses_a_poisoned_row_leaving_no_file_and_round_trips_once_repaired(tmp_path: Path) -> None:
    object_id = poisoned_store(tmp_path / "root")
    out = tmp_path / "backup.jsonl"
    out.write_text("an older backup\n")
    refused = _run(tmp_path, "export", "--output", str(out), "--force")
    assert refused.returncode == 2, refused.stderr
    assert (
        f"cannot export object {object_id}: " in refused.stderr
        and "must be a finite number" in refused.stderr
    )
    assert "maintain repair" in refused.stderr, refused.stderr
    assert out.read_text() == "an older backup\n" and not (tmp_path / "backup.jsonl.partial").exists()
    graph = _run(tmp_path, "export", "--format", "graph.v1", "--output", str(tmp_path / "graph.json"))
    assert graph.returncode == 2 and "must be a finite number" in graph.stderr, graph.stderr
    assert not (tmp_path / "graph.json").exists()

    repaired = _run(tmp_path, "maintain", "repair", "--options", '{"apply": true}')
    assert repaired.returncode == 0, repaired.stderr
    exported = _run(tmp_path, "export", "--output", str(out), "--force")
    assert exported.returncode == 0, exported.stderr
    assert "Infinity" not in out.read_text() and "NaN" not in out.read_text()
    imported = _run(tmp_path, "--namespace", "copy", "import", str(out))
    assert imported.returncode == 0, imported.stderr
    found = _run(tmp_path, "--namespace", "copy", "query", "search", '{"query": "gateway latency"}')
    assert object_id in [item["id"] for item in json.loads(found.stdout)["items"]]


def _exported(memory: Memory) -> list[str]:
    buffer = io.StringIO()
    export_namespace(memory.runtime, buffer)
    return buffer.getvalue().splitlines(keepends=True)


def test_import_refuses_a_non_finite_number_naming_the_line_and_field(memory: Memory) -> None:
    seed(memory)
    lines = _exported(memory)
    where = next(i for i, line in enumerate(lines) if MARK in line and '"type":"object"' in line)
    copy = memory.namespace + "-copy"
    for token in ("NaN", "Infinity", "-Infinity"):
        bad = [*lines[:where], lines[where].replace(MARK, token), *lines[where + 1 :]]
        with pytest.raises(
            ValidationError,
            match=rf"line {where + 1}: data\.payload\.value, data\.metadata\.score: "
            "must be a finite number",
        ):
            import_namespace(memory.runtime, io.StringIO("".join(bad)), namespace=copy)
        with memory.runtime.for_namespace(copy).read() as session:
            assert session.count_objects() == []
    import_namespace(memory.runtime, io.StringIO("".join(lines)), namespace=copy)  # the clean file imports


def test_a_graph_snapshot_with_infinity_is_refused_by_import_and_invalid_to_validate(tmp_path: Path) -> None:
    snapshot = {
        "schema_version": "markitect.memory.graph.v1",
        "nodes": [
            {
                "id": "n1",
                "kind": "fact",
                "title": "Latency",
                "text": "p99 is low",
                "attributes": {"score": "__INF__"},
            }
        ],
    }
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(snapshot).replace('"__INF__"', "Infinity"))
    imported = _run(tmp_path, "import", str(path), "--scope", "scope:project", "--reason", "test")
    assert imported.returncode == 2, imported.stderr
    assert "input_data.snapshot.nodes.0.attributes.score: must be a finite number" in imported.stderr
    checked = _run(tmp_path, "contracts", "graph", "validate", str(path))
    assert checked.returncode == 1, checked.stdout
    assert "$.nodes[0].attributes.score: error [invalid_value] must be a finite number" in checked.stdout
    yaml = tmp_path / "graph.yaml"
    yaml.write_text(
        "schema_version: markitect.memory.graph.v1\nnodes:\n  - id: n1\n    kind: fact\n"
        "    title: Latency\n    text: p99\n    attributes: {score: .nan}\n"
    )
    assert "must be a finite number" in _run(tmp_path, "contracts", "graph", "validate", str(yaml)).stdout


def test_an_mcp_memory_record_with_nan_is_skipped_with_its_reason(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text(
        '{"type": "entity", "name": "Alice", "entityType": "person", "observations": ["Leads payments"]}\n'
        '{"type": "entity", "name": "Bob", "entityType": "person", "observations": ["Runs ops"], "weight": NaN}\n'
    )
    report = import_mcp_memory(memory, path)
    assert {"reason": "non_finite_number", "line": 2, "fields": ["weight"]} in report["skipped"], report[
        "skipped"
    ]
    assert report["counts"]["entities_new"] == 1
