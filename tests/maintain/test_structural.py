"""configure, reindex, repair (with derived_indexes diagnostics), relation_schema provenance."""

from __future__ import annotations

from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.errors import NotAvailableError
from memory_substrate.json_types import JsonObject
from memory_substrate.maintain.service import MaintainService
from memory_substrate.models import RELATION_DERIVATIONS, Relation
from tests.maintain.conftest import HashEmbedder, claim, conversation, know, later, snapshot, use_embedder

SCHEMA_KEYS = {
    "version",
    "derivation",
    "origin_object_type",
    "origin_object_id",
    "origin_field",
    "source_object_type",
    "target_object_type",
}


@pytest.mark.parametrize(
    ("field", "value", "hidden"),
    [
        ("semantic_backend", "lancedb", "lancedb"),
        ("graph_backend", "kuzu", "ladybug"),
        ("graph_backend", "falkordb", "falkordb"),
    ],
)
def test_configure_refuses_a_backend_whose_extra_is_missing(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, field: str, value: str, hidden: str
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    # The install is the boundary here: pretend the backend's package is absent.
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == hidden else real(name, *a)
    )
    before = snapshot(memory)
    with pytest.raises(NotAvailableError, match=rf"pip install 'memory-substrate\[{value}\]'") as err:
        memory.maintain("configure", {"graph_backend": "file", field: value}, {"apply": True})
    assert err.value.code == "memory_not_available" and err.value.details["missing"] == [hidden]
    assert snapshot(memory) == before  # not even the supported half was written


def test_configure_falkordb_without_a_server_url_is_refused(memory: Memory) -> None:
    with pytest.raises(NotAvailableError, match="MEMORY_SUBSTRATE_FALKORDB_URL"):
        memory.maintain("configure", {"graph_backend": "falkordb"}, {"apply": True})
    assert memory.maintain("structure", {})["config"] == {}


def test_configure_persists_supported_backends(memory: Memory) -> None:
    plan = memory.maintain("configure", {"graph_backend": "file", "semantic_backend": "builtin"})
    assert plan["status"] == "dry_run" and memory.maintain("structure", {})["config"] == {}
    result = memory.maintain(
        "configure", {"graph_backend": "file", "semantic_backend": "builtin"}, {"apply": True}
    )
    assert result["changes"] == {
        "graph_backend": {"from": None, "to": "file"},
        "semantic_backend": {"from": None, "to": "builtin"},
    }
    assert memory.maintain("structure", {})["config"] == {
        "graph_backend": "file",
        "semantic_backend": "builtin",
    }
    assert memory.maintain("report", {})["graph_health"]["configured"] is True
    events = memory.maintain("audit", {"object_id": "config:graph_backend"})["events"]
    assert events[0]["patch_id"] == result["patch_id"]


def test_configure_without_fields_is_a_noop(memory: Memory) -> None:
    result = memory.maintain("configure", {}, {"apply": True})
    assert result["status"] == "noop" and result["warnings"]


def _seed_all_derivations(memory: Memory) -> dict[str, str]:
    src = conversation(memory, "Project X uses Kuzu.")
    old = know(memory, "X used Neo4j", "Old graph store.")
    new = know(
        memory,
        "X uses Kuzu",
        "Kuzu is the graph store.",
        subject_refs=["node:project-x"],
        evidence_refs=[{"source_id": src, "segment_id": "seg-1"}],
        payload=claim("node:project-x", "uses", "node:kuzu"),
    )
    memory.remember("supersede", {"old_knowledge_id": old, "new_knowledge_id": new, "reason": "migrated"})
    return {"source": src, "old": old, "new": new}


def test_relations_carry_relation_schema_with_the_four_derivations(memory: Memory) -> None:
    ids = _seed_all_derivations(memory)
    memory.maintain("reindex", {}, {"apply": True})
    assert set(memory.maintain("structure", {})["counts"]["relations_by_derivation"]) == set(
        RELATION_DERIVATIONS
    )
    graph = memory.query("graph", {"id": ids["new"]}, {"max_items": 20, "depth": 2, "detail": "full"})
    assert {e["derivation"] for e in graph["edges"]} == set(RELATION_DERIVATIONS)
    for edge in graph["edges"]:
        schema = edge["relation_schema"]
        assert set(schema) == SCHEMA_KEYS and schema["version"] == 1
        assert schema["origin_object_id"] == ids["new"]


def test_reindex_is_idempotent_and_restores_lost_relations(memory: Memory) -> None:
    ids = _seed_all_derivations(memory)
    structure = memory.maintain("structure", {})["counts"]
    lost = memory.query("expand", {"id": ids["new"]})["related"][0]["relation"]["id"]
    with memory.store.write(memory.namespace) as session:  # simulate a lost index row
        session.delete_relations([lost])
    diagnostics = memory.maintain("repair", {})["derived_indexes"]
    assert diagnostics["graph"]["missing_relations"] == 1 and diagnostics["stale"] is True

    plan = memory.maintain("reindex", {})
    assert plan["status"] == "dry_run" and plan["counts"]["relations_added"] == 1
    first = memory.maintain("reindex", {}, {"apply": True})
    assert first["counts"]["relations_added"] == 1
    second = memory.maintain("reindex", {}, {"apply": True})
    assert {
        k: second["counts"][k] for k in ("relations_added", "relations_rewritten", "relations_removed")
    } == {"relations_added": 0, "relations_rewritten": 0, "relations_removed": 0}
    assert second["counts"]["objects_full_text"] == first["counts"]["objects_full_text"]
    after = memory.maintain("structure", {})["counts"]
    assert after["relations"] == structure["relations"] and after["by_status"] == structure["by_status"]
    assert memory.maintain("repair", {})["derived_indexes"]["stale"] is False
    assert memory.query("search", {"query": "Kuzu graph store"})["items"][0]["id"] == ids["new"]


