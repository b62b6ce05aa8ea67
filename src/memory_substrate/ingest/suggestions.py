"""Advisory memory_suggestions derived from one capture. Never written as memory."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from itertools import islice
from typing import Any

from memory_substrate.analysis.stopwords import ENGLISH as STOPWORDS
from memory_substrate.ingest.results import (
    CandidateBrief,
    CandidateDiagnostics,
    CandidateSuggestion,
    CompactSuggestions,
    ConceptCandidate,
    EvidenceRef,
    IngestResult,
    MemorySuggestions,
    SkippedTerm,
)
from memory_substrate.json_types import JsonObject
from memory_substrate.models import Segment

# Headings that describe the document rather than a durable concept.
DOCUMENT_ARTIFACTS = {
    "introduction",
    "overview",
    "summary",
    "contents",
    "table of contents",
    "readme",
    "changelog",
    "license",
    "notes",
    "todo",
    "current todo",
    "references",
    "appendix",
    "faq",
    "usage",
    "installation",
    "examples",
    "example",
    "getting started",
    "background",
    "conclusion",
    "next steps",
}
GENERIC_TERMS = {
    "data",
    "system",
    "thing",
    "things",
    "stuff",
    "information",
    "item",
    "items",
    "value",
    "code",
}
ACTION_PREFIXES = ("how to ", "run ", "use ", "add ", "fix ", "update ", "remove ", "create ", "install ")
_TERM_RE = re.compile(
    r"\b(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+"  # CamelCase
    r"|[a-z0-9]+(?:_[a-z0-9]+)+"  # snake_case
    r"|[A-Z][a-z]+(?:\s+[A-Z][a-z]+){1,3})\b"  # Capitalised Multi Word
)
_MARKER_RE = re.compile(r"^(?:[#>*\-\d.\s]+|\[.\]|v?\d+(?:\.\d+)*)$")

REVIEW_GUIDANCE: JsonObject = {
    "required_checks": [
        "read_evidence_refs",
        "query_existing_memory_for_title_and_synonyms",
        "choose_scope_refs_before_write",
        "rewrite_summary_from_evidence",
    ],
    "outcome_actions": [
        "remember_as_concept",
        "remember_as_procedure",
        "remember_as_decision",
        "merge_with_existing",
        "skip_candidate",
    ],
}


def _skip_reason(title: str) -> str | None:
    low = title.lower().strip()
    if _MARKER_RE.match(title.strip()):
        return "format_marker"
    if low in DOCUMENT_ARTIFACTS:
        return "document_artifact"
    if low.startswith(ACTION_PREFIXES):
        return "action_phrase"
    if low.startswith(("ctrl+", "cmd+", "alt+")) or re.match(r"^[a-z]\+[a-z]$", low):
        return "shortcut_marker"
    if low in GENERIC_TERMS:
        return "generic_term"
    if len(title) > 80 or len(title.split()) > 8:
        return "too_long"
    words = [w for w in re.findall(r"\w+", low) if w not in STOPWORDS]
    if not words or (len(words) == 1 and len(words[0]) < 4):
        return "weak_term"
    return None


def concept_candidates(
    source_id: str, segments: list[Segment], *, full: bool = False, limit: int = 10
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Repeated headings and technical terms of one source, scored; plus skip diagnostics.

    As the maintain report merges them across sources (``maintain/concepts.py``), which takes
    them as plain dicts: each is a shallow copy of its typed form (``source_candidates``)."""
    found, diagnostics = source_candidates(source_id, segments, full=full, limit=limit)
    return [dict(c) for c in found], dict(diagnostics)


