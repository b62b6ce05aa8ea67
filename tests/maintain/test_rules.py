"""The rules every mutating memory_maintain mode follows (apply gate, no-op, patch/audit, time,
strict validation)."""

from __future__ import annotations

from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.errors import ValidationError
from tests.maintain.conftest import conversation, know, later, snapshot, status_of


def _calls(ids: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        "configure": {"graph_backend": "file"},
        "reindex": {},
        "repair": {},
        "promote_candidates": {"min_confidence": 0.75, "min_evidence": 1},
        "merge_duplicates": {},
        "resolve_duplicates": {
            "outcome": "supersede",
            "knowledge_ids": [ids["soft_a"], ids["soft_b"]],
            "canonical_knowledge_id": ids["soft_b"],
            "reason": "same meaning",
        },
        "archive_source": {"source_id": ids["source"], "reason": "retired"},
        "decay_stale": {"reference_time": later(days=400), "stale_after_days": 30},
        "cycle": {
            "min_confidence": 0.75,
            "min_evidence": 1,
            "reference_time": later(),
            "stale_after_days": 30,
        },
    }


MUTATING = list(_calls({"soft_a": "", "soft_b": "", "source": ""}))


@pytest.mark.parametrize("mode", MUTATING)
def test_without_apply_nothing_changes_and_the_plan_is_returned(
    memory: Memory, busy: dict[str, Any], mode: str
) -> None:
    before = snapshot(memory)
    result = memory.maintain(mode, _calls(busy)[mode], {})
    assert result["applied"] is False
    assert result["dry_run"] is True
    assert result["status"] == "dry_run"
    assert result["patch_id"] is None and result["audit_event_ids"] == []
    assert any(v for v in result["counts"].values() if isinstance(v, int)), result["counts"]
    assert snapshot(memory) == before
    # apply=false is the same as leaving it out
    assert memory.maintain(mode, _calls(busy)[mode], {"apply": False})["status"] == "dry_run"
    assert snapshot(memory) == before


@pytest.mark.parametrize("mode", MUTATING)
def test_apply_writes_one_patch_with_audit_events(memory: Memory, busy: dict[str, Any], mode: str) -> None:
    before = snapshot(memory)["patches"]
    result = memory.maintain(mode, _calls(busy)[mode], {"apply": True})
    assert result["status"] == "applied" and result["applied"] is True and result["dry_run"] is False
    audit = memory.maintain("audit", {}, {"max_items": 1000})
    new = [p for p in audit["patches"] if p["patch_id"] not in before]
    assert [p["patch_id"] for p in new] == [result["patch_id"]]
    assert new[0]["mode"] == mode
    assert result["audit_event_ids"]
    events = {e["event_id"]: e for e in audit["events"]}
    for event_id in result["audit_event_ids"]:
        assert events[event_id]["patch_id"] == result["patch_id"]


@pytest.mark.parametrize(
    ("mode", "input_data"),
    [
        ("promote_candidates", {}),
        ("merge_duplicates", {}),
        ("decay_stale", {}),
        ("cycle", {}),
        ("repair", {}),
        ("reindex", {}),
    ],
)
def test_noop_paths_succeed_with_zero_counts(memory: Memory, mode: str, input_data: dict[str, Any]) -> None:
    result = memory.maintain(mode, input_data, {"apply": True})
    assert result["status"] == "noop"
    assert result["applied"] is False and result["patch_id"] is None and result["applied_operations"] == 0
    assert all(v == 0 for v in result["counts"].values() if isinstance(v, int)), result["counts"]
    assert memory.maintain("audit", {})["patches"] == []


def test_noop_when_nothing_qualifies_in_a_populated_store(memory: Memory) -> None:
    know(memory, "Reviewed fact", memory_source="agent_inferred", confidence=0.2)  # candidate, low confidence
    before = snapshot(memory)
    result = memory.maintain("promote_candidates", {"min_confidence": 0.75}, {"apply": True})
    assert result["status"] == "noop" and result["counts"]["promoted"] == 0
    assert snapshot(memory) == before


def test_configure_same_value_twice_is_a_noop(memory: Memory) -> None:
    first = memory.maintain("configure", {"graph_backend": "file"}, {"apply": True})
    assert first["status"] == "applied"
    again = memory.maintain("configure", {"graph_backend": "file"}, {"apply": True})
    assert again["status"] == "noop" and again["counts"] == {"changed": 0}


def test_archiving_an_archived_source_is_a_noop(memory: Memory) -> None:
    source = conversation(memory, "old capture")
    memory.maintain("archive_source", {"source_id": source}, {"apply": True})
    again = memory.maintain("archive_source", {"source_id": source}, {"apply": True})
    assert again["status"] == "noop" and again["counts"]["sources_archived"] == 0


def test_reference_time_and_stale_after_days_make_decay_deterministic(memory: Memory) -> None:
    cand = know(memory, "Unreviewed guess", memory_source="agent_inferred", confidence=0.3)
    dated = know(memory, "Sprint ends Friday", valid_until=later(days=5))

    def plan(**input_data: Any) -> dict[str, Any]:
        return memory.maintain("decay_stale", input_data)

    assert plan(reference_time=later(days=10), stale_after_days=30)["stale_knowledge_ids"] == []
    assert plan(reference_time=later(days=40), stale_after_days=30)["stale_knowledge_ids"] == [cand]
    assert plan(reference_time=later(days=10), stale_after_days=5)["stale_knowledge_ids"] == [cand]
    assert plan(reference_time=later(days=4))["expired_knowledge_ids"] == []
    assert plan(reference_time=later(days=6))["expired_knowledge_ids"] == [dated]
    # The report reads time the same way.
    report = memory.maintain("report", {"reference_time": later(days=40), "stale_after_days": 30})
    assert [i["id"] for i in report["stale_candidates"]] == [cand]
    assert [i["object_id"] for i in report["fact_check_issues"] if i["issue_type"] == "stale_fact"] == [dated]
    assert memory.maintain("report", {"reference_time": later(days=1)})["stale_candidates"] == []
    assert status_of(memory, cand) == "candidate"


@pytest.mark.parametrize(
    ("mode", "input_data", "options"),
    [
        ("report", {"unexpected": 1}, {}),
        ("report", {}, {"apply": True}),
        ("cycle", {}, {"apply": "true"}),
        ("decay_stale", {"stale_after_days": -1}, {}),
        ("promote_candidates", {"min_confidence": 1.5}, {}),
        ("configure", {"graph_backend": "neo4j"}, {"apply": True}),
        ("reindex", {"x": 1}, {}),
        (
            "resolve_duplicates",
            {"outcome": "merge", "knowledge_ids": ["know:a", "know:b"], "reason": "r"},
            {},
        ),
        ("archive_source", {}, {"apply": True}),
    ],
)
def test_inputs_and_options_are_validated_strictly(
    memory: Memory, mode: str, input_data: dict[str, Any], options: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        memory.maintain(mode, input_data, options)


def test_extra_fields_name_the_rule(memory: Memory) -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        memory.maintain("cycle", {"min_confidence": 0.5, "force": True}, {"apply": True})
