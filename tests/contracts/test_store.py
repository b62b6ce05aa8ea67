"""Store <-> graph.v1: export a namespace, import it through governed writes, and get the
same snapshot back (both backends)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.contracts.documents import GraphDocument
from memory_substrate.contracts.results import SnapshotReport
from memory_substrate.contracts.snapshot_export import export_snapshot
from memory_substrate.contracts.validate import validate
from memory_substrate.errors import ValidationError
from memory_substrate.models import MemoryObject
from memory_substrate.patch import Patch
from tests.contracts.documents import load_object
from tests.helpers import conversation, knowledge

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "memory"


def _export(memory: Memory) -> tuple[GraphDocument, SnapshotReport]:
    with memory.store.read(memory.namespace) as session:
        return export_snapshot(session)


def _fill(memory: Memory) -> dict[str, str]:
    """Every family and lifecycle the mapping covers: a conversation with evidence, structured
    claims (superseded, contested), stub nodes, activity, work item, an entity and an object
    type this build does not know."""
    conv = memory.ingest(
        "conversation", conversation(["We run PostgreSQL 16 in production.", "And SQLite for tests."])
    )
    src = conv["source_id"]
    old = memory.remember(
        "knowledge",
        knowledge(
            title="Prod runs PostgreSQL 15",
            summary="Production database is PostgreSQL 15.",
            subject_refs=["node:prod-db"],
            payload={"subject": "node:prod-db", "predicate": "version", "value": "15"},
        ),
    )
    new = memory.remember(
        "knowledge",
        knowledge(
            title="Prod runs PostgreSQL 16",
            summary="Production database is PostgreSQL 16.",
            payload={"subject": "node:prod-db", "predicate": "version", "value": "16"},
            evidence_refs=[{"source_id": src, "segment_id": "seg-1"}],
            confidence=0.9,
            valid_from="2026-01-01T00:00:00+00:00",
        ),
    )
    # A claim with valid_from is a change over time: it superseded the old one on arrival.
    assert new["conflicts"] == [
        {"object_id": old["object_id"], "title": "Prod runs PostgreSQL 15", "outcome": "superseded"}
    ]
    memory.remember(
        "knowledge",
        knowledge(
            kind="decision",
            title="Tests use SQLite",
            summary="SQLite for tests.",
            memory_source="agent_inferred",
            payload={"subject": "node:tests", "predicate": "db", "object": "node:sqlite"},
        ),
    )
    memory.remember(
        "knowledge",
        knowledge(
            kind="setting",
            title="Pool size 10",
            summary="Pool is 10.",
            payload={"subject": "node:pool", "predicate": "size", "value": 10},
        ),
    )
    pool20 = memory.remember(
        "knowledge",
        knowledge(
            kind="setting",
            title="Pool size 20",
            summary="Pool is 20.",
            payload={"subject": "node:pool", "predicate": "size", "value": 20},
        ),
    )
    # an explicit supersede of the contested pair: a status change and an update of the newer claim
    memory.remember(
        "supersede",
        {
            "old_knowledge_id": pool20["conflicts"][0]["object_id"],
            "new_knowledge_id": pool20["object_id"],
            "reason": "resized",
        },
    )
    memory.remember(
        "activity",
        knowledge(
            kind="review",
            title="Reviewed the DB chat",
            summary="Read it.",
            source_refs=[src],
            related_node_refs=["node:prod-db"],
        ),
    )
    memory.remember(
        "work_item",
        knowledge(
            kind="task", title="Upgrade staging", summary="Staging to 16.", status="blocked", priority="high"
        ),
    )
    with memory.store.write(memory.namespace) as session:
        patch = Patch(session, tool="test", mode="entity", reason="fixture", embedder=None)
        patch.create(
            MemoryObject(
                id="ent:0001-ada",
                object_type="entity",
                kind="person",
                status="active",
                title="Ada",
                summary="Ada Lovelace",
                memory_source="user_declared",
                payload={"name": "Ada", "entity_type": "person", "aliases": ["A. L."]},
            )
        )
        patch.create(
            MemoryObject(id="trc:0001", object_type="trace", kind="compile", status="active", title="A trace")
        )
        patch.commit()
    return {"source": src, "new": new["object_id"], "old": old["object_id"]}


def test_export_import_export_is_stable(memory: Memory) -> None:
    ids = _fill(memory)
    memory.remember("graph_snapshot", {"snapshot": load_object(EXAMPLES / "decision-graph.yaml")})
    first, report = _export(memory)
    assert validate(first, "graph") == []
    assert report["approximated"] == [
        {"object_type": "knowledge", "kind": "setting", "node_kind": "memory", "count": 2},
        {"object_type": "trace", "kind": "compile", "node_kind": "memory", "count": 1},
    ]
    nodes = {n["id"]: n for n in first["nodes"]}
    assert nodes[ids["source"]]["kind"] == "episode"
    assert nodes[f"{ids['source']}#seg-1"]["kind"] == "turn"
    assert nodes[ids["new"]]["kind"] == "source_fact" and nodes[ids["old"]]["status"] == "superseded"
    assert nodes["ent:0001-ada"]["kind"] == "entity"
    kinds = {e["kind"] for e in first["edges"]}
    assert {
        "belongs_to",
        "derived_from",
        "supersedes",
        "references",
        "supports",
        "contradicts",
        "governs",
    } <= kinds
    event_kinds = {e["kind"] for e in first["events"]}
    assert {"recorded", "updated", "deactivated", "policy_decision"} <= event_kinds

    other = memory.for_namespace(memory.namespace + "-copy")
    result = other.remember("graph_snapshot", {"snapshot": first})
    assert result["nodes_not_imported"] == [] and result["edges_not_imported"] == []
    assert list(result["id_map"]) == ["trc:0001"]  # every other id is a store id and is kept
    second, report2 = _export(other)
    # the unknown object type was imported as the closest kind, and said so
    assert [a["node_id"] for a in result["approximated"]] == ["trc:0001"]
    drop = {"trc:0001", result["id_map"].get("trc:0001")}
    strip: Callable[[Any], dict[str, Any]] = lambda snap: {  # noqa: E731
        "nodes": [n for n in snap["nodes"] if n["id"] not in drop],
        "edges": snap["edges"],
        "events": [e for e in snap["events"] if not set(e["refs"]) & drop],
    }
    assert strip(second) == strip(first)
    # from here on the snapshot is a fixed point: byte for byte, content hash included
    third_ns = other.for_namespace(memory.namespace + "-third")
    third_ns.remember("graph_snapshot", {"snapshot": second})
    third, report3 = _export(third_ns)
    assert (
        third["nodes"] == second["nodes"]
        and third["edges"] == second["edges"]
        and third["events"] == second["events"]
    )
    assert report3["content_sha256"] == report2["content_sha256"]


def test_import_is_governed_and_reports_what_it_could_not_map(memory: Memory) -> None:
    snapshot = load_object(EXAMPLES / "conversation-path.yaml")
    result = memory.remember("graph_snapshot", {"snapshot": snapshot, "scope_refs": ["scope:debugging"]})
    assert result["mode"] == "graph_snapshot" and result["patch_id"].startswith("patch:")
    assert result["created"] == {"activity": 8, "event": 3, "segment": 1, "source": 1}
    assert result["edges_not_imported"] == []  # plan-1 derived_from t1 became a source ref
    page = memory.query("page", {"id": result["id_map"]["plan-1"]})["object"]
    assert page["source_refs"] == [result["id_map"]["ep-session"]]
    recent = memory.query("recent", {}, {"max_items": 50})["items"]
    assert {i["id"]: i for i in recent}[result["id_map"]["edit-1"]]["kind"] == "edit"
    graph = memory.query("graph", {"id": result["id_map"]["edit-1"]})
    assert {e["rel_type"] for e in graph["edges"]} >= {"led_to", "supports", "activates"}
    # importing the same snapshot again writes nothing new
    again = memory.remember("graph_snapshot", {"snapshot": snapshot})
    assert again["created"] == {}
    assert len(again["already_present"]) == 9 + 3  # objects (t1 is a segment of ep-session) and events


def test_duplicates_map_to_existing_and_bad_evidence_is_reported(memory: Memory) -> None:
    existing = memory.remember(
        "knowledge", knowledge(payload={"subject": "node:api", "predicate": "port", "value": 80})
    )
    snapshot = {
        "schema_version": "markitect.memory.graph.v1",
        "id": "ext",
        "nodes": [
            {
                "id": "a",
                "kind": "source_fact",
                "title": "API port 80",
                "tags": ["scope:project"],
                "attributes": {
                    "object_type": "knowledge",
                    "object_kind": "fact",
                    "payload": {"subject": "node:api", "predicate": "port", "value": 80},
                },
            },
            {
                "id": "b",
                "kind": "claim",
                "title": "Cites a ghost",
                "text": "x",
                "attributes": {
                    "object_type": "knowledge",
                    "object_kind": "claim",
                    "evidence_refs": [{"source_id": "src:ghost"}],
                },
            },
            {"id": "c", "kind": "claim", "title": "Rests on a", "text": "y"},
        ],
        "edges": [
            {"id": "e1", "kind": "supports", "source": "c", "target": "a"},
            {"id": "e2", "kind": "supports", "source": "b", "target": "c"},
        ],
        "events": [{"id": "v1", "kind": "recorded", "at": "2026-05-01T00:00:00Z", "refs": ["b"]}],
    }
    result = memory.remember("graph_snapshot", {"snapshot": snapshot})
    assert result["duplicates"] == [{"node_id": "a", "existing_id": existing["object_id"]}]
    assert [n["id"] for n in result["nodes_not_imported"]] == ["b"]
    assert "src:ghost" in result["nodes_not_imported"][0]["reason"]
    assert [e["id"] for e in result["edges_not_imported"]] == ["e2"]
    assert [e["id"] for e in result["events_not_imported"]] == ["v1"]
    c = result["id_map"]["c"]
    rels = memory.query("expand", {"id": c})["related"]
    assert [(r["relation"]["rel_type"], r["object"]["id"]) for r in rels] == [
        ("supports", existing["object_id"])
    ]


def test_invalid_snapshot_writes_nothing(memory: Memory) -> None:
    before = memory.status()["counts"]
    with pytest.raises(ValidationError) as err:
        memory.remember("graph_snapshot", {"snapshot": load_object(EXAMPLES / "invalid-memory-graph.yaml")})
    diagnostics = err.value.details["diagnostics"]
    assert isinstance(diagnostics, list)
    codes = [d["code"] for d in diagnostics]
    assert "duplicate_id" in codes and "unknown_node_kind" in codes
    assert memory.status()["counts"] == before
    with pytest.raises(ValidationError):
        memory.remember("graph_snapshot", {"snapshot": {}, "scope_refs": ["project"]})


def test_export_of_some_objects(memory: Memory) -> None:
    ids = _fill(memory)
    with memory.store.read(memory.namespace) as session:
        snap, report = export_snapshot(session, ids=[ids["new"], ids["source"]])
    assert validate(snap, "graph") == []
    assert {n["id"] for n in snap["nodes"]} == {
        ids["new"],
        ids["source"],
        f"{ids['source']}#seg-1",
        f"{ids['source']}#seg-2",
    }
    assert {e["kind"] for e in snap["edges"]} == {"belongs_to", "derived_from"}
    assert report["left_out"]["relations_with_an_end_outside"] >= 1
    assert all(set(e["refs"]) <= {n["id"] for n in snap["nodes"]} for e in snap["events"])
