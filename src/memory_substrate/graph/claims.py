"""How a new structured claim settles against live claims about the same subject and predicate.

One rule for memory_remember's knowledge writes and the knowledge graph's temporal facts (docs/knowledge-graph.md):

- Same value as a live claim: a duplicate (a knowledge write is rejected; an extraction reinforces it).
- Many-valued predicate (``contains``, ``depends_on``, ...): a new value is an addition, no conflict.
- A claim with ``valid_from`` is a change over time: it supersedes the live claims it contradicts
  (their ``valid_until`` becomes its ``valid_from``), unless it is older than them, in which case
  it is recorded as history (superseded on arrival).
- A claim without ``valid_from`` is a disagreement: the conflict rule marks it contested.
- Trust decides who yields: a lower-trust claim never supersedes, contests or demotes a higher
  one; it is contested itself and the higher claim is left as it was. Between equals, an
  atemporal conflict contests both.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from memory_substrate.graph.extraction_trace import ClaimConflict
from memory_substrate.indexing import claim_key, claim_value
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject
from memory_substrate.patch import Patch
from memory_substrate.storage.base import StoreSession
from memory_substrate.taxonomy import MANY_VALUED_PREDICATES, normalize_predicate, trust_rank
from memory_substrate.util import parse_time


def trust_of(obj: MemoryObject) -> int:
    return trust_rank(obj.metadata, obj.memory_source, bool(obj.evidence_refs))


@dataclass
class Settlement:
    obj: MemoryObject  # the new claim with the status and validity it settles into
    duplicate_of: MemoryObject | None = None
    supersede: list[MemoryObject] = field(default_factory=list)
    contest: list[MemoryObject] = field(default_factory=list)
    conflicts: list[ClaimConflict] = field(default_factory=list)


def _before(a: str | None, b: str | None) -> bool:
    return bool(a and b) and parse_time(a) < parse_time(b)  # type: ignore[arg-type]


def settle(session: StoreSession, new: MemoryObject) -> Settlement:
    key = claim_key(new)
    if not key:
        return Settlement(new)
    # Claims about a knowledge-graph entity settle across the whole namespace (an entity
    # belongs to the namespace, not to a scope); other structured claims only within overlapping scopes.
    namespace_wide = str(new.payload.get("subject", "")).startswith("ent:")
    rivals = [
        o
        for o in session.find_by_claim(key)
        if o.id != new.id
        and o.status in LIVE_KNOWLEDGE_STATUSES
        and (namespace_wide or set(o.scope_refs) & set(new.scope_refs))
    ]
    value = claim_value(new)
    same = [o for o in rivals if claim_value(o) == value]
    if same:
        return Settlement(new, duplicate_of=same[0])
    predicate = normalize_predicate(str(new.payload.get("predicate", "")))
    different = [o for o in rivals if claim_value(o) != value]
    if new.memory_source == "imported":
        # An import is a snapshot of a timeless graph (an MCP memory file, wiki links): its
        # claims about one subject and predicate sit side by side, none replaces another.
        different = [o for o in different if o.memory_source != "imported"]
    if not different or predicate in MANY_VALUED_PREDICATES:
        return Settlement(new)
    temporal = new.valid_from is not None
    mine = trust_of(new)

    if temporal:
        newer = [o for o in different if _before(new.valid_from, o.valid_from)]
        if newer:
            # An older statement arriving late: true until the earliest later claim began.
            first = min(newer, key=lambda o: parse_time(o.valid_from))  # type: ignore[arg-type]
            meta = {**new.metadata, "evidence_status": "superseded", "superseded_by": first.id}
            settled = replace(new, status="superseded", valid_until=first.valid_from, metadata=meta)
            return Settlement(
                settled,
                conflicts=[{"object_id": first.id, "title": first.title, "outcome": "new_claim_is_history"}],
            )

    higher = [o for o in different if trust_of(o) > mine]
    if higher:
        meta = {**new.metadata, "blocked_by": [o.id for o in higher]}
        return Settlement(
            replace(new, status="contested", metadata=meta),
            conflicts=[
                {
                    "object_id": o.id,
                    "title": o.title,
                    "outcome": "kept_higher_trust_claim",
                    "status": o.status,
                }
                for o in higher
            ],
        )
    if temporal:
        meta = {**new.metadata, "supersedes": different[0].id}
        return Settlement(
            replace(new, metadata=meta),
            supersede=different,
            conflicts=[{"object_id": o.id, "title": o.title, "outcome": "superseded"} for o in different],
        )
    equal = [o for o in different if trust_of(o) == mine]
    settled = replace(new, status="contested") if equal else new
    return Settlement(
        settled,
        contest=different,
        conflicts=[{"object_id": o.id, "title": o.title, "status": "contested"} for o in different],
    )


def apply_settlement(patch: Patch, created: MemoryObject, s: Settlement) -> None:
    """Write what settling did to the rivals (after ``created`` was written)."""
    for old in s.supersede:
        meta = {**old.metadata, "evidence_status": "superseded", "superseded_by": created.id}
        closed = replace(old, status="superseded", valid_until=created.valid_from, metadata=meta)
        patch.update(
            closed,
            action="status_change",
            changes={
                "status": {"from": old.status, "to": "superseded"},
                "valid_until": created.valid_from,
                "superseded_by": created.id,
                "reason": f"superseded by {created.id}",
            },
            derive=False,
        )
    for other in s.contest:
        if other.status != "contested":
            patch.set_status(other, "contested", f"conflicts with {created.id}", conflicting_id=created.id)
