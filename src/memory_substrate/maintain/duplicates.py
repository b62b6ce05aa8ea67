"""Duplicates: deterministic structured groups (merged by ``merge_duplicates``) and advisory
soft-duplicate pairs (resolved one reviewed pair at a time by ``resolve_duplicates``).

*Deterministic* means the same rule governance enforces on write: live knowledge of the same
kind, subject, predicate and value/object with overlapping scopes. Such groups still appear
(a stale claim promoted back next to its re-written twin, imports), and merging them needs no
judgement: the canonical item is the one with the strongest status, then the highest
confidence, then the oldest; the rest are superseded by it and their evidence moves to it.

*Soft* pairs are scored by ``remember.similarity.pair_score`` (the scorer ``memory_remember``
uses for ``possible_duplicates``) so the report and the write path agree. A pair is current when
both items are live and unstructured, the score reaches the threshold with a title or summary
overlap, and no earlier ``resolve_duplicates`` recorded a review of that pair. Finding pairs
over a whole namespace does not compare every pair: a qualifying pair has title or summary
Jaccard >= 0.5, and set-similarity-join filters (prefix, length; see ``_candidates``) list every
pair that can reach that without missing one. Only those are scored (a probe budget bounds the
worst case, and the report says when it was hit).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from memory_substrate.analysis.stopwords import ENGLISH as STOPWORDS
from memory_substrate.indexing import claim_key, claim_value
from memory_substrate.json_types import JsonObject
from memory_substrate.maintain.common import STATUS_RANK, Workspace, evidence_count, merge_evidence
from memory_substrate.maintain.report_types import ReviewGuidance, SoftDuplicateEntry
from memory_substrate.maintain.results import DuplicateGroupView, MergedGroup, MergeStep
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject
from memory_substrate.remember.similarity import THRESHOLD, is_structured, pair_score
from memory_substrate.text import tokens

OVERLAP = 0.5  # the Jaccard level at which pair_score reports title_overlap / summary_overlap
SCAN_BUDGET = 4_000_000  # candidate probes per soft-duplicate scan (see soft_pairs)
REVIEW_KEY = "duplicate_review"  # metadata: {other_id: outcome} recorded by resolve_duplicates

SOFT_REVIEW_GUIDANCE: ReviewGuidance = {
    "required_checks": [
        "read_both_knowledge_items",
        "compare_scope_refs",
        "compare_evidence_refs",
        "decide_whether_meaning_is_same_distinct_or_conflicting",
    ],
    "outcomes": [
        {"action": action, "tool": "memory_maintain", "mode": "resolve_duplicates"}
        for action in ("supersede", "keep_both", "contest")
    ],
}
SOFT_NEXT_ACTIONS = [
    "review_duplicate_pair",
    "choose_supersede_keep_both_or_contest",
    "call_memory_maintain_resolve_duplicates_if_actionable",
]


def _merged_from(meta: JsonObject) -> list[object]:
    """The ids already merged into an item: only merges write ``merged_from``, always a list."""
    merged = meta.get("merged_from", [])
    return merged if isinstance(merged, list) else []


def canonical_order(obj: MemoryObject) -> tuple[int, float, int, str, str]:
    """Sort key: the best canonical first (status, confidence, evidence, then oldest)."""
    return (
        -STATUS_RANK.get(obj.status, 0),
        -(obj.confidence or 0.0),
        -evidence_count(obj),
        obj.created_at,
        obj.id,
    )


# --- deterministic structured duplicates ------------------------------------------------------
def _scope_linked(items: list[MemoryObject]) -> list[list[MemoryObject]]:
    """Partition by shared scopes: overlap is not transitive, so join through union-find."""
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, obj in enumerate(items):
        for scope in obj.scope_refs:
            if scope in owner:
                parent[find(i)] = find(owner[scope])
            else:
                owner[scope] = i
    parts: dict[int, list[MemoryObject]] = defaultdict(list)
    for i, obj in enumerate(items):
        parts[find(i)].append(obj)
    return list(parts.values())


def duplicate_groups(knowledge: Iterable[MemoryObject]) -> list[list[MemoryObject]]:
    """Groups of live structured claims that are exact duplicates; canonical first in each."""
    by_claim: dict[tuple[str, str], list[MemoryObject]] = defaultdict(list)
    for obj in knowledge:
        if obj.object_type != "knowledge" or obj.status not in LIVE_KNOWLEDGE_STATUSES:
            continue
        key = claim_key(obj)
        if key:
            by_claim[(key, claim_value(obj))].append(obj)
    groups: list[list[MemoryObject]] = []
    for items in by_claim.values():
        if len(items) < 2:
            continue
        groups.extend(sorted(p, key=canonical_order) for p in _scope_linked(items) if len(p) > 1)
    groups.sort(key=lambda g: (g[0].created_at, g[0].id))
    return groups


def group_view(group: list[MemoryObject]) -> DuplicateGroupView:
    head = group[0]
    return {
        "canonical_knowledge_id": head.id,
        "duplicate_knowledge_ids": [o.id for o in group[1:]],
        "object_ids": [o.id for o in group],
        "kind": head.kind,
        "claim": {
            "subject": head.payload.get("subject"),
            "predicate": head.payload.get("predicate"),
            "value": head.payload.get("value"),
            "object": head.payload.get("object"),
        },
        "scope_refs": sorted({s for o in group for s in o.scope_refs}),
        "statuses": {o.id: o.status for o in group},
    }


def merge_step(ws: Workspace) -> MergeStep:
    merged: list[MergedGroup] = []
    superseded_total = moved_total = 0
    for group in duplicate_groups(ws.items.values()):
        canonical, rest = group[0], group[1:]
        evidence = list(canonical.evidence_refs)
        moved = 0
        for other in rest:
            evidence, added = merge_evidence(evidence, other.evidence_refs)
            moved += added
        ids = [o.id for o in rest]
        meta = dict(canonical.metadata)
        meta["merged_from"] = list(dict.fromkeys([*_merged_from(meta), *ids]))
        ws.update(
            replace(canonical, evidence_refs=evidence, metadata=meta),
            action="merge_duplicates",
            changes={"merged_from": ids, "evidence_refs_added": moved},
        )
        for other in rest:
            ws.set_status(
                other,
                "superseded",
                f"merge_duplicates: exact structured duplicate of {canonical.id}",
                superseded_by=canonical.id,
            )
        superseded_total += len(rest)
        moved_total += moved
        merged.append({**group_view(group), "superseded_knowledge_ids": ids, "evidence_refs_moved": moved})
    return {
        "groups": merged,
        "counts": {"groups": len(merged), "superseded": superseded_total, "evidence_refs_moved": moved_total},
    }


# --- soft duplicates ---------------------------------------------------------------------------
def _terms(text: str) -> set[str]:
    # The same term set remember.similarity scores with (tokens minus stopwords).
    return {t for t in tokens(text) if t not in STOPWORDS}


def reviewed_with(obj: MemoryObject) -> Mapping[str, object]:
    """The ids ``obj`` was reviewed against (``metadata.duplicate_review``, ``{other_id: outcome}``)."""
    review = obj.metadata.get(REVIEW_KEY)
    return review if isinstance(review, dict) else {}


def _reviewed(a: MemoryObject, b: MemoryObject) -> bool:
    return b.id in reviewed_with(a) or a.id in reviewed_with(b)


def soft_eligible(obj: MemoryObject) -> bool:
    return obj.object_type == "knowledge" and obj.status in LIVE_KNOWLEDGE_STATUSES and not is_structured(obj)


def soft_match(a: MemoryObject, b: MemoryObject) -> tuple[bool, float, list[str]]:
    """Whether (a, b) is a current soft-duplicate pair, with its score and reasons."""
    score, reasons = pair_score(a, b)
    ok = (
        soft_eligible(a)
        and soft_eligible(b)
        and score >= THRESHOLD
        and ("title_overlap" in reasons or "summary_overlap" in reasons)
        and not _reviewed(a, b)
    )
    return ok, score, reasons


def _candidates(sets: list[set[str]], budget: list[int]) -> Iterator[tuple[int, set[int]]]:
    """For each set ``i``, the earlier-visited sets that may reach Jaccard >= OVERLAP with it.

    Prefix filter with PPJoin's shorter index prefix (Xiao et al., 2008): terms are ordered
    rarest first and sets visited smallest first. For ``|y| <= |x|`` and J >= t the overlap is
    at least ``t|x|`` and at least ``2t/(1+t) |y|``, so x's first ``|x| - ceil(t|x|) + 1`` terms
    (probed) meet y's first ``|y| - ceil(2t/(1+t) |y|) + 1`` terms (indexed). Length filter: an
    indexed set smaller than ``t|x|`` is too small for x and everything after it, and is dropped
    for good. ``budget[0]`` counts probes down; below zero the scan stops early.
    """
    freq: Counter[str] = Counter(t for s in sets for t in s)
    rank = {t: r for r, t in enumerate(sorted(freq, key=lambda t: (freq[t], t)))}
    sizes = [len(s) for s in sets]
    index_share = 2 * OVERLAP / (1 + OVERLAP)
    index: dict[str, list[int]] = defaultdict(list)
    start: dict[str, int] = defaultdict(int)
    for i in sorted(range(len(sets)), key=sizes.__getitem__):
        size = sizes[i]
        if not size:
            continue
        min_size = OVERLAP * size
        ordered = sorted(sets[i], key=rank.__getitem__)
        found: set[int] = set()
        for term in ordered[: size - math.ceil(OVERLAP * size - 1e-9) + 1]:
            postings = index.get(term)
            if not postings:
                continue
            k = start[term]
            while k < len(postings) and sizes[postings[k]] < min_size:
                k += 1
            start[term] = k
            found.update(postings[k:] if k else postings)
            budget[0] -= len(postings) - k
        for term in ordered[: size - math.ceil(index_share * size - 1e-9) + 1]:
            index[term].append(i)
        budget[0] -= 1
        yield i, found
        if budget[0] < 0:
            return


def soft_pairs(
    knowledge: Iterable[MemoryObject], *, budget: int = SCAN_BUDGET
) -> tuple[list[tuple[float, list[str], MemoryObject, MemoryObject]], bool]:
    """Every current soft-duplicate pair, best first; and whether the scan was complete.

    Candidates come from a title pass and a summary pass, each exact for Jaccard >= OVERLAP; a
    candidate is kept when that field really overlaps (an integer test on term bitsets) and the
    pair's best possible score reaches the threshold, and only then scored by the shared scorer.
    A pair whose titles overlap is checked in the title pass only. The scan is exact unless it
    exceeds ``budget`` probes (a namespace whose texts share almost every term); then the pairs
    found so far are returned.
    """
    items = sorted((o for o in knowledge if soft_eligible(o)), key=lambda o: (o.created_at, o.id))
    fields = {"title": [_terms(o.title) for o in items], "summary": [_terms(o.summary) for o in items]}
    masks: dict[str, list[int]] = {}
    for name, sets in fields.items():
        # Bits only for terms two or more items share (a unique term never intersects), the
        # commonest in the lowest bits: masks stay short and ``&`` stays cheap.
        freq = Counter(t for s in sets for t in s)
        bit = {t: n for n, (t, c) in enumerate(freq.most_common()) if c > 1}
        masks[name] = [sum(1 << bit[t] for t in s if t in bit) for s in sets]
    sizes = {name: [len(t) for t in sets] for name, sets in fields.items()}
    share = OVERLAP / (1 + OVERLAP)  # J >= t  <=>  |x & y| >= t / (1 + t) * (|x| + |y|)

    def jaccard(name: str, i: int, j: int) -> float:
        inter = (masks[name][i] & masks[name][j]).bit_count()
        return inter / (sizes[name][i] + sizes[name][j] - inter) if inter else 0.0

    out = []
    left = [budget]
    for name, other in (("title", "summary"), ("summary", "title")):
        mask, size = masks[name], sizes[name]
        for i, found in _candidates(fields[name], left):
            mi, si = mask[i], size[i]
            for j in [j for j in found if (mi & mask[j]).bit_count() >= share * (si + size[j]) - 1e-9]:
                j_other = jaccard(other, i, j)
                if name == "summary" and j_other >= OVERLAP:
                    continue  # checked in the title pass
                jt, js = (jaccard(name, i, j), j_other) if name == "title" else (j_other, jaccard(name, i, j))
                # pair_score adds at most 0.1 of kind/scope bonus to 0.6*title + 0.4*summary.
                if 0.6 * jt + 0.4 * js + 0.1 < THRESHOLD - 0.001:
                    continue
                a, b = (items[i], items[j]) if i < j else (items[j], items[i])
                ok, score, reasons = soft_match(a, b)
                if ok:
                    out.append((score, reasons, a, b))
        if left[0] < 0:
            break
    out.sort(key=lambda t: (-t[0], t[2].id, t[3].id))
    return out, left[0] >= 0


def soft_entry(score: float, reasons: list[str], a: MemoryObject, b: MemoryObject) -> SoftDuplicateEntry:
    """One pair in the documented report shape, with a ready-to-review supersede suggestion."""
    ids = [a.id, b.id]
    # Prefer the stronger status, then more evidence, then the newer item.
    canonical_id = max(
        (a, b), key=lambda o: (STATUS_RANK.get(o.status, 0), evidence_count(o), o.created_at, o.id)
    ).id
    return {
        "object_ids": ids,
        "score": score,
        "reasons": reasons,
        "items": [
            {"id": o.id, "title": o.title, "kind": o.kind, "status": o.status, "scope_refs": o.scope_refs}
            for o in (a, b)
        ],
        "review_guidance": SOFT_REVIEW_GUIDANCE,
        "suggested_resolution": {
            "tool": "memory_maintain",
            "mode": "resolve_duplicates",
            "input_data": {
                "outcome": "supersede",
                "knowledge_ids": ids,
                "canonical_knowledge_id": canonical_id,
                "reason": "Reviewed soft duplicate candidate and selected the canonical memory.",
            },
            "options": {"apply": True},
        },
        "next_actions": SOFT_NEXT_ACTIONS,
    }
