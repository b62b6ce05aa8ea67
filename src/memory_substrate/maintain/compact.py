"""Compact detail for the read-only maintenance views (``report``, ``audit``).

The default response of every tool stays within the response budget (see
``answers/shaping.py``): nulls are dropped, and report sections are cut from their ends until the
whole fits, each marked in ``truncated`` while ``counts`` keeps the totals. ``detail: "full"``
returns every section as computed.
"""

from __future__ import annotations

from typing import Literal, get_args

from memory_substrate.answers.shaping import fit_sections, shape
from memory_substrate.json_types import JsonObject

ReportSection = Literal[
    "promotable_candidates",
    "low_evidence_candidates",
    "stale_candidates",
    "duplicate_groups",
    "soft_duplicate_candidates",
    "concept_candidates",
    "fact_check_issues",
]
REPORT_SECTIONS: tuple[ReportSection, ...] = get_args(ReportSection)


NESTED_ITEMS = 2  # entries kept in nested lists that carry their own count (graph health, diagnostics)


def _object(value: object) -> JsonObject:
    """A nested object of the finished result, or an empty one where it has none."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    """A nested list of the finished result, or an empty one where it has none."""
    return value if isinstance(value, list) else []


def _cut_nested(result: JsonObject) -> None:
    """Nested lists that carry their own count shrink to that count (``detail: "full"`` lists them)."""
    diagnostics = _object(result.get("candidate_diagnostics"))
    skipped = diagnostics.get("skipped")
    if isinstance(skipped, list) and len(skipped) > NESTED_ITEMS:
        diagnostics["skipped"] = skipped[:NESTED_ITEMS]  # counts.skipped has the total
    health = _object(result.get("graph_health"))
    health.pop("thresholds", None)  # constants of the analysis
    for key, value in list(health.items()):
        if isinstance(value, dict) and isinstance(value.get("items"), list) and "count" in value:
            health[key] = {"count": value["count"]}
    graph = result.get("knowledge_graph")
    if isinstance(graph, dict):  # lists cut to their heads (counts has the totals); empty parts left out
        for key in ("predicate_review", "extraction_failures"):
            if isinstance(graph.get(key), list):
                graph[key] = graph[key][:NESTED_ITEMS]
        procedures = _object(graph.get("procedures"))
        closest = procedures.get("closest_to_promotion")
        if isinstance(closest, list):
            procedures["closest_to_promotion"] = closest[:NESTED_ITEMS]
        for part in (graph, procedures):
            for key in [k for k, v in part.items() if v in ({}, [], 0)]:
                del part[key]
        queue = _object(graph.get("extraction_queue"))
        for key in [k for k, v in queue.items() if v == 0]:
            del queue[key]
    truncated = result.get("truncated")
    if isinstance(truncated, dict):  # only the sections that were cut
        result["truncated"] = {k: v for k, v in truncated.items() if v}


OBJECT_SECTIONS = ("promotable_candidates", "low_evidence_candidates", "stale_candidates")
OBJECT_KEYS = ("id", "kind", "status", "title", "confidence", "evidence_count")


def _entries(result: JsonObject, section: str) -> list[JsonObject]:
    """A section's entries: every entry of a report section is an object."""
    return [e for e in _list(result.get(section)) if isinstance(e, dict)]


def _drop_guidance(result: JsonObject, section: str, keys: tuple[str, ...]) -> list[str]:
    """Remove fixed how-to-review text from each entry; ``detail: "full"`` has it."""
    dropped = set()
    for e in _entries(result, section):
        dropped |= {k for k in keys if e.pop(k, None) is not None}
    return sorted(f"{section}.{k}" for k in dropped)


def shape_maintenance(mode: str, result: JsonObject, options: JsonObject) -> JsonObject:
    if mode not in ("report", "audit") or options.get("detail", "compact") == "full":
        return result
    result = shape(result, "compact")
    if mode == "audit":
        return result
    _cut_nested(result)
    omitted = _drop_guidance(result, "soft_duplicate_candidates", ("review_guidance", "next_actions"))
    omitted += _drop_guidance(
        result,
        "concept_candidates",
        ("review_guidance", "next_actions", "ranking_signals", "kind", "detail", "candidate_type"),
    )
    for entry in _entries(result, "concept_candidates"):  # the skeleton's refs are the candidate's: once
        skeleton = _object(_object(entry.get("suggested_memory")).get("input_data"))
        if skeleton.get("evidence_refs") == entry.get("evidence_refs"):
            entry.pop("evidence_refs")
    result.pop("thresholds", None)  # the caller's own inputs (or their defaults)
    if omitted:
        result["with_detail_full"] = omitted
    for key in OBJECT_SECTIONS:  # candidates named, not described: page them for the rest
        result[key] = [{k: v for k, v in i.items() if k in OBJECT_KEYS} for i in _entries(result, key)]
    return fit_sections(result, REPORT_SECTIONS)
