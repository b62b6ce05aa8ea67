"""promote_candidates, merge_duplicates, decay_stale and cycle: steps over live knowledge.

Each mode loads the namespace's live knowledge once into a ``Workspace`` and runs its step(s);
``cycle`` runs promote, then merge, then decay in one patch, each step planning against the
state the previous one leaves (also in a dry run), and reports every step on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_substrate.maintain.common import (
    Workspace,
    commit_if_changed,
    load_objects,
    maintenance_session,
    mutation_result,
    reference,
)
from memory_substrate.maintain.duplicates import merge_step
from memory_substrate.maintain.lifecycle import decay_step, promote_step
from memory_substrate.maintain.schemas import CycleInput, DecayInput, PromoteInput
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES
from memory_substrate.runtime import Runtime

Step = Callable[[Workspace], dict[str, Any]]


def _run(
    rt: Runtime, mode: str, steps: list[tuple[str, Step]], *, apply: bool, reason: str
) -> dict[str, Any]:
    with maintenance_session(rt, mode, apply=apply, reason=reason) as (session, patch):
        live = load_objects(session, object_types=["knowledge"], statuses=list(LIVE_KNOWLEDGE_STATUSES))
        ws = Workspace.of(live, patch)
        results = {name: step(ws) for name, step in steps}
        counts = {k: v for r in results.values() for k, v in r["counts"].items()}
        record = commit_if_changed(patch, counts)
    if len(steps) == 1:
        body = dict(results[steps[0][0]])
        body.pop("counts")
    else:
        body = {"steps": results}
    return mutation_result(
        mode, apply=apply, change_count=ws.changes, counts=counts, patch=patch, record=record, **body
    )


def promote_candidates(rt: Runtime, data: PromoteInput, *, apply: bool) -> dict[str, Any]:
    ref = reference(data.reference_time)
    result = _run(
        rt,
        "promote_candidates",
        [("promote_candidates", lambda ws: promote_step(ws, data.min_confidence, data.min_evidence, ref))],
        apply=apply,
        reason=f"promote candidates with confidence >= {data.min_confidence} and >= {data.min_evidence} evidence ref(s)",
    )
    result["thresholds"] = {"min_confidence": data.min_confidence, "min_evidence": data.min_evidence}
    result["reference_time"] = ref.isoformat()
    return result


def merge_duplicates(rt: Runtime, *, apply: bool) -> dict[str, Any]:
    return _run(
        rt,
        "merge_duplicates",
        [("merge_duplicates", merge_step)],
        apply=apply,
        reason="merge deterministic structured duplicates",
    )


def decay_stale(rt: Runtime, data: DecayInput, *, apply: bool) -> dict[str, Any]:
    ref = reference(data.reference_time)
    result = _run(
        rt,
        "decay_stale",
        [("decay_stale", lambda ws: decay_step(ws, ref, data.stale_after_days))],
        apply=apply,
        reason=f"expire knowledge past valid_until; candidates unreviewed for {data.stale_after_days} day(s) become stale",
    )
    result["reference_time"] = ref.isoformat()
    result["stale_after_days"] = data.stale_after_days
    return result


def cycle(rt: Runtime, data: CycleInput, *, apply: bool) -> dict[str, Any]:
    ref = reference(data.reference_time)
    result = _run(
        rt,
        "cycle",
        [
            ("promote_candidates", lambda ws: promote_step(ws, data.min_confidence, data.min_evidence, ref)),
            ("merge_duplicates", merge_step),
            ("decay_stale", lambda ws: decay_step(ws, ref, data.stale_after_days)),
        ],
        apply=apply,
        reason="maintenance cycle: promote candidates, merge duplicates, decay stale",
    )
    result["thresholds"] = {
        "min_confidence": data.min_confidence,
        "min_evidence": data.min_evidence,
        "stale_after_days": data.stale_after_days,
    }
    result["reference_time"] = ref.isoformat()
    return result
