"""report: every section the contract lists, read-only."""

from __future__ import annotations

import pytest

from memory_substrate import Memory
from tests.maintain.conftest import claim, conversation, duplicate_claims, know, later, snapshot, soft_pair

SECTIONS = {
    "promotable_candidates",
    "low_evidence_candidates",
    "stale_candidates",
    "duplicate_groups",
    "soft_duplicate_candidates",
    "concept_candidates",
    "candidate_diagnostics",
    "fact_check_issues",
    "counts",
    "graph_health",
}


def test_report_spec_example_has_every_section_and_writes_nothing(memory: Memory) -> None:
    duplicate_claims(memory)
    soft_pair(memory)
    before = snapshot(memory)
    result = memory.maintain(
        "report",
        {
            "min_confidence": 0.75,
            "min_evidence": 1,
            "reference_time": "2026-04-28T00:00:00+00:00",
            "stale_after_days": 30,
        },
    )
    assert set(result) >= SECTIONS
    assert result["read_only"] is True and result["reference_time"].startswith("2026-04-28T00:00:00")
    assert snapshot(memory) == before
    health = result["graph_health"]
    for key in (
        "counts",
        "missing_backend_counts",
        "stub_node_count",
        "isolated_nodes",
        "sparse_clusters",
        "bridge_nodes",
        "weakly_connected_scopes",
    ):
        assert key in health


def test_candidate_sections(memory: Memory) -> None:
    src = conversation(memory, "Worker notes.")
    ev = [{"source_id": src, "segment_id": "seg-1"}]
    ready = know(
        memory, "Worker uses Celery", memory_source="agent_inferred", confidence=0.9, evidence_refs=ev
    )
    thin = know(memory, "Worker maybe uses RQ", memory_source="agent_inferred", confidence=0.9)
    # detail full: which candidates are selected, not how many fit the compact response budget
    result = memory.maintain(
        "report", {"reference_time": later(days=31), "stale_after_days": 30}, {"detail": "full"}
    )
    assert [i["id"] for i in result["promotable_candidates"]] == [ready]
    assert [i["id"] for i in result["low_evidence_candidates"]] == [thin]
    assert {i["id"] for i in result["stale_candidates"]} == {ready, thin}
    assert result["promotable_candidates"][0]["evidence_count"] == 1
    assert result["counts"]["candidates"] == 2


def test_deterministic_duplicate_groups(memory: Memory) -> None:
    first, second = duplicate_claims(memory)
    groups = memory.maintain("report", {})["duplicate_groups"]
    assert len(groups) == 1
    assert groups[0]["canonical_knowledge_id"] == second
    assert groups[0]["duplicate_knowledge_ids"] == [first]
    assert groups[0]["claim"]["predicate"] == "uses"


def test_soft_duplicates_use_the_documented_shape(memory: Memory) -> None:
    a, b = soft_pair(memory)
    # Compact detail (the default) leaves out the fixed review text and says where it is.
    compact = memory.maintain("report", {})
    assert compact["soft_duplicate_candidates"][0]["object_ids"] == [a, b]
    assert "review_guidance" not in compact["soft_duplicate_candidates"][0]
    assert "soft_duplicate_candidates.review_guidance" in compact["with_detail_full"]
    entry = memory.maintain("report", {}, {"detail": "full"})["soft_duplicate_candidates"][0]
    assert entry["object_ids"] == [a, b]
    assert 0 < entry["score"] <= 1
    assert {"title_overlap", "summary_overlap", "same_kind"} <= set(entry["reasons"])
    guidance = entry["review_guidance"]
    assert guidance["required_checks"] == [
        "read_both_knowledge_items",
        "compare_scope_refs",
        "compare_evidence_refs",
        "decide_whether_meaning_is_same_distinct_or_conflicting",
    ]
    assert [o["action"] for o in guidance["outcomes"]] == ["supersede", "keep_both", "contest"]
    assert all(
        o["tool"] == "memory_maintain" and o["mode"] == "resolve_duplicates" for o in guidance["outcomes"]
    )
    suggestion = entry["suggested_resolution"]
    assert suggestion["tool"] == "memory_maintain" and suggestion["mode"] == "resolve_duplicates"
    assert suggestion["options"] == {"apply": True}
    assert suggestion["input_data"]["outcome"] == "supersede"
    assert suggestion["input_data"]["knowledge_ids"] == [a, b]
    assert suggestion["input_data"]["canonical_knowledge_id"] in (a, b)
    assert entry["next_actions"] == [
        "review_duplicate_pair",
        "choose_supersede_keep_both_or_contest",
        "call_memory_maintain_resolve_duplicates_if_actionable",
    ]
    # The suggestion is a valid call as it stands.
    applied = memory.maintain(suggestion["mode"], suggestion["input_data"], suggestion["options"])
    assert applied["status"] == "applied"


