"""A triplet stated directly: subject-predicate-object between entities, a temporal fact of the graph.

``record_triplet`` resolves (or creates) the subject and object entities by reference, then
writes a fact {subject, predicate, object} with ``valid_from`` and settles it against live claims
exactly as an extraction does (``claims.py``): a new object for a single-valued predicate
supersedes the old one (``valid_until`` closed), a lower-trust claim never overrides a higher
one, the same triplet again is a duplicate and the existing fact is returned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from memory_substrate.errors import ValidationError
from memory_substrate.graph.apply import Governance
from memory_substrate.graph.canonical import canonical_relation
from memory_substrate.graph.claims import Settlement, apply_settlement, settle
from memory_substrate.graph.nodes import create_entity
from memory_substrate.graph.resolve import EntityResolver
from memory_substrate.models import MemoryObject
from memory_substrate.patch import Patch
from memory_substrate.taxonomy import CANONICAL_PREDICATES, KNOWLEDGE_STATUS_OF, normalize_predicate
from memory_substrate.util import new_id, now_iso

DEFAULT_CONFIDENCE = 0.7
DEFAULT_SALIENCE = 0.5


@dataclass
class Triplet:
    fact: MemoryObject  # the new fact, or the live one it duplicates
    subject: MemoryObject
    object: MemoryObject
    settlement: Settlement

    @property
    def existing(self) -> bool:
        return self.settlement.duplicate_of is not None


def entity_by_reference(
    patch: Patch, ref: str, field: str, gov: Governance, *, metadata: Mapping[str, object]
) -> MemoryObject:
    """An entity by id, by the one live entity the name denotes (``EntityResolver.named``), or a
    new untyped entity of that name; several candidates are a ``ValidationError`` listing them."""
    session = patch.session
    if ref.startswith(("ent:", "node:")):
        obj = session.get_object(ref)
        if obj is None or obj.object_type not in ("entity", "node"):
            raise ValidationError(f"{field}: entity {ref} not found", details={"id": ref})
        return obj
    named = EntityResolver(session, None).named(ref)
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        raise ValidationError(
            f"{field}: {ref!r} names several entities ({', '.join(o.id for o in named[:5])}); pass an entity id",
            details={"entity_ids": [o.id for o in named]},
        )
    return create_entity(patch, ref, "unspecified", gov, status="active", metadata=metadata)


def record_triplet(
    patch: Patch,
    subject_ref: str,
    predicate: str,
    object_ref: str,
    gov: Governance,
    *,
    valid_from: str,
    metadata: Mapping[str, object],
    entity_metadata: Mapping[str, object],
    source_fact: MemoryObject | None = None,
) -> Triplet:
    """Write the triplet into ``patch`` (or find the live fact it repeats). ``metadata``: the
    fact's own attributes; ``entity_metadata``: those of an entity created for a new name. A
    ``source_fact`` gets MENTIONS_ENTITY edges to both entities and the new fact FOLLOWS_FROM it."""
    subj = entity_by_reference(patch, subject_ref, "subject", gov, metadata=entity_metadata)
    target = entity_by_reference(patch, object_ref, "object_value", gov, metadata=entity_metadata)
    text = f"{subj.title} {normalize_predicate(predicate).replace('_', ' ')} {target.title}"
    status = gov.evidence_status or "extracted"
    fact = MemoryObject(
        id=new_id("knowledge"),
        object_type="knowledge",
        kind="fact",
        status=KNOWLEDGE_STATUS_OF[status],
        title=text[:500],
        summary=text,
        memory_source=gov.memory_source,
        reason=gov.reason,
        confidence=DEFAULT_CONFIDENCE,
        scope_refs=list(gov.scope_refs),
        subject_refs=[subj.id],
        payload={"subject": subj.id, "predicate": predicate, "object": target.id, "value": None},
        metadata={
            "evidence_status": status,
            "salience": DEFAULT_SALIENCE,
            "canonical_predicate": normalize_predicate(predicate) in CANONICAL_PREDICATES,
            **metadata,
            **({"source_fact_id": source_fact.id} if source_fact else {}),
        },
        valid_from=valid_from,
    )
    settled = settle(patch.session, fact)
    if settled.duplicate_of is not None:
        return Triplet(settled.duplicate_of, subj, target, settled)
    created = patch.create(settled.obj)
    apply_settlement(patch, created, settled)
    if source_fact is not None:
        stamp = now_iso()
        edges = [
            canonical_relation("MENTIONS_ENTITY", source_fact.id, e.id, {}, stamp) for e in (subj, target)
        ]
        edges.append(canonical_relation("FOLLOWS_FROM", created.id, source_fact.id, {}, stamp))
        patch.relate(edges, object_id=created.id)
    return Triplet(created, subj, target, settled)
