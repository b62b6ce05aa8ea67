"""Concept candidates across sources, for ``report``: advisory, never written.

Each active source is mined with the same rules ingest uses (``ingest.suggestions``), in full
detail; candidates with the same title in several sources are merged (occurrences and evidence
add up, and a ``cross_source`` bonus is given). The ``suggested_memory.input_data`` skeleton is
ready for ``memory_remember knowledge`` once reviewed: its ``scope_refs`` are inferred from the
scopes of live knowledge that already cites those sources (``scope:project`` when none does),
and its summary is a placeholder the agent must rewrite from the evidence. Titles that already
name live knowledge are skipped as ``already_in_memory``.

Work is bounded: the ``max_sources`` most recently updated active sources, and at most
``SEGMENTS_PER_SOURCE`` segments of each.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from memory_substrate.ingest.suggestions import concept_candidates
from memory_substrate.json_types import JsonObject
from memory_substrate.maintain.fact_check import name_key
from memory_substrate.maintain.report_types import ConceptDiagnostics
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject
from memory_substrate.storage.base import StoreSession

SEGMENTS_PER_SOURCE = 1000
PER_SOURCE = 50
EVIDENCE_REFS = 5
CROSS_SOURCE_BONUS = 0.05


def _scopes_by_source(knowledge: list[MemoryObject]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for obj in knowledge:
        if obj.status not in LIVE_KNOWLEDGE_STATUSES:
            continue
        for source_id in {e.get("source_id") for e in obj.evidence_refs}:
            out.setdefault(str(source_id), Counter()).update(obj.scope_refs)
    return out


def _merge(parts: list[dict[str, Any]], scopes: dict[str, Counter[str]]) -> dict[str, Any]:
    """One candidate from the same-titled candidates of several sources, best first. Candidates
    keep ingest.suggestions' shape, which that module owns and types: they are read as it gives them."""
    parts.sort(key=lambda c: -c["score"])
    best = parts[0]
    sources = list(dict.fromkeys(c["evidence_refs"][0]["source_id"] for c in parts if c["evidence_refs"]))
    occurrences = sum(c["occurrences"] for c in parts)
    evidence: list[dict[str, Any]] = []
    for i in range(EVIDENCE_REFS):  # interleave, so every source contributes early refs
        evidence.extend(c["evidence_refs"][i] for c in parts if i < len(c["evidence_refs"]))
    evidence = evidence[:EVIDENCE_REFS]
    bonuses = list(dict.fromkeys(b for c in parts for b in c["ranking_signals"]["bonuses"]))
    penalties = list(dict.fromkeys(p for c in parts for p in c["ranking_signals"]["penalties"]))
    extra = CROSS_SOURCE_BONUS * (len(sources) - 1)
    if extra:
        bonuses.append("cross_source")
    score = round(min(1.0, best["score"] + extra), 3)
    scope_counts: Counter[str] = Counter()
    for source_id in sources:
        scope_counts.update(scopes.get(source_id, Counter()))
    scope_refs = [s for s, _ in scope_counts.most_common(3)] or ["scope:project"]
    title = best["title"]
    where = sources[0] if len(sources) == 1 else f"{len(sources)} sources"
    return {
        **best,
        "detail": "full",
        "score": score,
        "occurrences": occurrences,
        "ranking_signals": {
            "bonuses": bonuses,
            "penalties": penalties,
            "score_adjustment": round(best["ranking_signals"]["score_adjustment"] + extra, 3),
        },
        "evidence_refs": evidence,
        "evidence_ref_count": sum(c["evidence_ref_count"] for c in parts),
        "object_ref_count": sum(c["object_ref_count"] for c in parts),
        "object_refs": sources,
        "source_count": len(sources),
        "scope_inference": {
            "scope_refs": scope_refs,
            "from": "knowledge_citing_sources" if scope_counts else "default",
        },
        "suggested_memory": {
            "tool": "memory_remember",
            "mode": "knowledge",
            "input_data": {
                "kind": "concept",
                "title": title,
                "summary": f"TODO: rewrite from evidence — {title} appears {occurrences} times in {where}.",
                "reason": f"Repeated concept '{title}' in captured evidence; review before keeping.",
                "memory_source": "agent_inferred",
                "scope_refs": scope_refs,
                "evidence_refs": evidence,
                "status": "candidate",
                "confidence": round(score * 0.8, 2),
            },
        },
    }


def cross_source_concepts(
    session: StoreSession,
    sources: list[MemoryObject],
    knowledge: list[MemoryObject],
    *,
    max_sources: int,
    limit: int,
) -> tuple[list[JsonObject], ConceptDiagnostics, int]:
    """(candidates best first, candidate diagnostics, total eligible before ``limit``)."""
    active = sorted(
        (s for s in sources if s.status == "active"), key=lambda s: (s.updated_at, s.id), reverse=True
    )
    active = active[:max_sources]
    existing = {name_key(k.title): k.id for k in knowledge if k.status in LIVE_KNOWLEDGE_STATUSES}
    by_title: dict[str, list[dict[str, Any]]] = {}
    skipped: dict[tuple[str, str], dict[str, Any]] = {}
    skipped_total = 0
    for source in active:
        segments = session.get_segments(source.id, limit=SEGMENTS_PER_SOURCE)
        found, diagnostics = concept_candidates(source.id, segments, full=True, limit=PER_SOURCE)
        skipped_total += diagnostics["counts"]["skipped"]
        for item in diagnostics["skipped"]:
            key = (item["title"].lower(), item["reason"])
            if key in skipped:
                skipped[key]["occurrences"] += item["occurrences"]
            else:
                skipped[key] = dict(item)
        for cand in found:
            by_title.setdefault(cand["title"].lower(), []).append(cand)
    scopes = _scopes_by_source(knowledge)
    merged = []
    already = 0
    for parts in by_title.values():
        cand = _merge(parts, scopes)
        known = existing.get(name_key(cand["title"]))
        if known:
            already += 1
            skipped[(cand["title"].lower(), "already_in_memory")] = {
                "title": cand["title"],
                "reason": "already_in_memory",
                "occurrences": cand["occurrences"],
                "existing_knowledge_id": known,
            }
            continue
        merged.append(cand)
    merged.sort(key=lambda c: (-c["score"], -c["occurrences"], c["title"].lower()))
    summary: ConceptDiagnostics = {
        "skipped": sorted(skipped.values(), key=lambda s: (-s["occurrences"], s["title"].lower()))[:20],
        "counts": {
            "skipped": skipped_total + already,
            "eligible": len(merged),
            "returned": min(limit, len(merged)),
            "already_in_memory": already,
            "sources_scanned": len(active),
        },
    }
    return merged[:limit], summary, len(merged)