def source_candidates(
    source_id: str, segments: list[Segment], *, full: bool = False, limit: int = 10
) -> tuple[list[ConceptCandidate], CandidateDiagnostics]:
    """Repeated headings and technical terms of one source, scored; plus skip diagnostics."""
    occurrences, refs, display, headings = _terms(segments)
    skipped: list[SkippedTerm] = []
    eligible = []
    for key, count in occurrences.most_common():
        title = display[key]
        reason = _skip_reason(title)
        if reason:
            skipped.append({"title": title, "reason": reason, "occurrences": count})
            continue
        if count < 2 and key not in headings:
            skipped.append({"title": title, "reason": "weak_term", "occurrences": count})
            continue
        bonuses, penalties = [], []
        adjustment = 0.0
        if key in headings:
            bonuses.append("heading")
            adjustment += 0.05
        if count >= 2:
            bonuses.append("durable_memory_candidate")
            adjustment += 0.08
        if len(refs[key]) == 1 and count > 1:
            penalties.append("single_segment")
            adjustment -= 0.05
        score = round(min(1.0, 0.5 + 0.05 * min(count, 6) + adjustment), 3)
        eligible.append((score, key, title, count, bonuses, penalties, adjustment))
    eligible.sort(key=lambda t: (-t[0], t[1]))
    out: list[ConceptCandidate] = []
    for score, key, title, count, bonuses, penalties, adjustment in eligible[:limit]:
        ev: list[EvidenceRef] = [{"source_id": source_id, "segment_id": s} for s in islice(refs[key], 5)]
        candidate: ConceptCandidate = {
            "kind": "concept_candidate",
            "detail": "full" if full else "compact",
            "candidate_type": "concept",
            "title": title,
            "score": score,
            "occurrences": count,
            "ranking_signals": {
                "bonuses": bonuses,
                "penalties": penalties,
                "score_adjustment": round(adjustment, 3),
            },
            "evidence_refs": ev,
            "evidence_ref_count": len(refs[key]),
            "object_ref_count": count,
            **_suggestion(source_id, title, count, score, ev, full),
            "next_actions": [
                "review_and_remember",
                "attach_evidence_refs",
                "skip_if_project_specific_noise",
            ],
        }
        out.append(candidate)
    diagnostics: CandidateDiagnostics = {
        "skipped": skipped[:20],
        "counts": {"skipped": len(skipped), "eligible": len(eligible), "returned": len(out)},
    }
    return out, diagnostics


def _terms(
    segments: list[Segment],
) -> tuple[Counter[str], dict[str, dict[str, None]], dict[str, str], set[str]]:
    """Each term's (lowercased) occurrences, the segments holding it, its first spelling, and
    which terms are headings."""
    occurrences: Counter[str] = Counter()
    # Segment ids per term, in first-seen order: a dict is an ordered set (membership in O(1); a
    # list made a term shared by n segments cost n^2).
    refs: dict[str, dict[str, None]] = defaultdict(dict)
    display: dict[str, str] = {}
    headings: set[str] = set()
    for seg in segments:
        found: list[str] = []
        path = seg.locator.get("heading_path") or []
        if path:
            found.append(str(path[-1]))
            headings.add(str(path[-1]).lower())
        found.extend(m.group(0) for m in _TERM_RE.finditer(seg.text))
        for term in found:
            key = term.lower().strip()
            occurrences[key] += 1
            display.setdefault(key, term.strip())
            refs[key].setdefault(seg.id)
    return occurrences, refs, display, headings


def _suggestion(
    source_id: str, title: str, count: int, score: float, ev: list[EvidenceRef], full: bool
) -> CandidateSuggestion:
    """The candidate's suggested memory and review guidance: the whole remember call when full,
    a pointer to the maintain report when compact."""
    if full:
        return {
            "suggested_memory": {
                "mode": "knowledge",
                "input_data": {
                    "kind": "concept",
                    "title": title,
                    "summary": f"TODO: rewrite from evidence — {title} appears {count} times in {source_id}.",
                    "reason": f"Repeated concept '{title}' in captured evidence; review before keeping.",
                    "memory_source": "agent_inferred",
                    "scope_refs": ["scope:project"],
                    "evidence_refs": ev,
                    "status": "candidate",
                    "confidence": round(score * 0.8, 2),
                },
            },
            "review_guidance": {**REVIEW_GUIDANCE, "outcomes": REVIEW_GUIDANCE["outcome_actions"]},
            "object_refs": [source_id],
        }
    return {
        "suggested_memory": {
            "mode": "knowledge",
            "kind": "concept",
            "status": "candidate",
            "input_data_available_from": "memory_maintain report",
        },
        "review_guidance": REVIEW_GUIDANCE,
        "omitted_fields": ["object_refs", "suggested_memory.input_data", "review_guidance.outcomes"],
    }


