"""report: the read-only maintenance picture of one namespace, every section in one call.

Sections (each list capped at ``options.max_items``; ``counts`` has the full totals):
promotable, low-evidence and stale candidates; deterministic duplicate groups; soft duplicate
candidates in the documented review shape; concept candidates across sources with the full
``suggested_memory.input_data`` skeleton; candidate diagnostics; fact-check issues; and graph
health. It reads one consistent snapshot (one read transaction) and writes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from memory_substrate.answers.views import compact
from memory_substrate.graph.report import knowledge_graph_section
from memory_substrate.json_types import JsonObject
from memory_substrate.maintain.backends import effective
from memory_substrate.maintain.common import ALL, evidence_count, load_objects, reference
from memory_substrate.maintain.compact import REPORT_SECTIONS
from memory_substrate.maintain.concepts import cross_source_concepts
from memory_substrate.maintain.duplicates import duplicate_groups, group_view, soft_entry, soft_pairs
from memory_substrate.maintain.fact_check import fact_check
from memory_substrate.maintain.health_section import health_of
from memory_substrate.maintain.lifecycle import is_low_evidence, is_promotable, is_stale_candidate
from memory_substrate.maintain.report_types import (
    FactCheckIssue,
    GraphTotals,
    MaintenanceReport,
    ReportCounts,
)
from memory_substrate.maintain.schemas import ReportInput, ReportOptions
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.runtime import Runtime


def _counts(
    objects: list[MemoryObject],
    knowledge: list[MemoryObject],
    relations: list[Relation],
    *,
    promotable: list[MemoryObject],
    low_evidence: list[MemoryObject],
    stale: list[MemoryObject],
    groups: list[list[MemoryObject]],
    pairs: list[tuple[float, list[str], MemoryObject, MemoryObject]],
    concepts_total: int,
    issues: list[FactCheckIssue],
    graph_totals: GraphTotals,
) -> ReportCounts:
    """The report's ``counts``: each section's full size, before ``max_items`` cuts its list."""
    issue_counts = Counter(i["issue_type"] for i in issues)
    return {
        "objects": len(objects),
        "knowledge": len(knowledge),
        "knowledge_by_status": dict(sorted(Counter(o.status for o in knowledge).items())),
        "candidates": sum(1 for o in knowledge if o.status == "candidate"),
        "promotable_candidates": len(promotable),
        "low_evidence_candidates": len(low_evidence),
        "stale_candidates": len(stale),
        "duplicate_groups": len(groups),
        "soft_duplicate_candidates": len(pairs),
        "concept_candidates": concepts_total,
        "fact_check_issues": len(issues),
        "fact_check_issues_by_type": {
            t: issue_counts.get(t, 0) for t in ("similar_entity_name", "stale_fact", "relationship_mismatch")
        },
        "relations": len(relations),
        **graph_totals,
    }


def _next_actions(
    cycle_due: bool,
    pairs: list[tuple[float, list[str], MemoryObject, MemoryObject]],
    concepts: list[JsonObject],
    issues: list[FactCheckIssue],
) -> list[str]:
    """The follow-up tools worth running, in the order an agent should run them."""
    return [
        action
        for action, due in (
            ("run_memory_maintain_cycle_with_apply", cycle_due),
            ("review_soft_duplicates_then_resolve_duplicates", pairs),
            ("review_concept_candidates_then_memory_remember", concepts),
            ("review_fact_check_issues", issues),
        )
        if due
    ]


def _graph_totals(section: Mapping[str, object]) -> GraphTotals:
    """The knowledge graph section's totals, read by key from what graph/report.py builds."""
    entities, review, procedures = (
        section["entities_by_type"],
        section["predicate_review"],
        section["procedures"],
    )
    if not (isinstance(entities, dict) and isinstance(review, list) and isinstance(procedures, dict)):
        raise TypeError("the knowledge graph section lacks its entity, predicate or procedure totals")
    return {
        "entities": sum(entities.values()),
        "custom_predicates": len(review),
        "procedures": sum(procedures["by_status"].values()),
        "promoted_procedures": procedures["promoted"],
    }


def _item(obj: MemoryObject) -> JsonObject:
    view = compact(obj)
    view["evidence_count"] = evidence_count(obj)
    view["created_at"] = obj.created_at
    return view


def build_report(rt: Runtime, data: ReportInput, opts: ReportOptions) -> MaintenanceReport:
    # The cyclic garbage collector stays on: it is process-wide, and pausing it for a report
    # would pause it for every other thread of a server too.
    return _build(rt, data, opts)


def _build(rt: Runtime, data: ReportInput, opts: ReportOptions) -> MaintenanceReport:
    ref = reference(data.reference_time)
    cap = opts.max_items
    with rt.read_with_expired() as session:
        objects = load_objects(session)
        relations = session.list_relations(limit=ALL)
        config = session.get_config()
        knowledge = [o for o in objects if o.object_type == "knowledge"]
        sources = [o for o in objects if o.object_type == "source"]
        concepts, diagnostics, concepts_total = cross_source_concepts(
            session, sources, knowledge, max_sources=opts.concept_sources, limit=cap
        )
        graph_section = knowledge_graph_section(session, objects, cap)
    by_age = sorted(knowledge, key=lambda o: (o.created_at, o.id))
    promotable = [o for o in by_age if is_promotable(o, data.min_confidence, data.min_evidence, ref)]
    low_evidence = [o for o in by_age if is_low_evidence(o, data.min_evidence)]
    stale = [o for o in by_age if is_stale_candidate(o, ref, data.stale_after_days)]
    groups = duplicate_groups(knowledge)
    pairs, pairs_complete = soft_pairs(knowledge)
    issues = fact_check([o for o in objects if o.object_type == "node"], knowledge, ref)
    backends = effective(config)
    health = health_of(rt, objects, relations, config, cap)
    counts = _counts(
        objects,
        knowledge,
        relations,
        promotable=promotable,
        low_evidence=low_evidence,
        stale=stale,
        groups=groups,
        pairs=pairs,
        concepts_total=concepts_total,
        issues=issues,
        graph_totals=_graph_totals(graph_section),
    )
    totals = {name: counts[name] for name in REPORT_SECTIONS}
    truncated: dict[str, bool] = {name: total > cap for name, total in totals.items()}
    next_actions = _next_actions(bool(promotable or groups or stale), pairs, concepts, issues)
    return {
        "result_type": "maintenance_report",
        "mode": "report",
        "read_only": True,
        "reference_time": ref.isoformat(),
        "thresholds": {
            "min_confidence": data.min_confidence,
            "min_evidence": data.min_evidence,
            "stale_after_days": data.stale_after_days,
        },
        "promotable_candidates": [_item(o) for o in promotable[:cap]],
        "low_evidence_candidates": [_item(o) for o in low_evidence[:cap]],
        "stale_candidates": [_item(o) for o in stale[:cap]],
        "duplicate_groups": [group_view(g) for g in groups[:cap]],
        "soft_duplicate_candidates": [soft_entry(*p) for p in pairs[:cap]],
        "soft_duplicate_scan": {"complete": pairs_complete, "scorer": "remember.similarity.pair_score"},
        "concept_candidates": concepts,
        "candidate_diagnostics": diagnostics,
        "fact_check_issues": issues[:cap],
        "graph_health": health,
        "knowledge_graph": graph_section,
        "counts": counts,
        "truncated": truncated,
        "backends": backends,
        "next_actions": next_actions,
    }
