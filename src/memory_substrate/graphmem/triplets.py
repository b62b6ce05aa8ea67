"""create_triplet and search_triplets: a triplet is a temporal fact of the knowledge graph.

``create_triplet`` resolves (or creates) the subject and object entities by name, then writes
a fact {subject, predicate, object} with ``valid_from`` = now and settles it against live claims
exactly as an extraction does (graph/claims.py): a new object for a single-valued predicate
supersedes the old one (``valid_until`` closed), a lower-trust claim never overrides a higher
one, the same triplet again is a duplicate and returns the existing one.
"""

from __future__ import annotations

from typing import Any

from memory_substrate.errors import NotFoundError, ValidationError
from memory_substrate.graph.claims import apply_settlement, settle
from memory_substrate.graphmem import schemas as V
from memory_substrate.graphmem.edges import canonical_relation
from memory_substrate.graphmem.errors import ok
from memory_substrate.graphmem.service import EVIDENCE_STATUS, MEMORY_SOURCE, GraphMemory, Write
from memory_substrate.lookup_keys import entity_any_key, fact_object_key, fact_predicate_key, fact_subject_key
from memory_substrate.models import MemoryObject
from memory_substrate.query.graph_modes import select_facts
from memory_substrate.storage.base import StoreSession
from memory_substrate.taxonomy import (
    CANONICAL_PREDICATES,
    KNOWLEDGE_STATUS_OF,
    normalize_name,
    normalize_predicate,
)
from memory_substrate.util import new_id, now_iso

MAX_NAME = 500
DEFAULT_CONFIDENCE = 0.7


def _predicate(value: str) -> str:
    """A predicate is the relation type of the Entity-Entity edge it makes (spec 002): validated
    exactly as ``create_relation`` validates ``relation_type`` (letters, digits, ``_``), case kept.
    Lookups (``search_triplets``, supersession) compare predicates case-insensitively."""
    if not V.RELATION_TYPE.match(value):
        raise ValidationError(f"predicate {value!r} is invalid: use letters, digits and '_' only")
    return value


def _name(value: str, field: str) -> str:
    if not value or not value.strip():
        raise ValidationError(f"{field} is required and must not be empty")
    if len(value) > MAX_NAME:
        raise ValidationError(f"{field} too long (max {MAX_NAME} chars)")
    return value.strip()


def _entity_ids(session: StoreSession, ref: str) -> list[str]:
    if ref.startswith(("ent:", "node:")):
        return [ref]
    return sorted({oid for _, oid in session.find_keys([entity_any_key(ref)])})


def _resolve(w: Write, g: GraphMemory, ref: str, field: str) -> MemoryObject:
    """An entity by id, by its unique name or alias, or a new untyped entity of that name."""
    if ref.startswith(("ent:", "node:")):
        obj = w.session.get_object(ref)
        if obj is None or obj.object_type not in ("entity", "node"):
            raise ValidationError(f"{field}: entity {ref} not found", details={"id": ref})
        return obj
    live = [o for o in w.session.get_objects(_entity_ids(w.session, ref)).values() if o.status == "active"]
    exact = [o for o in live if normalize_name(o.title) == normalize_name(ref)]
    pick = exact if len(exact) == 1 else live
    if len(pick) == 1:
        return pick[0]
    if len(pick) > 1:
        raise ValidationError(
            f"{field}: {ref!r} names several entities ({', '.join(o.id for o in pick[:5])}); pass an entity id",
            details={"entity_ids": [o.id for o in pick]},
        )
    return w.patch.create(
        MemoryObject(
            id=new_id("entity"), object_type="entity", kind="unspecified", status="active", title=ref,
            summary=f"unspecified: {ref}", memory_source=MEMORY_SOURCE, reason="create_triplet via graph toolset",
            scope_refs=[g.limits.graph_scope], payload={"name": ref, "entity_type": "unspecified", "aliases": []},
            metadata={"evidence_status": EVIDENCE_STATUS, "graph": {"node_type": "Entity", "source": "mcp",
                                                                   "metadata": {}, "ttl_days": None}},
        )
    )


def triplet_view(fact: MemoryObject, names: dict[str, MemoryObject], namespace: str) -> dict[str, Any]:
    p = fact.payload
    subject, target = names.get(str(p.get("subject"))), names.get(str(p.get("object")))
    g = fact.metadata.get("graph") or {}
    view: dict[str, Any] = {
        "id": fact.id,
        "owner_id": namespace,
        "subject": subject.title if subject else p.get("subject"),
        "subject_id": p.get("subject"),
        "predicate": p.get("predicate"),
        "object_value": target.title if target else p.get("value"),
        "object_id": p.get("object"),
        "status": V.LIFECYCLE_TO_STATUS.get(fact.status, "active"),
        "lifecycle_status": fact.status,
        "valid_from": V.ms(fact.valid_from),
        "valid_until": V.ms(fact.valid_until),
        "metadata": g.get("metadata") or {},
        "fact_id": fact.metadata.get("source_fact_id"),
        "created_at": V.ms(fact.created_at),
    }
    for key in ("supersedes", "superseded_by", "blocked_by"):
        if fact.metadata.get(key):
            view[key] = fact.metadata[key]
    return view


