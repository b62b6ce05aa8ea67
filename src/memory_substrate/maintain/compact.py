"""Compact detail for the read-only maintenance views (``report``, ``audit``).

The default response of every tool stays within the response budget (see
``answers/shaping.py``): nulls are dropped, and report sections are cut from their ends until the
whole fits, each marked in ``truncated`` while ``counts`` keeps the totals. ``detail: "full"``
returns every section as computed.
"""

from __future__ import annotations

from typing import Any

from memory_substrate.answers.shaping import fit_sections, shape

REPORT_SECTIONS = (
    "promotable_candidates",
    "low_evidence_candidates",
    "stale_candidates",
    "duplicate_groups",
    "soft_duplicate_candidates",
    "concept_candidates",
    "fact_check_issues",
)


NESTED_ITEMS = 2  # entries kept in nested lists that carry their own count (graph health, diagnostics)


def _cut_nested(result: dict[str, Any]) -> None:
    """Nested lists that carry their own count shrink to that count (``detail: "full"`` lists them)."""
    diagnostics = result.get("candidate_diagnostics") or {}
    if isinstance(diagnostics.get("skipped"), list) and len(diagnostics["skipped"]) > NESTED_ITEMS:
        diagnostics["skipped"] = diagnostics["skipped"][:NESTED_ITEMS]  # counts.skipped has the total
    health = result.get("graph_health") or {}
    health.pop("thresholds", None)  # constants of the analysis
    for key, value in list(health.items()):
        if isinstance(value, dict) and isinstance(value.get("items"), list) and "count" in value:
            health[key] = {"count": value["count"]}
    graph = result.get("knowledge_graph")
    if isinstance(graph, dict):  # lists cut to their heads (counts has the totals); empty parts left out
        for key in ("predicate_review", "extraction_failures"):
            if isinstance(graph.get(key), list):
                graph[key] = graph[key][:NESTED_ITEMS]
        procedures = graph.get("procedures") or {}
        if isinstance(procedures.get("closest_to_promotion"), list):
            procedures["closest_to_promotion"] = procedures["closest_to_promotion"][:NESTED_ITEMS]
        for part in (graph, procedures):
            for key in [k for k, v in part.items() if v in ({}, [], 0)]:
                del part[key]
        queue = graph.get("extraction_queue") or {}
        for key in [k for k, v in queue.items() if v == 0]:
            del queue[key]
    if isinstance(result.get("truncated"), dict):  # only the sections that were cut
        result["truncated"] = {k: v for k, v in result["truncated"].items() if v}


OBJECT_SECTIONS = ("promotable_candidates", "low_evidence_candidates", "stale_candidates")
OBJECT_KEYS = ("id", "kind", "status", "title", "confidence", "evidence_count")


def _drop_guidance(result: dict[str, Any], section: str, keys: tuple[str, ...]) -> list[str]:
    """Remove fixed how-to-review text from each entry; ``detail: "full"`` has it."""
    dropped = set()
    for e in result.get(section) or []:
        if isinstance(e, dict):
            dropped |= {k for k in keys if e.pop(k, None) is not None}
    return sorted(f"{section}.{k}" for k in dropped)


def shape_maintenance(mode: str, result: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
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
    for entry in result.get("concept_candidates") or []:  # the skeleton's refs are the candidate's: once
        skeleton = (
            ((entry.get("suggested_memory") or {}).get("input_data") or {}) if isinstance(entry, dict) else {}
        )
        if skeleton.get("evidence_refs") == entry.get("evidence_refs"):
            entry.pop("evidence_refs")
    result.pop("thresholds", None)  # the caller's own inputs (or their defaults)
    if omitted:
        result["with_detail_full"] = omitted
    for key in OBJECT_SECTIONS:  # candidates named, not described: page them for the rest
        result[key] = [{k: v for k, v in i.items() if k in OBJECT_KEYS} for i in result.get(key) or []]
    return fit_sections(result, REPORT_SECTIONS)