def test_reindex_reports_progress(memory: Memory) -> None:
    _seed_all_derivations(memory)
    seen: list[tuple[int, int, str]] = []
    MaintainService(memory.runtime).run(
        "reindex", {}, {"apply": True}, progress=lambda d, t, p: seen.append((d, t, p))
    )
    phases = {p for _, _, p in seen}
    assert {"full_text:objects", "graph:relations", "segments"} <= phases
    done, total, _ = next(s for s in seen if s[2] == "full_text:objects")
    assert 0 < done <= total


def test_vectors_missing_or_from_another_model_are_detected_then_rebuilt(memory: Memory) -> None:
    _seed_all_derivations(memory)  # written with no embedder: no vectors yet
    use_embedder(memory, HashEmbedder("test-hash-a"))
    vectors = memory.maintain("repair", {})["derived_indexes"]["vectors"]
    assert vectors["enabled"] and vectors["model"] == "test-hash-a"
    assert vectors["objects_missing"] > 0 and vectors["segments_missing"] == 1
    result = memory.maintain("reindex", {}, {"apply": True})
    assert result["counts"]["object_vectors"] == vectors["objects_missing"]
    assert result["counts"]["segment_vectors"] == 1
    assert memory.maintain("repair", {})["derived_indexes"]["stale"] is False

    use_embedder(memory, HashEmbedder("test-hash-b"))  # a model change
    vectors = memory.maintain("repair", {})["derived_indexes"]["vectors"]
    assert vectors["objects_stale_model"] == result["counts"]["object_vectors"]
    assert vectors["segments_stale_model"] == 1 and vectors["objects_missing"] == 0
    memory.maintain("reindex", {}, {"apply": True})
    stats = memory.maintain("structure", {})["counts"]["vectors"]
    assert set(stats) == {"object:test-hash-b", "segment:test-hash-b"}
    assert memory.maintain("reindex", {}, {})["counts"]["object_vectors"] == 0
    assert memory.maintain("reindex", {}, {"reembed": True})["counts"]["object_vectors"] > 0


def _insert(memory: Memory, *relations: Relation) -> None:
    with memory.store.write(memory.namespace) as session:  # damage only repair can mend
        session.insert_relations(relations)


def test_repair_spec_example_stubs_missing_nodes_and_drops_orphaned_relations(memory: Memory) -> None:
    k = know(memory, "Lonely fact")
    orphan_schema: JsonObject = {
        "relation_schema": {
            "version": 1,
            "derivation": "field_reference",
            "origin_object_type": "knowledge",
            "origin_object_id": "know:gone",
            "origin_field": "subject_refs",
            "source_object_type": "knowledge",
            "target_object_type": "node",
        }
    }
    _insert(
        memory,
        Relation("rel:to-ghost", "related_to", k, "node:ghost", None, {}, later()),
        Relation("rel:orphan", "about", "know:gone", "node:x", "know:gone", orphan_schema, later()),
        Relation("rel:dead-end", "related_to", k, "know:deleted", None, {}, later()),
    )
    plan = memory.maintain("repair", {})
    assert plan["status"] == "dry_run" and plan["repairs"]["stub_node_ids"] == ["node:ghost"]
    assert {r["id"] for r in plan["repairs"]["removed_relations"]} == {"rel:orphan", "rel:dead-end"}

    result = memory.maintain("repair", {}, {"apply": True})
    assert result["counts"]["stub_nodes_created"] == 1 and result["counts"]["relations_removed"] == 2
    stub = memory.query("page", {"id": "node:ghost"})["object"]
    assert stub["kind"] == "stub"
    assert memory.maintain("repair", {}, {"apply": True})["status"] == "noop"


def test_repair_reports_references_only_a_reviewer_can_fix(memory: Memory) -> None:
    k = know(memory, "Points at nothing", subject_refs=["know:never-written"])
    before = snapshot(memory)
    result = memory.maintain("repair", {}, {"apply": True})
    assert result["status"] == "noop"
    assert result["unresolved_references"] == [
        {
            "kind": "field_reference_missing",
            "object_id": k,
            "field": "subject_refs",
            "missing_id": "know:never-written",
        }
    ]
    assert snapshot(memory) == before


def test_missing_full_text_rows_are_detected_and_rebuilt(memory: Memory, backend: str) -> None:
    if backend != "sqlite":
        pytest.skip("simulates index loss with SQLite's own FTS table")
    k = know(memory, "Zebrafish assay protocol", "Run the zebrafish assay weekly.")
    with memory.store.write(memory.namespace) as session:
        inner: Any = getattr(session, "inner", session)
        inner.conn.execute(  # the namespace's own full-text table (storage/sqlite/fts_spaces.py)
            f"DELETE FROM {inner.fts().objects} WHERE rowid = (SELECT pk FROM objects WHERE id = ?)", (k,)
        )
    assert memory.query("search", {"query": "zebrafish"})["items"] == []
    full_text: dict[str, Any] = memory.maintain("repair", {})["derived_indexes"]["full_text"]
    assert full_text["objects_missing"] == 1 and full_text["sample_object_ids"] == [k]
    memory.maintain("reindex", {}, {"apply": True})
    assert memory.query("search", {"query": "zebrafish"})["items"][0]["id"] == k
    assert memory.maintain("repair", {})["derived_indexes"]["full_text"]["objects_missing"] == 0