def memory_suggestions(source_id: str, segments: list[Segment]) -> MemorySuggestions:
    candidates, diagnostics = source_candidates(source_id, segments)
    return {
        "concept_candidates": candidates,
        "agent_extraction": {
            "protocol": "agent_extraction.v1",
            "source_id": source_id,
            "resource": "memory://agent-playbook",
            "summary": "Evidence is captured. Read it, check existing memory, then write reviewed items with memory_remember.",
            "required_steps": [
                "inspect_source",
                "query_existing_memory",
                "prepare_durable_candidates",
                "commit_reviewed_memory",
            ],
            "remember_write_contract": {
                "required_fields": ["kind", "title", "summary", "reason", "memory_source", "scope_refs"],
                "recommended_fields": ["subject_refs", "evidence_refs", "payload", "confidence", "status"],
            },
        },
        "candidate_diagnostics": diagnostics,
        "counts": {
            "concept_candidates": len(candidates),
            "concept_candidates_available": diagnostics["counts"]["eligible"],
        },
        "next_actions": [
            "review_concept_candidates",
            "run_memory_maintain_report_for_cross_source_candidates",
            "call_memory_remember_if_durable",
        ],
    }


def summarise(result: IngestResult, max_items: int) -> IngestResult:
    """An ingest answer as counts and the first ``max_items`` of each list (``detail: compact``).

    The capture itself is not summarised (every segment is stored); only what the answer repeats
    is: each list cut keeps its first entries and its total in ``counts`` (``skipped_count`` for
    skipped files); concept candidates keep
    their title, score, occurrences and segment ids (their source is the answer's
    ``source_id``), and the guidance every candidate shared is stated once. ``memory_maintain
    report`` lists every candidate with a write skeleton; ``detail: "full"`` keeps the whole
    per-candidate shape and every list whole.
    """
    counts: dict[str, int] = {}
    # skipped_count already states the total of skipped files
    if "warnings" in result and len(result["warnings"]) > max_items:
        counts["warnings"] = len(result["warnings"])
        result["warnings"] = result["warnings"][:max_items]
    if "withheld" in result and len(result["withheld"]) > max_items:
        counts["withheld"] = len(result["withheld"])
        result["withheld"] = result["withheld"][:max_items]
    if "skipped" in result and len(result["skipped"]) > max_items:
        result["skipped"] = result["skipped"][:max_items]
    if counts:
        result["counts"] = counts
    full = result.get("memory_suggestions")
    if full is None or "candidate_diagnostics" not in full:
        return result
    result["memory_suggestions"] = _compact(full, max_items)
    return result


def _compact(full: MemorySuggestions, max_items: int) -> CompactSuggestions:
    """The suggestions of ``summarise``: each candidate briefly, the shared guidance once."""
    candidates = full.get("concept_candidates") or []
    extraction = full.get("agent_extraction") or {}
    briefs: list[CandidateBrief] = [
        {
            "title": c["title"],
            "score": c["score"],
            "occurrences": c["occurrences"],
            "segment_ids": [e["segment_id"] for e in c.get("evidence_refs", [])],
        }
        for c in candidates[:max_items]
    ]
    return {
        "concept_candidates": briefs,
        "suggested_memory": {
            "tool": "memory_remember",
            "mode": "knowledge",
            "kind": "concept",
            "status": "candidate",
            "evidence_refs": "source_id + each segment_id",
        },
        "review_guidance": REVIEW_GUIDANCE,
        "agent_extraction": {
            k: extraction[k] for k in ("protocol", "source_id", "resource") if k in extraction
        },
        "counts": {**full["counts"], "concept_candidates": min(len(candidates), max_items)},
        "more": {
            "tool": "memory_maintain",
            "mode": "report",
            "why": "every candidate across sources, each with a write skeleton to review",
        },
    }
