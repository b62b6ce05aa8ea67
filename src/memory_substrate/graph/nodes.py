"""Graph nodes and edges stated directly by a caller (the graph toolset), not extracted.

The graph toolset (``graphmem/``) checks arguments and shapes its answers; what a write does to
the knowledge graph is here, beside extraction's (``apply.py``), with the same rules: an entity
resolves through ``EntityResolver`` (one dedup rule), a claim settles through ``claims.settle``
(``triplets.py``: one claims rule), an edge is a canonical relation (``canonical.py``), and every
write goes into the caller's ``Patch`` (one unit of work, ``Runtime.write``). ``Governance`` says
who states the write (memory source, evidence status, scope), as it does for an extraction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from memory_substrate.embed.base import Embedder
from memory_substrate.errors import ValidationError
from memory_substrate.graph.apply import Governance
from memory_substrate.graph.canonical import canonical_relation
from memory_substrate.graph.resolve import EntityResolver
from memory_substrate.graph.stored import listed
from memory_substrate.indexing import embedding_text
from memory_substrate.json_types import JsonObject
from memory_substrate.lookup_keys import fact_object_key, fact_subject_key
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject, Relation
from memory_substrate.patch import Patch
from memory_substrate.storage.base import StoreSession
from memory_substrate.taxonomy import normalize_name
from memory_substrate.util import new_id, now_iso, object_type_of

AUTO_LINKS = 10  # SIMILAR_TO edges a new fact gets at most


def title_of(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else text
    return first[:200]


def _metadata(gov: Governance, extra: Mapping[str, object]) -> JsonObject:
    return {"evidence_status": gov.evidence_status, **extra}


def create_fact(
    patch: Patch, text: str, gov: Governance, *, status: str, metadata: Mapping[str, object]
) -> MemoryObject:
    """A new fact node holding ``text``; ``metadata`` is added after the evidence status."""
    return patch.create(
        MemoryObject(
            id=new_id("knowledge"),
            object_type="knowledge",
            kind="fact",
            status=status,
            title=title_of(text),
            summary=text,
            memory_source=gov.memory_source,
            reason=gov.reason,
            scope_refs=list(gov.scope_refs),
            metadata=_metadata(gov, metadata),
        )
    )


def create_entity(
    patch: Patch, name: str, kind: str, gov: Governance, *, status: str, metadata: Mapping[str, object]
) -> MemoryObject:
    name = name.strip()
    return patch.create(
        MemoryObject(
            id=new_id("entity"),
            object_type="entity",
            kind=kind,
            status=status,
            title=name,
            summary=f"{kind}: {name}",
            memory_source=gov.memory_source,
            reason=gov.reason,
            scope_refs=list(gov.scope_refs),
            payload={"name": name, "entity_type": kind, "aliases": []},
            metadata=_metadata(gov, metadata),
        )
    )


def existing_entity(session: StoreSession, name: str, kind: str) -> MemoryObject | None:
    """The entity this name and kind already denote, by ``EntityResolver``: the rule extraction
    uses, so a node created directly and an entity extracted from a conversation are one entity.
    Its exact-name and alias passes only: the caller names the entity outright, and a doubtful
    semantic match would merge two things."""
    found = EntityResolver(session, None).resolve(name.strip(), kind, [])
    return session.get_object(found.entity_id) if found.entity_id else None


def similar_facts(
    session: StoreSession,
    embedder: Embedder,
    vector: np.ndarray,
    *,
    threshold: float,
    limit: int,
    exclude: set[str],
) -> list[tuple[MemoryObject, float]]:
    """Live facts whose stored vector scores at least ``threshold`` against ``vector``, best first."""
    hits = session.vector_search(
        embedder.name, vector, owner_type="object", limit=limit * 4 + len(exclude) + 10
    )
    wanted = [
        (i, s) for i, s in hits if s >= threshold and i not in exclude and object_type_of(i) == "knowledge"
    ]
    objs = session.get_objects([i for i, _ in wanted])
    out = [(objs[i], float(s)) for i, s in wanted if i in objs and objs[i].status in LIVE_KNOWLEDGE_STATUSES]
    return out[:limit]


def attach(
    patch: Patch,
    node: MemoryObject,
    links: list[tuple[str, str]],
    *,
    embedder: Embedder | None = None,
    threshold: float = 1.0,
) -> list[Relation]:
    """Canonical edges from a new node: one per ``(relation type, target id)`` of ``links``, then,
    with an ``embedder``, SIMILAR_TO edges to the live facts it resembles at ``threshold`` or more
    (``auto_link``; the node's embedding is computed once, and a caching embedder reuses it when the
    patch stores the vector). All are audited on the node."""
    stamp = now_iso()
    edges = [canonical_relation(rel_type, node.id, target, {}, stamp) for rel_type, target in links]
    if embedder is not None:
        vec = embedder.embed_documents([embedding_text(node)])[0]
        edges += [
            canonical_relation(
                "SIMILAR_TO", node.id, other.id, {"score": round(score, 4), "auto_link": True}, stamp
            )
            for other, score in similar_facts(
                patch.session, embedder, vec, threshold=threshold, limit=AUTO_LINKS, exclude={node.id}
            )
        ]
    if edges:
        patch.relate(edges, object_id=node.id)
    return edges


def relations_between(session: StoreSession, a: str, b: str, rel_type: str | None = None) -> list[Relation]:
    """Stored relations from ``a`` to ``b`` (one direction), of ``rel_type`` when given."""
    rels = session.relations_among([a, b])
    return [
        r
        for r in rels
        if r.source_id == a and r.target_id == b and (rel_type is None or r.rel_type == rel_type)
    ]


def relate(
    patch: Patch, rel_type: str, source_id: str, target_id: str, properties: Mapping[str, object]
) -> Relation:
    """The canonical ``rel_type`` edge from ``source_id`` to ``target_id`` (stating it again
    replaces its properties), audited on its source."""
    rel = canonical_relation(rel_type, source_id, target_id, properties, now_iso())
    patch.relate([rel], object_id=source_id)
    return rel


def unrelate(patch: Patch, from_id: str, to_id: str, rel_type: str | None) -> tuple[int, list[Relation]]:
    """Remove the canonical edges from ``from_id`` to ``to_id`` (of one type when given). Edges
    derived from an object's own fields (a fact's subject, a triplet's predicate) are part of that
    object and stay: they are returned, with the number removed."""
    rels = relations_between(patch.session, from_id, to_id, rel_type)
    canonical = [r for r in rels if r.origin_id is None]
    if canonical:
        patch.unrelate(canonical, object_id=from_id)
    return len(canonical), [r for r in rels if r.origin_id is not None]


def revised(
    obj: MemoryObject,
    *,
    text: str | None = None,
    kind: str | None = None,
    status: str | None = None,
    graph: Mapping[str, object] | None = None,
    expires_at: str | None = None,
) -> MemoryObject:
    """``obj`` with a new text (a renamed entity keeps its old name as an alias, so it still
    resolves by it), kind (entities), lifecycle status, graph-toolset attributes and expiry."""
    new = obj
    if text is not None:
        if obj.object_type == "knowledge":
            new = replace(new, title=title_of(text), summary=text)
        else:
            old = obj.title
            aliases = listed(obj.payload.get("aliases"))
            if normalize_name(old) != normalize_name(text) and old not in aliases:
                aliases.append(old)
            new = replace(
                new, title=text.strip(), payload={**obj.payload, "name": text.strip(), "aliases": aliases}
            )
    if kind is not None:
        if obj.object_type == "knowledge":
            raise ValidationError("entity_type applies to Entity nodes only")
        new = replace(
            new, kind=kind, payload={**new.payload, "entity_type": kind}, summary=f"{kind}: {new.title}"
        )
    if status is not None:
        new = replace(new, status=status)
    meta = dict(obj.metadata)
    if expires_at is not None:
        meta["expires_at"] = expires_at
    if graph is not None:
        meta["graph"] = graph
    return replace(new, metadata=meta)


def save_revision(
    patch: Patch, previous: MemoryObject, new: MemoryObject, changes: JsonObject, *, versioning: bool
) -> MemoryObject:
    """Write a revision; ``versioning`` keeps the whole previous object in its audit event."""
    if versioning:
        changes = {**changes, "versioning": True, "previous_version": previous.to_dict()}
    return patch.update(new, action="version" if versioning else "update", changes=changes)


def mark_outdated(patch: Patch, obj: MemoryObject, reason: str | None) -> MemoryObject:
    meta = {**obj.metadata, "outdated_reason": reason}
    return patch.set_status(
        replace(obj, metadata=meta), "stale", reason or "marked outdated via graph toolset"
    )


def delete_node(patch: Patch, everything: StoreSession, obj: MemoryObject) -> list[MemoryObject]:
    """Delete a node, its derived rows and its edges. Deleting an entity also deletes the triplets
    (structured facts) it is the subject or object of, as deleting a node deletes its edges in a
    graph database; other objects that name it in subject/related refs lose the ref. What a live
    node takes with it is found expired or not (``everything``: a session that sees expired rows)."""
    doomed = [obj]
    if obj.object_type in ("entity", "node"):
        keys = [fact_subject_key(obj.id), fact_object_key(obj.id)]
        fact_ids = sorted({oid for _, oid in everything.find_keys(keys)} - {obj.id})
        doomed += list(everything.get_objects(fact_ids).values())
    gone = {o.id for o in doomed}
    referrers = {
        r.origin_id
        for r in everything.relations_of(sorted(gone), limit=100_000)
        if r.origin_id and r.origin_id not in gone and r.target_id in gone
    }
    for ref_obj in everything.get_objects(sorted(r for r in referrers if r)).values():
        subj = [r for r in ref_obj.subject_refs if r not in gone]
        rel = [r for r in ref_obj.related_node_refs if r not in gone]
        if subj != ref_obj.subject_refs or rel != ref_obj.related_node_refs:
            patch.update(
                replace(ref_obj, subject_refs=subj, related_node_refs=rel),
                action="unlink",
                changes={
                    "removed_refs": sorted(
                        gone & (set(ref_obj.subject_refs) | set(ref_obj.related_node_refs))
                    )
                },
            )
    for o in doomed:
        patch.delete(o, f"delete_node {obj.id}" if o.id != obj.id else "delete_node")
    return doomed


def create_summary(
    patch: Patch, fact_ids: list[str], text: str, gov: Governance, *, metadata: Mapping[str, object]
) -> tuple[MemoryObject, list[Relation]]:
    """A new fact holding ``text``, with a SUMMARIZES edge to each summarised fact; every id must
    be a fact this session sees (``ValidationError`` naming ``fact_ids[i]`` otherwise)."""
    found = patch.session.get_objects(fact_ids)
    for i, fid in enumerate(fact_ids):
        obj = found.get(fid)
        if obj is None or obj.object_type != "knowledge":
            raise ValidationError(f"fact_ids[{i}]: fact {fid!r} not found", details={"id": fid})
    summary = create_fact(patch, text, gov, status="active", metadata=metadata)
    return summary, attach(patch, summary, [("SUMMARIZES", fid) for fid in fact_ids])