def test_concept_candidates_across_sources_carry_a_full_skeleton(memory: Memory) -> None:
    one = conversation(
        memory, "Each task gets a Context Pack.", "We rebuild the Context Pack per task.", title="design one"
    )
    two = conversation(
        memory,
        "We trimmed the Context Pack budget.",
        "Context Pack size matters.",
        "Current Todo",
        title="design two",
    )
    know(
        memory,
        "Design notes",
        scope_refs=["scope:memory-design"],
        evidence_refs=[{"source_id": one, "segment_id": "seg-1"}],
    )
    result = memory.maintain("report", {}, {"detail": "full"})
    cand = next(c for c in result["concept_candidates"] if c["title"] == "Context Pack")
    assert cand["detail"] == "full" and cand["candidate_type"] == "concept"
    assert set(cand["object_refs"]) == {one, two}
    assert "cross_source" in cand["ranking_signals"]["bonuses"]
    assert cand["occurrences"] == 4
    input_data = cand["suggested_memory"]["input_data"]
    assert set(input_data) == {
        "kind",
        "title",
        "summary",
        "reason",
        "memory_source",
        "scope_refs",
        "evidence_refs",
        "status",
        "confidence",
    }
    assert input_data["scope_refs"] == ["scope:memory-design"]  # inferred from knowledge citing the source
    assert input_data["status"] == "candidate" and input_data["memory_source"] == "agent_inferred"
    assert {e["source_id"] for e in input_data["evidence_refs"]} == {one, two}
    assert "review_guidance" in cand and "required_checks" in cand["review_guidance"]
    diagnostics = result["candidate_diagnostics"]
    assert {"skipped", "counts"} <= set(diagnostics)
    assert diagnostics["counts"]["sources_scanned"] == 2
    # The skeleton is accepted by memory_remember as it stands; then the concept is known.
    written = memory.remember("knowledge", input_data)
    assert written["knowledge_status"] == "candidate"
    again = memory.maintain("report", {})
    assert all(c["title"] != "Context Pack" for c in again["concept_candidates"])
    assert any(s["reason"] == "already_in_memory" for s in again["candidate_diagnostics"]["skipped"])


def test_fact_check_issues(memory: Memory) -> None:
    know(memory, "Kuzu is embedded", subject_refs=["node:Kuzu"])
    know(memory, "kuzu has Cypher", subject_refs=["node:kuzu"])
    dated = know(memory, "Freeze is on", valid_until=later(days=1))
    x = know(memory, "API on k8s", payload=claim("node:api", "runs_on", "node:k8s"), scope_refs=["scope:a"])
    y = know(memory, "API on ECS", payload=claim("node:api", "runs_on", "node:ecs"), scope_refs=["scope:b"])
    # Full detail: the compact default may defer entries to keep within the response budget.
    issues = memory.maintain("report", {"reference_time": later(days=2)}, {"detail": "full"})[
        "fact_check_issues"
    ]
    by_type = {i["issue_type"]: i for i in issues}
    assert set(by_type) == {"similar_entity_name", "stale_fact", "relationship_mismatch"}
    assert set(by_type["similar_entity_name"]["object_ids"]) == {"node:Kuzu", "node:kuzu"}
    assert by_type["stale_fact"]["object_id"] == dated
    assert by_type["relationship_mismatch"]["object_ids"] == [x, y]
    assert {a["object"] for a in by_type["relationship_mismatch"]["assertions"]} == {"node:k8s", "node:ecs"}


def test_graph_health_insights(memory: Memory) -> None:
    # A hub with eight spokes: a sparse star whose hub is a bridge; plus one lone record.
    spokes = [
        know(
            memory,
            f"Service {n} talks to the bus",
            f"Spoke number {n}.",
            subject_refs=["node:bus"],
            scope_refs=["scope:ops"],
        )
        for n in range(8)
    ]
    lone = know(memory, "Unlinked note", "Nothing points here.", scope_refs=["scope:ops"])
    # Compact detail (the default) counts the insights; "full" lists them.
    assert memory.maintain("report", {})["graph_health"]["isolated_nodes"] == {"count": 1}
    health = memory.maintain("report", {}, {"detail": "full"})["graph_health"]
    assert health["backend"] == "file" and health["available"] is True
    assert health["counts"]["canonical"] == health["counts"]["backend"]
    assert health["missing_backend_counts"] == {"relations": 0, "nodes": 0}
    assert health["stub_node_count"] == 1
    assert lone in [i["id"] for i in health["isolated_nodes"]["items"]]
    assert [i["id"] for i in health["bridge_nodes"]["items"]] == ["node:bus"]
    cluster = health["sparse_clusters"]["items"][0]
    assert cluster["size"] == 9 and cluster["relations"] == 8 and cluster["hub_id"] == "node:bus"
    scope = next(s for s in health["weakly_connected_scopes"]["items"] if s["scope"] == "scope:ops")
    assert scope["records"] == 9 and scope["components"] == 2 and scope["isolated_records"] == 1
    assert len(spokes) == 8


def test_graph_health_counts_a_relation_missing_from_the_backend(memory: Memory) -> None:
    k = know(
        memory, "API runs on k8s", payload=claim("node:api", "runs_on", "node:k8s"), subject_refs=["node:api"]
    )
    rel = memory.query("expand", {"id": k})["related"][0]["relation"]
    with memory.store.write(memory.namespace) as session:  # simulate a lost index row
        session.delete_relations([rel["id"]])
    health = memory.maintain("report", {})["graph_health"]
    assert health["missing_backend_counts"]["relations"] == 1
    assert health["counts"]["backend"]["relations"] == health["counts"]["canonical"]["relations"] - 1


@pytest.mark.parametrize("cap", [1, 2])
def test_sections_are_capped_with_full_counts(memory: Memory, cap: int) -> None:
    for n in range(3):
        know(memory, f"Unsure claim {n}", memory_source="agent_inferred", confidence=0.9)
    result = memory.maintain("report", {}, {"max_items": cap})
    assert len(result["low_evidence_candidates"]) == cap
    assert result["counts"]["low_evidence_candidates"] == 3
    assert result["truncated"]["low_evidence_candidates"] is True
