"""configure is atomic: every derived index it turns on is built before the setting is saved;
on failure nothing is saved, no half-built copy stays, and the error names the backend. doctor
and structure report an unbuilt or lagging derived index as a problem. Both databases."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory_substrate.derived.lancedb_vectors import table_name
from memory_substrate.errors import BackendError
from tests.helpers import conversation
from tests.reliability.common import child_env, cli


def _with_entities(mem: Any) -> None:
    ep = mem.ingest(
        "conversation",
        conversation(["Dana Smith works at the Berlin office of Acme.", "Kafka runs billing."]),
    )
    mem.remember(
        "extraction",
        {
            "episode_id": ep["source_id"],
            "reason": "test",
            "memory_source": "agent_inferred",
            "scope_refs": ["scope:project"],
            "entities": [
                {"name": "Dana Smith", "type": "person"},
                {"name": "Acme Handbook", "type": "document"},
                {"name": "Acme", "type": "organization"},
            ],
            "facts": [
                {"subject": "Dana Smith", "predicate": "works_at", "object": "Acme", "segment_ids": ["seg-1"]}
            ],
        },
    )


def _doctor(mem: Any, namespace: str) -> dict[str, Any]:
    env = child_env(mem.settings.root, mem.settings.database_url, namespace)
    out = cli(env, "doctor")
    report = json.loads(out.stdout)
    assert (out.returncode == 0) == report["ok"], out.stderr
    return dict(report)


def test_table_names_are_safe_for_any_owner_type() -> None:
    names = {
        table_name(t, "ns", "m")
        for t in ("object", "segment", "entity:document", "entity:person", "x y/z", "")
    }
    assert len(names) == 6 and all(n.replace("_", "").isalnum() for n in names), names
    assert table_name("object", "ns", "m").startswith("object_")  # tables of existing stores keep their names


def test_configure_kuzu_and_lancedb_on_a_store_with_entities_builds_both(
    open_memory: Any, namespace: str
) -> None:
    mem = open_memory(embedder="static")
    _with_entities(mem)
    with mem.store.read(namespace) as session:
        owner_types = {t for t, _, _, _ in session.iter_vectors(batch_size=100)}
    assert any(t.startswith("entity:") for t in owner_types), owner_types  # what broke LanceDB before
    out = mem.maintain("configure", {"graph_backend": "kuzu", "semantic_backend": "lancedb"}, {"apply": True})
    assert out["status"] == "applied", out
    assert set(out["derived_backends"]["built"]) == {"kuzu", "lancedb"}
    derived = mem.maintain("structure", {}, {})["derived_backends"]
    assert derived["kuzu"]["built"] and derived["lancedb"]["built"] and derived["problems"] == [], derived
    mem.ingest("conversation", conversation(["A later write is mirrored too."]))
    assert mem.maintain("structure", {}, {})["derived_backends"]["problems"] == []
    mem.close()  # Kùzu admits one process at a time: doctor runs in its own
    report = _doctor(mem, namespace)
    assert report["ok"] and report["derived_backends"]["problems"] == [], json.dumps(report)[-1500:]


def test_a_failing_build_saves_nothing_and_leaves_no_copy(open_memory: Any, namespace: str) -> None:
    mem = open_memory(embedder="static", falkordb_url="redis://127.0.0.1:1")  # nothing listens there
    pytest.importorskip("falkordb")
    _with_entities(mem)
    before = mem.maintain("structure", {}, {})["config"]
    with pytest.raises(BackendError) as failed:
        mem.maintain(
            "configure", {"graph_backend": "falkordb", "semantic_backend": "lancedb"}, {"apply": True}
        )
    assert failed.value.details["backend"] == "falkordb" and "falkordb" in failed.value.message
    assert "Nothing was saved" in failed.value.message
    after = mem.maintain("structure", {}, {})
    assert after["config"] == before and "derived_backends" not in after
    lance = mem.store.mirror.indexes.backend("lancedb")
    assert not lance.is_built(namespace)  # built first, then dropped when falkordb failed
    mem.ingest("conversation", conversation(["Writes go on as before."]))
    report = _doctor(mem, namespace)
    assert report["ok"] and report["problems"] == [], report


def test_structure_and_doctor_report_an_unbuilt_index(open_memory: Any, namespace: str) -> None:
    mem = open_memory(embedder="static")
    _with_entities(mem)
    mem.maintain("configure", {"semantic_backend": "lancedb"}, {"apply": True})
    mem.store.mirror.indexes.backend("lancedb").drop(namespace)  # the index is lost
    problems = mem.maintain("structure", {}, {})["derived_backends"]["problems"]
    assert problems and "lancedb" in problems[0] and "not built" in problems[0], problems
    report = _doctor(mem, namespace)
    assert not report["ok"] and any("lancedb" in p and "not built" in p for p in report["problems"]), report
