"""An explicit entity merge (``memory_maintain`` mode ``merge_entities``): the only way two
entity records become one. Facts move to the survivor, names become its aliases, the absorbed
entity stays addressable with status ``merged`` and a pointer to the survivor; every step is an
audited update in one patch."""

from __future__ import annotations

from dataclasses import replace

from pydantic import Field

from memory_substrate.errors import ConflictError, NotFoundError, ValidationError
from memory_substrate.indexing import claim_key, claim_value
from memory_substrate.lookup_keys import fact_object_key, fact_subject_key
from memory_substrate.maintain.common import Envelope, commit_if_changed, maintenance_session
from memory_substrate.maintain.results import ClaimConflict, MergeEntitiesResult
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject
from memory_substrate.patch import Patch
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.taxonomy import MANY_VALUED_PREDICATES, normalize_name, normalize_predicate
from memory_substrate.validation import Strict


class MergeEntitiesInput(Strict):
    source_entity_id: str = Field(min_length=1, max_length=300)
    target_entity_id: str = Field(min_length=1, max_length=300)
    reason: str = Field(min_length=1, max_length=4000)


def _entity(obj: MemoryObject | None, ref: str, field: str) -> MemoryObject:
    if obj is None or obj.object_type != "entity":
        raise NotFoundError(f"{field}: entity {ref} not found", details={"id": ref, "field": field})
    if obj.status != "active":
        raise ConflictError(
            f"{field}: entity {ref} is {obj.status}; only active entities merge", details={"id": ref}
        )
    return obj


def _repoint(fact: MemoryObject, old: str, new: str) -> MemoryObject:
    payload = dict(fact.payload)
    for key in ("subject", "object"):
        if payload.get(key) == old:
            payload[key] = new
    refs = list(dict.fromkeys(new if r == old else r for r in fact.subject_refs))
    return replace(fact, payload=payload, subject_refs=refs)


def merge_entities(rt: Runtime, data: MergeEntitiesInput, *, apply: bool) -> MergeEntitiesResult:
    if data.source_entity_id == data.target_entity_id:
        raise ValidationError("input_data: source_entity_id and target_entity_id must differ")
    with maintenance_session(rt, "merge_entities", apply=apply, reason=data.reason) as (session, patch):
        found = session.get_objects([data.source_entity_id, data.target_entity_id])
        src = _entity(found.get(data.source_entity_id), data.source_entity_id, "source_entity_id")
        dst = _entity(found.get(data.target_entity_id), data.target_entity_id, "target_entity_id")
        facts = _facts_about(session, src.id)
        new_aliases = _new_aliases(src, dst)
        moved = [_repoint(f, src.id, dst.id) for f in facts]
        conflicts = _claim_conflicts(session, moved)
        if patch is not None:
            _write_merge(patch, src, dst, moved, new_aliases, data.reason)
        record = commit_if_changed(patch, {"source_entity_id": src.id, "target_entity_id": dst.id})
    env = Envelope("merge_entities", apply, 1, patch, record)
    return {
        **env.head(),
        "source_entity_id": src.id,
        "target_entity_id": dst.id,
        "aliases_added": new_aliases,
        "moved_fact_ids": [f.id for f in moved],
        "conflicting_facts": conflicts,
        "counts": {"facts_moved": len(moved), "aliases_added": len(new_aliases), "conflicts": len(conflicts)},
        **env.tail(),
    }


def _listed(value: object) -> list[object]:
    """A list kept in a payload or metadata (aliases, episode_ids, merged_from), as stored; the
    writers only ever store lists, so anything else reads as none."""
    return value if isinstance(value, list) else []


def _names(value: object) -> list[str]:
    """An entity's aliases: names are strings (``normalize_name`` reads nothing else)."""
    return [a for a in _listed(value) if isinstance(a, str)]


def _count(value: object) -> int:
    """A counter kept in metadata (``mentions``); missing or empty counts as 0."""
    return int(value) if isinstance(value, int | float | str) and value else 0


def _facts_about(session: StoreSession, entity_id: str) -> list[MemoryObject]:
    """The knowledge facts that name the entity as their subject or object."""
    fact_ids = sorted(
        {oid for _, oid in session.find_keys([fact_subject_key(entity_id), fact_object_key(entity_id)])}
    )
    return [f for f in session.get_objects(fact_ids).values() if f.object_type == "knowledge"]


def _new_aliases(src: MemoryObject, dst: MemoryObject) -> list[str]:
    """The absorbed entity's names the survivor does not already answer to, one per normal form."""
    known = {normalize_name(dst.title), *(normalize_name(a) for a in _names(dst.payload.get("aliases")))}
    new_aliases = [
        a for a in [src.title, *_names(src.payload.get("aliases"))] if normalize_name(a) not in known
    ]
    return list({normalize_name(a): a for a in new_aliases}.values())


def _claim_conflicts(session: StoreSession, moved: list[MemoryObject]) -> list[ClaimConflict]:
    """Live facts that, once repointed, claim another value than a live fact already stored."""
    conflicts: list[ClaimConflict] = []
    for fact in moved:
        key = claim_key(fact)
        if not key or fact.status not in LIVE_KNOWLEDGE_STATUSES:
            continue
        if normalize_predicate(str(fact.payload.get("predicate", ""))) in MANY_VALUED_PREDICATES:
            continue  # a second value of a many-valued predicate is an addition, not a conflict
        for other in session.find_by_claim(key):
            if (
                other.id != fact.id
                and other.status in LIVE_KNOWLEDGE_STATUSES
                and claim_value(other) != claim_value(fact)
            ):
                conflicts.append(
                    {
                        "fact_id": fact.id,
                        "conflicts_with": other.id,
                        "predicate": fact.payload.get("predicate"),
                    }
                )
    return conflicts


def _write_merge(
    patch: Patch,
    src: MemoryObject,
    dst: MemoryObject,
    moved: list[MemoryObject],
    new_aliases: list[str],
    reason: str,
) -> None:
    """The merge's updates: each moved fact, the survivor (aliases, episodes, mentions), and the
    absorbed entity marked ``merged``."""
    for after in moved:
        patch.update(
            after,
            action="merge_entities",
            changes={"entity": {"from": src.id, "to": dst.id}, "reason": reason},
        )
    episodes = list(
        dict.fromkeys([*_listed(dst.metadata.get("episode_ids")), *_listed(src.metadata.get("episode_ids"))])
    )
    patch.update(
        replace(
            dst,
            payload={
                **dst.payload,
                "aliases": [*_listed(dst.payload.get("aliases")), *new_aliases][:50],
            },
            metadata={
                **dst.metadata,
                "episode_ids": episodes[-50:],
                "mentions": _count(dst.metadata.get("mentions")) + _count(src.metadata.get("mentions")),
                "merged_from": [*_listed(dst.metadata.get("merged_from")), src.id],
            },
        ),
        action="merge_entities",
        changes={
            "absorbed": src.id,
            "aliases_added": new_aliases,
            "facts_moved": len(moved),
            "reason": reason,
        },
    )
    patch.update(
        replace(src, status="merged", metadata={**src.metadata, "merged_into": dst.id}),
        action="status_change",
        changes={
            "status": {"from": "active", "to": "merged"},
            "merged_into": dst.id,
            "reason": reason,
        },
    )