def create_triplet(
    g: GraphMemory,
    *,
    subject: str,
    predicate: str,
    object_value: str,
    owner_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    fact_id: str | None = None,
) -> dict[str, Any]:
    ns = g.namespace(owner_id)
    subj_name, obj_name = _name(subject, "subject"), _name(object_value, "object_value")
    pred = _predicate(predicate)
    meta = V.metadata(metadata, g.limits)
    with g.write(ns, "create_triplet") as w:
        source_fact = None
        if fact_id is not None:
            try:
                source_fact = g.node(w.session, fact_id, "fact_id")
            except NotFoundError as exc:
                raise ValidationError(exc.message, details=exc.details) from None
            if source_fact.object_type != "knowledge":
                raise ValidationError(f"fact_id: {fact_id} is an Entity, not a Fact")
        subj = _resolve(w, g, subj_name, "subject")
        target = _resolve(w, g, obj_name, "object_value")
        text = f"{subj.title} {normalize_predicate(pred).replace('_', ' ')} {target.title}"
        fact = MemoryObject(
            id=new_id("knowledge"), object_type="knowledge", kind="fact", status=KNOWLEDGE_STATUS_OF[EVIDENCE_STATUS],
            title=text[:500], summary=text, memory_source=MEMORY_SOURCE, reason="create_triplet via graph toolset",
            confidence=DEFAULT_CONFIDENCE, scope_refs=[g.limits.graph_scope], subject_refs=[subj.id],
            payload={"subject": subj.id, "predicate": pred, "object": target.id, "value": None},
            metadata={
                "evidence_status": EVIDENCE_STATUS, "salience": 0.5, "canonical_predicate": normalize_predicate(pred) in CANONICAL_PREDICATES,
                "graph": {"node_type": "Fact", "source": "mcp", "metadata": meta, "ttl_days": None},
                **({"source_fact_id": source_fact.id} if source_fact else {}),
            },
            valid_from=w.now.isoformat(timespec="microseconds"),
        )
        settled = settle(w.session, fact)
        names = {subj.id: subj, target.id: target}
        if settled.duplicate_of is not None:
            return ok(triplet=triplet_view(settled.duplicate_of, names, ns), existing=True)
        created = w.patch.create(settled.obj)
        apply_settlement(w.patch, created, settled)
        if source_fact is not None:
            stamp = now_iso()
            edges = [canonical_relation("MENTIONS_ENTITY", source_fact.id, e.id, {}, stamp) for e in (subj, target)]
            edges.append(canonical_relation("FOLLOWS_FROM", created.id, source_fact.id, {}, stamp))
            w.patch.relate(edges, object_id=created.id)
    view = triplet_view(created, names, ns)
    view["superseded"] = [o.id for o in settled.supersede]
    return ok(triplet=view)


def search_triplets(
    g: GraphMemory,
    *,
    subject: str | None = None,
    predicate: str | None = None,
    object_value: str | None = None,
    owner_id: str | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    """Current triplets (superseded ones are history) matching every filter given."""
    ns = g.namespace(owner_id)
    if not 1 <= limit <= 1000:
        raise ValidationError("limit must be between 1 and 1000")
    with g.read(ns) as session:
        groups: list[set[str]] = []
        if subject:
            groups.append({o for _, o in session.find_keys([fact_subject_key(i) for i in _entity_ids(session, subject)])})
        if object_value:
            groups.append({o for _, o in session.find_keys([fact_object_key(i) for i in _entity_ids(session, object_value)])})
        if predicate:
            groups.append({o for _, o in session.find_keys([fact_predicate_key(_predicate(predicate))])})
        if groups:
            ids = sorted(set.intersection(*groups))
        else:
            objs = session.list_objects(object_types=["knowledge"], kinds=["fact"], statuses=list(V.LIVE), limit=limit * 5)
            ids = [o.id for o in objs if o.payload.get("subject") and o.payload.get("predicate")]
        facts = [f for f in select_facts(session, ids, as_of=None, include_superseded=False)
                 if f.payload.get("subject") and f.payload.get("predicate")][:limit]
        refs = {str(f.payload.get(k)) for f in facts for k in ("subject", "object") if f.payload.get(k)}
        names = session.get_objects(sorted(refs))
    return ok(triplets=[triplet_view(f, names, ns) for f in facts], count=len(facts))
