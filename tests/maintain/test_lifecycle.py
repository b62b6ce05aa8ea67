"""promote_candidates, decay_stale, archive_source and cycle."""

from __future__ import annotations

import pytest

from memory_substrate import Memory
from memory_substrate.errors import NotFoundError
from tests.maintain.conftest import conversation, duplicate_claims, know, later, status_of


def test_promote_candidates_uses_confidence_and_evidence_thresholds(memory: Memory) -> None:
    src = conversation(memory, "Evidence for the queue.", "More evidence.")
    ev = [{"source_id": src, "segment_id": "seg-1"}]
    good = know(memory, "Queue is Redis", memory_source="agent_inferred", confidence=0.9, evidence_refs=ev)
    no_evidence = know(memory, "Cache is Memcached", memory_source="agent_inferred", confidence=0.9)
    unsure = know(
        memory, "Workers run hourly", memory_source="agent_inferred", confidence=0.5, evidence_refs=ev
    )
    expired = know(
        memory,
        "Freeze until Monday",
        memory_source="agent_inferred",
        confidence=0.95,
        evidence_refs=ev,
        valid_until=later(seconds=1),
    )

    plan = memory.maintain(
        "promote_candidates", {"min_confidence": 0.75, "min_evidence": 1, "reference_time": later(days=1)}
    )
    assert plan["promoted_knowledge_ids"] == [good]
    assert plan["counts"] == {"candidates_checked": 4, "promoted": 1}

    loose = memory.maintain(
        "promote_candidates", {"min_confidence": 0.4, "min_evidence": 0, "reference_time": later(days=1)}
    )
    assert set(loose["promoted_knowledge_ids"]) == {good, no_evidence, unsure}

    done = memory.maintain("promote_candidates", {"reference_time": later(days=1)}, {"apply": True})
    assert done["promoted_knowledge_ids"] == [good]
    assert status_of(memory, good) == "active"
    assert {status_of(memory, k) for k in (no_evidence, unsure, expired)} == {"candidate"}
    event = memory.maintain("audit", {"object_id": good})["events"][0]
    assert event["action"] == "status_change" and event["patch_id"] == done["patch_id"]
    assert event["data"]["changes"]["status"] == {"from": "candidate", "to": "active"}


def test_decay_expires_past_validity_and_stales_unreviewed_candidates(memory: Memory) -> None:
    active_dated = know(memory, "Release branch is frozen", valid_until=later(days=3))
    cand_dated = know(memory, "Beta flag is on", memory_source="agent_inferred", valid_until=later(days=3))
    cand_old = know(memory, "Maybe uses gRPC", memory_source="agent_inferred")
    active_old = know(memory, "Uses PostgreSQL")  # reviewed: age alone never decays it

    result = memory.maintain(
        "decay_stale", {"reference_time": later(days=45), "stale_after_days": 30}, {"apply": True}
    )
    assert set(result["expired_knowledge_ids"]) == {active_dated, cand_dated}
    assert result["stale_knowledge_ids"] == [cand_old]
    assert result["counts"] == {"expired": 2, "stale": 1}
    assert status_of(memory, active_dated) == "expired"
    assert status_of(memory, cand_dated) == "expired"
    assert status_of(memory, cand_old) == "stale"
    assert status_of(memory, active_old) == "active"
    # Decay deprecates the evidence (spec 004's lifecycle: ... promoted -> deprecated -> superseded).
    evidence = {
        k: memory.query("page", {"id": k}, {"detail": "full"})["object"]["metadata"].get("evidence_status")
        for k in (active_dated, cand_dated, cand_old, active_old)
    }
    assert evidence[active_dated] == evidence[cand_dated] == evidence[cand_old] == "deprecated"
    assert evidence[active_old] != "deprecated"
    # Stale knowledge can be promoted again after review, and gets its evidence status back.
    memory.remember("promote", {"knowledge_id": cand_old, "reason": "checked"})
    assert status_of(memory, cand_old) == "active"
    meta = memory.query("page", {"id": cand_old}, {"detail": "full"})["object"]["metadata"]
    assert meta.get("evidence_status") != "deprecated" and "evidence_status_before_decay" not in meta


