"""The knowledge-graph section of ``memory_maintain report``: what the graph holds, the custom
predicates waiting for promotion review, procedures on their way to promotion, the queue by
state and the jobs whose last run failed."""

from __future__ import annotations

from collections import Counter

from memory_substrate.graph import jobs
from memory_substrate.graph.procedures import promotion_gap
from memory_substrate.graph.stored import count, listed
from memory_substrate.json_types import JsonObject
from memory_substrate.lookup_keys import CUSTOM_PREDICATE_PREFIX, keys_for
from memory_substrate.models import MemoryObject
from memory_substrate.storage.base import StoreSession


def knowledge_graph_section(session: StoreSession, objects: list[MemoryObject], cap: int) -> JsonObject:
    """The section as the report's JSON document holds it (maintain/report.py reads it by key)."""
    entities = [o for o in objects if o.object_type == "entity"]
    facts = [o for o in objects if o.object_type == "knowledge" and o.kind == "fact"]
    procs = [
        o
        for o in objects
        if o.object_type == "knowledge" and o.kind == "procedure" and o.payload.get("procedure_kind")
    ]
    custom = _custom_predicate_occurrences([o for o in objects if o.object_type == "knowledge"])[:cap]
    near = sorted(
        (p for p in procs if p.status == "candidate"),
        key=lambda p: (-(len(set(listed(p.payload.get("source_episodes"))))), -(p.confidence or 0.0), p.id),
    )
    return {
        "entities_by_type": dict(sorted(Counter(e.kind for e in entities if e.status == "active").items())),
        "merged_entities": sum(1 for e in entities if e.status == "merged"),
        "facts_by_status": dict(sorted(Counter(f.status for f in facts).items())),
        "facts_by_evidence_status": dict(
            sorted(Counter(str(f.metadata.get("evidence_status")) for f in facts).items())
        ),
        "predicate_review": [
            {
                "predicate": predicate,
                "occurrences": n,
                "suggested_action": "promote_to_canonical_or_map_to_existing",
            }
            for predicate, n in custom
        ],
        "procedures": {
            "by_status": dict(sorted(Counter(p.status for p in procs).items())),
            "by_kind": dict(sorted(Counter(str(p.payload.get("procedure_kind")) for p in procs).items())),
            "promoted": sum(1 for p in procs if p.status == "active"),
            "closest_to_promotion": [
                {
                    "id": p.id,
                    "title": p.title,
                    "observations": p.payload.get("observation_count"),
                    **promotion_gap(p),
                }
                for p in near[:cap]
            ],
        },
        "extraction_queue": jobs.queue_status(session),
        # A job that failed is never counted as pending: retrying and parked jobs are listed
        # with their last error and attempts (the whole error is in the job's trace).
        "extraction_failures": [
            {**j, "last_error": (j["last_error"] or "")[:300]} for j in jobs.troubled(session, cap)
        ],
    }


def _custom_predicate_occurrences(knowledge: list[MemoryObject]) -> list[tuple[str, int]]:
    """Each non-canonical predicate and how often it was stated, most stated first. A fact stated
    again (another episode, more evidence) is one fact observed once more (``observations``, kept
    by extraction's reinforce), so the occurrences are the facts' observations, not their number."""
    counts: Counter[str] = Counter()
    for obj in knowledge:
        for key in keys_for(obj):
            if key.startswith(CUSTOM_PREDICATE_PREFIX):
                counts[key.removeprefix(CUSTOM_PREDICATE_PREFIX)] += max(
                    1, count(obj.metadata.get("observations"), 1)
                )
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
