"""create_triplet and search_triplets: a triplet is a temporal fact of the knowledge graph.

``create_triplet`` checks its arguments and writes through ``graph.triplets.record_triplet``:
the subject and object resolve (or are created) by the rule extraction uses, and the fact settles
against live claims exactly as an extraction's does (graph/claims.py).
"""

from __future__ import annotations

from memory_substrate.errors import NotFoundError, ValidationError
from memory_substrate.graph.triplets import record_triplet
from memory_substrate.graphmem import schemas
from memory_substrate.graphmem.errors import ok
from memory_substrate.graphmem.service import GraphMemory
from memory_substrate.graphmem.view_types import TripletView
from memory_substrate.json_types import JsonObject
from memory_substrate.lookup_keys import entity_any_key, fact_object_key, fact_predicate_key, fact_subject_key
from memory_substrate.models import MemoryObject
from memory_substrate.query.graph_modes import select_facts
from memory_substrate.storage.base import StoreSession

MAX_NAME = 500


def _predicate(value: str) -> str:
    """A predicate is the relation type of the Entity-Entity edge it makes: validated
    exactly as ``create_relation`` validates ``relation_type`` (letters, digits, ``_``), case kept.
    Lookups (``search_triplets``, supersession) compare predicates case-insensitively."""
    if not schemas.RELATION_TYPE.match(value):
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


def triplet_view(fact: MemoryObject, names: dict[str, MemoryObject], namespace: str) -> TripletView:
    p = fact.payload
    subject, target = names.get(str(p.get("subject"))), names.get(str(p.get("object")))
    g = schemas.graph_attributes_of(fact)
    view: TripletView = {
        "id": fact.id,
        "owner_id": namespace,
        "subject": subject.title if subject else p.get("subject"),
        "subject_id": p.get("subject"),
        "predicate": p.get("predicate"),
        "object_value": target.title if target else p.get("value"),
        "object_id": p.get("object"),
        "status": schemas.LIFECYCLE_TO_STATUS.get(fact.status, "active"),
        "lifecycle_status": fact.status,
        "valid_from": schemas.ms(fact.valid_from),
        "valid_until": schemas.ms(fact.valid_until),
        "metadata": g.get("metadata") or {},
        "fact_id": fact.metadata.get("source_fact_id"),
        "created_at": schemas.ms(fact.created_at),
    }
    meta = fact.metadata
    if meta.get("supersedes"):
        view["supersedes"] = meta["supersedes"]
    if meta.get("superseded_by"):
        view["superseded_by"] = meta["superseded_by"]
    if meta.get("blocked_by"):
        view["blocked_by"] = meta["blocked_by"]
    return view


def create_triplet(
    g: GraphMemory,
    *,
    subject: str,
    predicate: str,
    object_value: str,
    owner_id: str | None = None,
    metadata: JsonObject | None = None,
    fact_id: str | None = None,
) -> JsonObject:
    ns = g.namespace(owner_id)
    subj_name, obj_name = _name(subject, "subject"), _name(object_value, "object_value")
    pred = _predicate(predicate)
    meta = schemas.metadata(metadata, g.limits)
    with g.write(ns, "create_triplet") as w:
        source_fact = None
        if fact_id is not None:
            try:
                source_fact = g.node(w.session, fact_id, "fact_id")
            except NotFoundError as exc:
                raise ValidationError(exc.message, details=exc.details) from None
            if source_fact.object_type != "knowledge":
                raise ValidationError(f"fact_id: {fact_id} is an Entity, not a Fact")
        done = record_triplet(
            w.patch,
            subj_name,
            pred,
            obj_name,
            g.governance("create_triplet via graph toolset"),
            valid_from=w.now.isoformat(timespec="microseconds"),
            metadata={"graph": {"node_type": "Fact", "source": "mcp", "metadata": meta, "ttl_days": None}},
            entity_metadata={
                "graph": {"node_type": "Entity", "source": "mcp", "metadata": {}, "ttl_days": None}
            },
            source_fact=source_fact,
        )
    names = {done.subject.id: done.subject, done.object.id: done.object}
    if done.existing:
        return ok(triplet=triplet_view(done.fact, names, ns), existing=True)
    view = triplet_view(done.fact, names, ns)
    view["superseded"] = [o.id for o in done.settlement.supersede]
    return ok(triplet=view)


def search_triplets(
    g: GraphMemory,
    *,
    subject: str | None = None,
    predicate: str | None = None,
    object_value: str | None = None,
    owner_id: str | None = None,
    limit: int = 100,
) -> JsonObject:
    """Current triplets (superseded ones are history) matching every filter given."""
    ns = g.namespace(owner_id)
    if not 1 <= limit <= 1000:
        raise ValidationError("limit must be between 1 and 1000")
    with g.read(ns) as session:
        groups: list[set[str]] = []
        if subject:
            groups.append(
                {
                    o
                    for _, o in session.find_keys(
                        [fact_subject_key(i) for i in _entity_ids(session, subject)]
                    )
                }
            )
        if object_value:
            groups.append(
                {
                    o
                    for _, o in session.find_keys(
                        [fact_object_key(i) for i in _entity_ids(session, object_value)]
                    )
                }
            )
        if predicate:
            groups.append({o for _, o in session.find_keys([fact_predicate_key(_predicate(predicate))])})
        if groups:
            ids = sorted(set.intersection(*groups))
        else:
            objs = session.list_objects(
                object_types=["knowledge"], kinds=["fact"], statuses=list(schemas.LIVE), limit=limit * 5
            )
            ids = [o.id for o in objs if o.payload.get("subject") and o.payload.get("predicate")]
        facts = [
            f
            for f in select_facts(session, ids, as_of=None, include_superseded=False)
            if f.payload.get("subject") and f.payload.get("predicate")
        ][:limit]
        refs = {str(f.payload.get(k)) for f in facts for k in ("subject", "object") if f.payload.get(k)}
        names = session.get_objects(sorted(refs))
    return ok(triplets=[triplet_view(f, names, ns) for f in facts], count=len(facts))
