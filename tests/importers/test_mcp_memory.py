"""Importing from, and exporting to, the reference MCP memory server's JSON Lines (both backends)."""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from memory_substrate import Memory
from memory_substrate.cli.main import main
from memory_substrate.importers.mcp_memory import (
    export_mcp_memory,
    import_mcp_memory,
    map_entity_type,
    map_predicate,
)

FIXTURE = Path(__file__).parent / "fixtures" / "mcp_memory.jsonl"
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def _entity(memory: Memory, name: str) -> dict[str, Any]:
    items = memory.query("entities", {"name": name}, {"max_facts": 50})["items"]
    assert len(items) == 1, items
    entity: dict[str, Any] = items[0]
    return entity


def _patches(memory: Memory) -> int:
    with memory.store.read(memory.namespace) as s:
        return len(s.list_patches(limit=100_000))


def test_entities_observations_and_relations_arrive_as_governed_graph(memory: Memory) -> None:
    report = import_mcp_memory(memory, FIXTURE)
    assert report["status"] == "completed"
    assert report["counts"]["entities_new"] == 6 and report["counts"]["observations_new"] == 7
    assert report["counts"]["relations_new"] == 5

    alice = _entity(memory, "Alice Johnson")
    assert alice["type"] == "person"
    observed = {f["value"] for f in alice["facts"] if f["predicate"] == "observation"}
    assert observed == {
        "Speaks fluent Spanish",
        "Leads the payments team",
        "Prefers <b>bold</b> & terse reviews",
    }
    relations = {(f["predicate"], f["object"]["name"]) for f in alice["facts"] if f.get("object")}
    # Both "knows about" targets stay live: an import never supersedes itself.
    assert relations == {
        ("works_at", "Acme Corp"),
        ("uses", "Kuzu"),
        ("knows_about", "Project Falcon"),
        ("knows_about", "Lisbon"),
    }
    falcon = _entity(memory, "Project Falcon")
    assert any(
        f["predicate"] == "contained_in" and f["object"]["name"] == "Acme Corp" for f in falcon["facts"]
    )
    assert (
        _entity(memory, "Acme Corp")["type"] == "organization"
        and _entity(memory, "Kuzu")["type"] == "technology"
    )
    assert report["type_mapping"]["vibe"] == "pattern (no match)" and report["predicate_mapping"] == {
        "part_of": "contained_in"
    }

    # Evidence points at real segments of an import source, and everything is marked imported.
    fact = next(f for f in alice["facts"] if f.get("value") == "Speaks fluent Spanish")
    ref = fact["evidence_refs"][0]
    with memory.store.read(memory.namespace) as s:
        seg = s.get_segments(ref["source_id"], segment_ids=[ref["segment_id"]])[0]
        source = s.get_object(ref["source_id"])
        obj = s.get_object(fact["id"])
        patches = s.list_patches(limit=100)
    assert (
        seg.text == "Speaks fluent Spanish" and seg.locator["line"] == 1 and seg.locator["observation"] == 0
    )
    assert (
        source is not None
        and source.memory_source == "imported"
        and isinstance(uri := source.metadata["uri"], str)
        and uri.startswith("mcp-memory:")
    )
    assert obj is not None and obj.memory_source == "imported"
    assert {p.tool for p in patches} == {"memory_ingest", "memory_remember"}


def test_every_skip_is_reported_with_its_reason(memory: Memory) -> None:
    report = import_mcp_memory(memory, FIXTURE)
    reasons = {(s["reason"], s.get("line")) for s in report["skipped"]}
    assert ("invalid_json", 8) in reasons and ("unknown_record_type", 9) in reasons
    assert ("entity_without_name", 10) in reasons and ("entity_generic_concept", 7) in reasons
    assert ("relation_unknown_entity", 16) in reasons and ("relation_incomplete", 17) in reasons
    assert report["skipped_count"] == 6


def test_reimport_is_a_noop_and_an_edit_adds_only_what_changed(memory: Memory, tmp_path: Path) -> None:
    import_mcp_memory(memory, FIXTURE)
    before = _patches(memory)
    again = import_mcp_memory(memory, FIXTURE)
    assert again["status"] == "noop" and again["patches"] == 0 and _patches(memory) == before

    edited = tmp_path / "memory.jsonl"
    lines = FIXTURE.read_text().splitlines()
    lines[0] = json.dumps(
        {
            "type": "entity",
            "name": "Alice Johnson",
            "entityType": "person",
            "observations": ["Speaks fluent Spanish", "Moved to Porto"],
        }
    )
    edited.write_text("\n".join(lines) + "\n")
    third = import_mcp_memory(memory, edited)
    assert third["counts"].get("entities_new", 0) == 0
    assert third["counts"]["observations_new"] == 1  # "Moved to Porto"; the rest is already known
    alice = _entity(memory, "Alice Johnson")
    values = [f["value"] for f in alice["facts"] if f["predicate"] == "observation"]
    assert sorted(values).count("Speaks fluent Spanish") == 1 and "Moved to Porto" in values