def test_archive_source_spec_example(memory: Memory) -> None:
    retired = conversation(memory, "Local agent state said the cache is warm.", title="retired import")
    other = conversation(memory, "The ops runbook confirms the cache is warm.", title="runbook")
    only = know(memory, "Cache starts warm", evidence_refs=[{"source_id": retired, "segment_id": "seg-1"}])
    mixed = know(
        memory,
        "Cache warm at boot",
        "Warm cache on boot.",
        evidence_refs=[
            {"source_id": retired, "segment_id": "seg-1"},
            {"source_id": other, "segment_id": "seg-1"},
        ],
    )
    elsewhere = know(memory, "Runbook exists", evidence_refs=[{"source_id": other, "segment_id": "seg-1"}])
    unrelated = know(memory, "No evidence here")

    result = memory.maintain(
        "archive_source",
        {"source_id": retired, "reason": "Retired because the import captured local agent state."},
        {"apply": True},
    )
    assert result["status"] == "applied"
    assert result["source_id"] == retired
    assert result["stale_knowledge_ids"] == [only]
    assert result["partially_affected_knowledge_ids"] == [mixed]
    assert result["counts"] == {"sources_archived": 1, "stale": 1, "partially_affected": 1}
    assert status_of(memory, retired) == "archived"
    assert status_of(memory, only) == "stale"
    assert {status_of(memory, k) for k in (mixed, elsewhere, unrelated)} == {"active"}
    assert status_of(memory, other) == "active"


def test_archive_source_names_a_missing_source(memory: Memory) -> None:
    with pytest.raises(NotFoundError, match="src:nope"):
        memory.maintain("archive_source", {"source_id": "src:nope"}, {"apply": True})
    know_id = know(memory, "A knowledge item")
    with pytest.raises(NotFoundError, match=know_id):
        memory.maintain("archive_source", {"source_id": know_id})


def test_cycle_spec_example(memory: Memory) -> None:
    result = memory.maintain(
        "cycle",
        {
            "min_confidence": 0.75,
            "min_evidence": 1,
            "reference_time": "2026-04-28T00:00:00+00:00",
            "stale_after_days": 30,
        },
        {"apply": True},
    )
    assert result["result_type"] == "cycle_result"
    assert set(result["steps"]) == {"promote_candidates", "merge_duplicates", "decay_stale"}
    assert result["status"] == "noop"


def test_cycle_runs_every_step_in_one_patch_and_plans_what_it_applies(memory: Memory) -> None:
    first, second = duplicate_claims(memory)
    src = conversation(memory, "Evidence for the worker.")
    promotable = know(
        memory,
        "Worker uses Celery",
        memory_source="agent_inferred",
        confidence=0.9,
        evidence_refs=[{"source_id": src, "segment_id": "seg-1"}],
    )
    old = know(memory, "Perhaps uses Kafka", memory_source="agent_inferred", confidence=0.2)
    dated = know(memory, "Sprint 12 is running", valid_until=later(days=10))
    input_data = {
        "min_confidence": 0.75,
        "min_evidence": 1,
        "reference_time": later(days=40),
        "stale_after_days": 30,
    }

    plan = memory.maintain("cycle", input_data)
    result = memory.maintain("cycle", input_data, {"apply": True})
    assert plan["status"] == "dry_run" and result["status"] == "applied"
    for step in ("promote_candidates", "merge_duplicates", "decay_stale"):
        assert plan["steps"][step] == result["steps"][step]
    steps = result["steps"]
    assert steps["promote_candidates"]["promoted_knowledge_ids"] == [promotable]
    assert steps["merge_duplicates"]["groups"][0]["canonical_knowledge_id"] == second
    assert steps["merge_duplicates"]["groups"][0]["superseded_knowledge_ids"] == [first]
    assert steps["decay_stale"]["expired_knowledge_ids"] == [dated]
    assert steps["decay_stale"]["stale_knowledge_ids"] == [old]
    # The promoted candidate was promoted before decay ran, so it did not go stale.
    assert status_of(memory, promotable) == "active"
    assert result["counts"]["promoted"] == 1 and result["counts"]["superseded"] == 1
    assert result["counts"]["expired"] == 1 and result["counts"]["stale"] == 1
    patches = memory.maintain("audit", {})["patches"]
    assert [p["patch_id"] for p in patches if p["mode"] == "cycle"] == [result["patch_id"]]
