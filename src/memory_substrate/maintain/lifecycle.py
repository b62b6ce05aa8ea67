"""Lifecycle rules: which knowledge is promotable, low on evidence, stale or expired; and the
steps that act on them (promote_candidates, decay_stale, archive_source).

Decay, chosen and kept deliberately small:

* **expired**: live knowledge (candidate, active, contested) whose ``valid_until`` is at or
  before ``reference_time``. Its validity window is over, which is a statement about the world,
  so it gets the terminal ``expired`` status rather than ``stale``.
* **stale**: a *candidate* whose ``updated_at`` is more than ``stale_after_days`` before
  ``reference_time``. Nobody reviewed it in that time; ``stale`` keeps it addressable and
  promotable later (``memory_remember promote`` accepts stale knowledge). Active knowledge does
  not go stale by age: it was reviewed, and only its validity window ends it.

Every comparison is against ``reference_time`` (default: now), so tests pin time by passing it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from memory_substrate.maintain.common import Workspace, evidence_count, when
from memory_substrate.maintain.results import DecayStep, PromoteStep
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject


# --- predicates ------------------------------------------------------------------------------
def is_expired(obj: MemoryObject, ref: datetime) -> bool:
    until = when(obj.valid_until)
    return obj.status in LIVE_KNOWLEDGE_STATUSES and until is not None and until <= ref


def is_promotable(obj: MemoryObject, min_confidence: float, min_evidence: int, ref: datetime) -> bool:
    if obj.kind == "procedure":
        # Procedures earn promotion by observation (graph/procedures.py) or a manual promote with the
        # same evidence, never by a sweep.
        return False
    return (
        obj.status == "candidate"
        and (obj.confidence or 0.0) >= min_confidence
        and evidence_count(obj) >= min_evidence
        and not is_expired(obj, ref)
    )


def is_low_evidence(obj: MemoryObject, min_evidence: int) -> bool:
    return obj.status == "candidate" and evidence_count(obj) < min_evidence


def is_stale_candidate(obj: MemoryObject, ref: datetime, stale_after_days: int) -> bool:
    updated = when(obj.updated_at)
    return (
        obj.status == "candidate"
        and updated is not None
        and updated < ref - timedelta(days=stale_after_days)
        and not is_expired(obj, ref)
    )


def _ordered(objs: list[MemoryObject]) -> list[MemoryObject]:
    return sorted(objs, key=lambda o: (o.created_at, o.id))


# --- steps -----------------------------------------------------------------------------------
def promote_step(ws: Workspace, min_confidence: float, min_evidence: int, ref: datetime) -> PromoteStep:
    checked = sum(1 for o in ws.items.values() if o.status == "candidate")
    chosen = _ordered([o for o in ws.items.values() if is_promotable(o, min_confidence, min_evidence, ref)])
    promoted: list[str] = []
    for obj in chosen:
        reason = (
            f"promote_candidates: confidence {obj.confidence} >= {min_confidence} and "
            f"{evidence_count(obj)} evidence ref(s) >= {min_evidence}"
        )
        ws.set_status(obj, "active", reason, rule="promote_candidates")
        promoted.append(obj.id)
    return {
        "promoted_knowledge_ids": promoted,
        "counts": {"candidates_checked": checked, "promoted": len(promoted)},
    }


def deprecated(obj: MemoryObject) -> MemoryObject:
    """``obj`` with evidence status ``deprecated`` (the evidence lifecycle's step after ``promoted``),
    the status it had kept in ``evidence_status_before_decay`` (a promote restores it)."""
    meta = dict(obj.metadata)
    before = meta.get("evidence_status")
    if before != "deprecated":
        meta["evidence_status_before_decay"] = before
    meta["evidence_status"] = "deprecated"
    return replace(obj, metadata=meta)


def decay_step(ws: Workspace, ref: datetime, stale_after_days: int) -> DecayStep:
    """Expire or stale what decays; either way its evidence status becomes ``deprecated``."""
    expired: list[str] = []
    stale: list[str] = []
    for obj in _ordered(list(ws.items.values())):
        if is_expired(obj, ref) or is_stale_candidate(obj, ref, stale_after_days):
            obj = deprecated(obj)
        if is_expired(obj, ref):
            ws.set_status(
                obj,
                "expired",
                f"decay_stale: valid_until {obj.valid_until} <= {ref.isoformat()}",
                rule="validity_ended",
            )
            expired.append(obj.id)
        elif is_stale_candidate(obj, ref, stale_after_days):
            ws.set_status(
                obj,
                "stale",
                f"decay_stale: candidate not updated since {obj.updated_at}, over {stale_after_days} day(s) "
                f"before {ref.isoformat()}",
                rule="candidate_unreviewed",
            )
            stale.append(obj.id)
    return {
        "expired_knowledge_ids": expired,
        "stale_knowledge_ids": stale,
        "counts": {"expired": len(expired), "stale": len(stale)},
    }


def archive_plan(source_id: str, citing: list[MemoryObject]) -> tuple[list[MemoryObject], list[MemoryObject]]:
    """Live knowledge citing the source, split into (all evidence there, mixed evidence)."""
    only: list[MemoryObject] = []
    mixed: list[MemoryObject] = []
    for obj in _ordered(citing):
        sources = {e.get("source_id") for e in obj.evidence_refs}
        if source_id not in sources or obj.status not in LIVE_KNOWLEDGE_STATUSES:
            continue
        (only if sources == {source_id} else mixed).append(obj)
    return only, mixed
