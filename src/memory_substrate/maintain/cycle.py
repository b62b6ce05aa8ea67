"""promote_candidates, merge_duplicates, decay_stale and cycle: steps over live knowledge.

Each mode loads the namespace's live knowledge once into a ``Workspace`` and runs its step(s);
``cycle`` runs promote, then merge, then decay in one patch, each step planning against the
state the previous one leaves (also in a dry run), and reports every step on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from memory_substrate.maintain.common import (
    Envelope,
    Workspace,
    commit_if_changed,
    load_objects,
    maintenance_session,
    reference,
)
from memory_substrate.maintain.duplicates import merge_step
from memory_substrate.maintain.lifecycle import decay_step, promote_step
from memory_substrate.maintain.results import (
    CycleCounts,
    CycleResult,
    CycleSteps,
    DecayResult,
    MergeDuplicatesResult,
    PromoteResult,
)
from memory_substrate.maintain.schemas import CycleInput, DecayInput, PromoteInput
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES
from memory_substrate.runtime import Runtime

S = TypeVar("S")


def _run(
    rt: Runtime,
    mode: str,
    step: Callable[[Workspace], S],
    counts: Callable[[S], Mapping[str, object]],
    *,
    apply: bool,
    reason: str,
) -> tuple[S, Envelope]:
    """``step`` over the live knowledge, committed with its ``counts`` as the patch summary."""
    with maintenance_session(rt, mode, apply=apply, reason=reason) as (session, patch):
        live = load_objects(session, object_types=["knowledge"], statuses=list(LIVE_KNOWLEDGE_STATUSES))
        ws = Workspace.of(live, patch)
        done = step(ws)
        record = commit_if_changed(patch, counts(done))
    return done, Envelope(mode, apply, ws.changes, patch, record)


def promote_candidates(rt: Runtime, data: PromoteInput, *, apply: bool) -> PromoteResult:
    ref = reference(data.reference_time)
    step, env = _run(
        rt,
        "promote_candidates",
        lambda ws: promote_step(ws, data.min_confidence, data.min_evidence, ref),
        lambda done: done["counts"],
        apply=apply,
        reason=f"promote candidates with confidence >= {data.min_confidence} and >= {data.min_evidence} evidence ref(s)",
    )
    return {
        **env.head(),
        "promoted_knowledge_ids": step["promoted_knowledge_ids"],
        "counts": step["counts"],
        **env.tail(),
        "thresholds": {"min_confidence": data.min_confidence, "min_evidence": data.min_evidence},
        "reference_time": ref.isoformat(),
    }


def merge_duplicates(rt: Runtime, *, apply: bool) -> MergeDuplicatesResult:
    step, env = _run(
        rt,
        "merge_duplicates",
        merge_step,
        lambda done: done["counts"],
        apply=apply,
        reason="merge deterministic structured duplicates",
    )
    return {**env.head(), "groups": step["groups"], "counts": step["counts"], **env.tail()}


def decay_stale(rt: Runtime, data: DecayInput, *, apply: bool) -> DecayResult:
    ref = reference(data.reference_time)
    step, env = _run(
        rt,
        "decay_stale",
        lambda ws: decay_step(ws, ref, data.stale_after_days),
        lambda done: done["counts"],
        apply=apply,
        reason=f"expire knowledge past valid_until; candidates unreviewed for {data.stale_after_days} day(s) become stale",
    )
    return {
        **env.head(),
        "expired_knowledge_ids": step["expired_knowledge_ids"],
        "stale_knowledge_ids": step["stale_knowledge_ids"],
        "counts": step["counts"],
        **env.tail(),
        "reference_time": ref.isoformat(),
        "stale_after_days": data.stale_after_days,
    }


def _cycle_counts(steps: CycleSteps) -> CycleCounts:
    return {
        **steps["promote_candidates"]["counts"],
        **steps["merge_duplicates"]["counts"],
        **steps["decay_stale"]["counts"],
    }


def cycle(rt: Runtime, data: CycleInput, *, apply: bool) -> CycleResult:
    ref = reference(data.reference_time)

    def steps(ws: Workspace) -> CycleSteps:
        # In this order: each step plans against the state the one before leaves.
        return {
            "promote_candidates": promote_step(ws, data.min_confidence, data.min_evidence, ref),
            "merge_duplicates": merge_step(ws),
            "decay_stale": decay_step(ws, ref, data.stale_after_days),
        }

    done, env = _run(
        rt,
        "cycle",
        steps,
        _cycle_counts,
        apply=apply,
        reason="maintenance cycle: promote candidates, merge duplicates, decay stale",
    )
    return {
        **env.head(),
        "steps": done,
        "counts": _cycle_counts(done),
        **env.tail(),
        "thresholds": {
            "min_confidence": data.min_confidence,
            "min_evidence": data.min_evidence,
            "stale_after_days": data.stale_after_days,
        },
        "reference_time": ref.isoformat(),
    }