def test_export_writes_the_same_format_back(memory: Memory, tmp_path: Path) -> None:
    import_mcp_memory(memory, FIXTURE)
    out = tmp_path / "out.jsonl"
    with out.open("w") as fh:
        counts = export_mcp_memory(memory, fh)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert counts == {"entities": 6, "relations": 5, "observations": 7, "merged": 0}
    ents = {r["name"]: r for r in records if r["type"] == "entity"}
    assert set(ents["Alice Johnson"]) == {"type", "name", "entityType", "observations"}
    assert ents["Alice Johnson"]["observations"][0] == "Speaks fluent Spanish"
    assert ents["Acme Corp"]["entityType"] == "organization"
    rels = {(r["from"], r["relationType"], r["to"]) for r in records if r["type"] == "relation"}
    assert ("Alice Johnson", "works_at", "Acme Corp") in rels and (
        "Project Falcon",
        "contained_in",
        "Acme Corp",
    ) in rels

    # The export imports into a fresh namespace as the same graph.
    fresh = memory.for_namespace(memory.namespace + "-copy")
    second = import_mcp_memory(fresh, out)
    assert second["counts"]["entities_new"] == 6 and second["counts"]["relations_new"] == 5
    assert second["skipped_count"] == 0


def test_cli_import_and_export(memory: Memory, tmp_path: Path, make_settings: Any) -> None:
    settings = make_settings()
    base = ["--root", str(settings.root), "--namespace", memory.namespace, "--embedder", "none"]
    if settings.database_url:
        base += ["--database-url", settings.database_url]
    runner = CliRunner()
    res = runner.invoke(main, [*base, "import-from", "mcp-memory", str(FIXTURE)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["counts"]["entities_new"] == 6
    out = tmp_path / "export.jsonl"
    res = runner.invoke(main, [*base, "export", "--format", "mcp-memory", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert sum(1 for line in out.read_text().splitlines() if '"type": "entity"' in line) == 6
    missing = runner.invoke(main, [*base, "import-from", "mcp-memory", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code != 0


def test_type_and_predicate_mapping() -> None:
    assert map_entity_type("Company") == ("organization", True)
    assert map_entity_type("people") == ("person", True)
    assert map_entity_type("Programming Language") == ("technology", True)
    assert map_entity_type("zzz") == ("pattern", False)
    assert map_predicate("is part of") == "contained_in"
    assert map_predicate("Works At!") == "works_at"
    assert map_predicate("  ") is None and map_predicate("42") is None


def test_a_large_file_streams_with_bounded_memory(tmp_path: Path, make_settings: Any, backend: str) -> None:
    """Python's peak allocation during an import does not grow with the file: a file four times
    larger peaks no higher (the importer holds one part at a time). Throughput at 50 MB:
    bench/import_bench.py."""
    import pytest

    if backend != "sqlite":
        pytest.skip("the streaming property does not depend on the backend; one run is enough")
    from gen_mcp_memory import generate

    peaks = []
    for i, size in enumerate((1_000_000, 4_000_000)):
        path = tmp_path / f"big{i}.jsonl"
        # Long observations keep the record count (and the test's time) small while the bytes grow.
        shape = generate(path, size, seed=3, words=(600, 900))
        mem = Memory(make_settings(), namespace=f"big{i}")
        try:
            ticks: list[int] = []
            tracemalloc.start()

            def progress(done: int, total: int, label: str, ticks: list[int] = ticks) -> None:
                ticks.append(done)

            report = import_mcp_memory(mem, path, progress=progress)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        finally:
            mem.close()
        assert report["counts"]["entities_new"] == shape["entities"]
        assert (
            report["counts"]["relations_new"] + report["counts"].get("relations_reinforced", 0)
            == shape["relations"]
        )
        assert ticks == sorted(ticks) and len(ticks) > 5
    assert peaks[1] < 1.5 * peaks[0], peaks
    assert peaks[1] < 4_000_000 * 0.75, peaks


def test_an_interrupted_import_resumes_on_the_next_run(memory: Memory, monkeypatch: Any) -> None:
    """A part captured before its records were applied (the process died in between) is applied
    on the next run instead of being mistaken for an unchanged part."""
    import pytest

    from memory_substrate.importers import mcp_memory
    from memory_substrate.importers.result_types import AppliedGroup

    real = mcp_memory.apply_extractions
    calls = {"n": 0}

    def dying(*args: Any, **kwargs: Any) -> list[AppliedGroup]:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # after the first part's records, before the second part's
        return real(*args, **kwargs)

    monkeypatch.setattr(mcp_memory, "apply_extractions", dying)
    with pytest.raises(KeyboardInterrupt):
        import_mcp_memory(memory, FIXTURE)
    monkeypatch.setattr(mcp_memory, "apply_extractions", real)
    resumed = import_mcp_memory(memory, FIXTURE)
    assert resumed["counts"]["parts_resumed"] == 1
    fresh = memory.for_namespace(memory.namespace + "-ref")
    reference = import_mcp_memory(fresh, FIXTURE)
    for name in ("Alice Johnson", "Acme Corp", "Kuzu", "Lisbon", "Quantum Mood", "Project Falcon"):
        mine = {
            (f["predicate"], f.get("value"), (f.get("object") or {}).get("name"))
            for f in _entity(memory, name)["facts"]
        }
        theirs = {
            (f["predicate"], f.get("value"), (f.get("object") or {}).get("name"))
            for f in _entity(fresh, name)["facts"]
        }
        assert mine == theirs, name
    assert reference["counts"]["entities_new"] == 6
