"""resolve_duplicates: record a reviewed outcome for one current soft-duplicate pair.

Outcomes:

* ``supersede``: the non-canonical item becomes ``superseded`` (``superseded_by`` in its audit
  event), the canonical one records ``metadata.supersedes`` (a ``canonical_relation`` edge, as
  ``memory_remember supersede`` does) and gains the other's evidence refs.
* ``keep_both``: the items are distinct; optional ``updates`` change their ``scope_refs``,
  ``title`` or ``summary`` so they stop reading as one.
* ``contest``: both become ``contested``: unclear or conflicting, not clean active memory.

Each item records the review in ``metadata.duplicate_review`` (``{other_id: outcome}``), so the
pair is no longer reported and cannot be resolved twice. Only a pair the report would list
*now* is accepted; anything else is refused with the reason it does not qualify.
"""

from __future__ import annotations

from dataclasses import replace

from memory_substrate.errors import ConflictError, NotFoundError
from memory_substrate.json_types import JsonObject
from memory_substrate.maintain.common import (
    Envelope,
    Workspace,
    commit_if_changed,
    maintenance_session,
    merge_evidence,
)
from memory_substrate.maintain.duplicates import REVIEW_KEY, reviewed_with, soft_eligible, soft_match
from memory_substrate.maintain.results import Change, ResolveCounts, ResolveOutcome, ResolveResult
from memory_substrate.maintain.schemas import ResolveDuplicatesInput
from memory_substrate.models import MemoryObject
from memory_substrate.remember.similarity import THRESHOLD, is_structured
from memory_substrate.runtime import Runtime

MODE = "resolve_duplicates"


def _why_not(a: MemoryObject, b: MemoryObject, score: float, reasons: list[str]) -> str:
    for obj in (a, b):
        if not soft_eligible(obj):
            what = "structured" if is_structured(obj) else obj.status
            return f"{obj.id} is {what}; soft duplicates are live unstructured knowledge"
    if b.id in reviewed_with(a) or a.id in reviewed_with(b):
        return "this pair was already resolved"
    return f"score {score} with reasons {reasons} is below the soft-duplicate threshold {THRESHOLD}"


def _marked(obj: MemoryObject, other_id: str, outcome: str) -> JsonObject:
    meta = dict(obj.metadata)
    meta[REVIEW_KEY] = {**reviewed_with(obj), other_id: outcome}
    return meta


Resolved = tuple[ResolveOutcome, ResolveCounts]


def _supersede(ws: Workspace, canonical: MemoryObject, other: MemoryObject, reason: str) -> Resolved:
    evidence, moved = merge_evidence(canonical.evidence_refs, other.evidence_refs)
    meta = _marked(canonical, other.id, "supersede")
    meta["supersedes"] = other.id
    ws.update(
        replace(canonical, evidence_refs=evidence, metadata=meta),
        action="resolve_duplicates",
        changes={
            "outcome": "supersede",
            "supersedes": other.id,
            "evidence_refs_added": moved,
            "reason": reason,
        },
    )
    ws.update(
        replace(other, status="superseded", metadata=_marked(other, canonical.id, "supersede")),
        action="status_change",
        changes={
            "status": {"from": other.status, "to": "superseded"},
            "superseded_by": canonical.id,
            "outcome": "supersede",
            "reason": reason,
        },
        derive=False,
    )
    return (
        {"canonical_knowledge_id": canonical.id, "superseded_knowledge_ids": [other.id]},
        {"superseded": 1, "updated": 1, "contested": 0, "evidence_refs_moved": moved},
    )


def _keep_both(ws: Workspace, pair: list[MemoryObject], data: ResolveDuplicatesInput) -> Resolved:
    updates = {u.knowledge_id: u for u in data.updates}
    changed: dict[str, dict[str, Change]] = {}
    for obj, other in ((pair[0], pair[1]), (pair[1], pair[0])):
        update = updates.get(obj.id)
        fields: dict[str, Change] = {}
        new = replace(obj, metadata=_marked(obj, other.id, "keep_both"))
        if update is not None:
            for name in ("scope_refs", "title", "summary"):
                value = getattr(update, name)
                if value is not None and value != getattr(obj, name):
                    fields[name] = {"from": getattr(obj, name), "to": value}
                    new = replace(new, **{name: value})
        ws.update(
            new,
            action="resolve_duplicates",
            changes={"outcome": "keep_both", **fields, "reason": data.reason},
        )
        changed[obj.id] = fields
    return (
        {"field_changes": changed},
        {
            "superseded": 0,
            "updated": sum(1 for f in changed.values() if f),
            "contested": 0,
            "evidence_refs_moved": 0,
        },
    )


def _contest(ws: Workspace, pair: list[MemoryObject], reason: str) -> Resolved:
    contested = []
    for obj, other in ((pair[0], pair[1]), (pair[1], pair[0])):
        changes: JsonObject = {"outcome": "contest", "reason": reason}
        if obj.status != "contested":
            changes["status"] = {"from": obj.status, "to": "contested"}
            contested.append(obj.id)
        ws.update(
            replace(obj, status="contested", metadata=_marked(obj, other.id, "contest")),
            action="status_change" if obj.status != "contested" else "resolve_duplicates",
            changes=changes,
            derive=False,
        )
    return (
        {"contested_knowledge_ids": [o.id for o in pair]},
        {"superseded": 0, "updated": 0, "contested": len(contested), "evidence_refs_moved": 0},
    )


def resolve_duplicates(rt: Runtime, data: ResolveDuplicatesInput, *, apply: bool) -> ResolveResult:
    """Raises ``NotFoundError`` for a missing id, ``ConflictError`` for a pair that is not current."""
    with maintenance_session(rt, MODE, apply=apply, reason=data.reason) as (session, patch):
        found = session.get_objects(data.knowledge_ids)
        for kid in data.knowledge_ids:
            obj = found.get(kid)
            if obj is None or obj.object_type != "knowledge":
                raise NotFoundError(f"knowledge_ids: knowledge {kid} not found", details={"id": kid})
        pair = [found[k] for k in data.knowledge_ids]
        ok, score, reasons = soft_match(pair[0], pair[1])
        if not ok:
            raise ConflictError(
                f"{pair[0].id} and {pair[1].id} are not a current soft duplicate candidate pair: "
                f"{_why_not(pair[0], pair[1], score, reasons)}. Run memory_maintain report for current pairs.",
                details={"knowledge_ids": data.knowledge_ids, "score": score, "reasons": reasons},
            )
        ws = Workspace.of(pair, patch)
        if data.outcome == "supersede":
            canonical = found[data.canonical_knowledge_id or ""]
            other = pair[1] if canonical.id == pair[0].id else pair[0]
            body, counts = _supersede(ws, canonical, other, data.reason)
        elif data.outcome == "keep_both":
            body, counts = _keep_both(ws, pair, data)
        else:
            body, counts = _contest(ws, pair, data.reason)
        record = commit_if_changed(
            patch, {"outcome": data.outcome, "knowledge_ids": data.knowledge_ids, **counts}
        )
    env = Envelope(MODE, apply, ws.changes, patch, record)
    return {
        **env.head(),
        "outcome": data.outcome,
        "knowledge_ids": data.knowledge_ids,
        "score": score,
        "reasons": reasons,
        **body,
        "counts": counts,
        **env.tail(),
    }
