"""create_node, get_node, update_node, delete_node, mark_outdated, get_node_change_history."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from memory_substrate.errors import NotFoundError, ValidationError
from memory_substrate.graph.resolve import EntityResolver
from memory_substrate.graphmem import schemas as V
from memory_substrate.graphmem.edges import canonical_relation, similar_facts
from memory_substrate.graphmem.errors import ok
from memory_substrate.graphmem.service import EVIDENCE_STATUS, MEMORY_SOURCE, GraphMemory, Write
from memory_substrate.indexing import embedding_text
from memory_substrate.lookup_keys import fact_object_key, fact_subject_key
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.taxonomy import normalize_name
from memory_substrate.util import new_id, now_iso

_TYPE = re.compile(r"^[A-Za-z0-9_ \-]{1,64}$")
MAX_LINKS = 100
MAX_HISTORY = 1000


def _title(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else text
    return first[:200]


def entity_kind(label: str | None) -> str:
    """An entity's kind from a spec-002 type label ("PERSON" -> "person"); untyped -> "unspecified"."""
    if label is None or not str(label).strip():
        return "unspecified"
    if not _TYPE.match(str(label)):
        raise ValidationError(f"entity type {label!r} is invalid: use letters, digits, spaces, '-' or '_'")
    return re.sub(r"[\s\-]+", "_", str(label).strip().lower())


def _graph_meta(source: str, metadata: dict[str, Any], ttl_days: float | None, node_type: str) -> dict[str, Any]:
    return {"node_type": node_type, "source": source, "metadata": metadata, "ttl_days": ttl_days}


def _source(value: str | None) -> str | None:
    if value is not None and not (0 < len(value) <= 200):
        raise ValidationError("source must be 1-200 characters")
    return value


def _threshold(value: float | None, default: float, field: str) -> float:
    t = default if value is None else value
    if not -1.0 <= t <= 1.0:
        raise ValidationError(f"{field} must be between -1 and 1 (cosine similarity)")
    return t


def _links(links: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    out = []
    for i, link in enumerate(links or []):
        if not isinstance(link, dict) or not isinstance(link.get("node_id"), str) or not isinstance(link.get("relation_type"), str):
            raise ValidationError(f"links[{i}] must be an object with node_id and relation_type strings")
        extra = set(link) - {"node_id", "node_type", "relation_type"}
        if extra:
            raise ValidationError(f"links[{i}]: unknown field(s) {', '.join(sorted(extra))}")
        V.relation_type(link["relation_type"])
        if link.get("node_type") is not None:
            V.node_type(str(link["node_type"]))
        out.append(link)
    if len(out) > MAX_LINKS:
        raise ValidationError(f"links: at most {MAX_LINKS} per call")
    return out


def create_node(
    g: GraphMemory,
    *,
    text: str | None,
    node_type: str = "Fact",
    owner_id: str | None = None,
    source: str = "mcp",
    metadata: dict[str, Any] | None = None,
    status: str | None = None,
    ttl_days: float | None = None,
    expires_at: int | None = None,
    auto_link: bool = True,
    semantic_threshold: float | None = None,
    links: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    ns = g.namespace(owner_id)
    label = V.node_type(node_type)
    body = V.text(text, g.limits)
    meta = V.metadata(metadata, g.limits)
    lifecycle = V.STATUS_TO_LIFECYCLE[V.status(status) or "active"][0]
    _source(source)
    wanted_links = _links(links)
    threshold = _threshold(semantic_threshold, g.limits.similarity_threshold, "semantic_threshold")
    exp = V.expiry(ttl_days, expires_at, g.limits, g.now())
    graph = _graph_meta(source, meta, ttl_days if expires_at is None else None, label)
    sys_meta: dict[str, Any] = {"evidence_status": EVIDENCE_STATUS, "graph": graph}
    if exp:
        sys_meta["expires_at"] = exp
    with g.write(ns, "create_node") as w:
        if label == "Fact":
            obj = MemoryObject(
                id=new_id("knowledge"), object_type="knowledge", kind="fact", status=lifecycle, title=_title(body),
                summary=body, memory_source=MEMORY_SOURCE, reason=f"create_node via graph toolset (source {source})",
                scope_refs=[g.limits.graph_scope], metadata=sys_meta,
            )
        else:
            type_label = meta.get("type") or meta.get("entity_type")
            kind = entity_kind(str(type_label) if type_label is not None else None)
            existing = _existing_entity(w, kind, body)
            if existing is not None:
                return ok(node=V.node_view(existing, ns), existing=True, edges=[])
            graph["type_label"] = type_label
            obj = MemoryObject(
                id=new_id("entity"), object_type="entity", kind=kind, status=lifecycle, title=body.strip(),
                summary=f"{kind}: {body.strip()}", memory_source=MEMORY_SOURCE,
                reason=f"create_node via graph toolset (source {source})", scope_refs=[g.limits.graph_scope],
                payload={"name": body.strip(), "entity_type": kind, "aliases": []}, metadata=sys_meta,
            )
        created = w.patch.create(obj)
        edges = _link_edges(w, created, wanted_links)
        emb = g.embedder()
        if auto_link and label == "Fact" and emb is not None:
            vec = emb.embed_documents([embedding_text(created)])[0]
            for other, score in similar_facts(w.session, emb, vec, threshold=threshold, limit=10, exclude={created.id}):
                edges.append(canonical_relation("SIMILAR_TO", created.id, other.id,
                                                {"score": round(score, 4), "auto_link": True}, now_iso()))
        if edges:
            w.patch.relate(edges, object_id=created.id)
    return ok(node=V.node_view(created, ns), edges=[V.edge_view(r) for r in edges])


def _existing_entity(w: Write, kind: str, name: str) -> MemoryObject | None:
    """The entity this name and type already denote (spec 002 dedups entities), resolved by the
    knowledge graph's ``EntityResolver``: the rule extraction uses, so a node created here and an
    entity extracted from a conversation are one entity. Its exact-name and alias passes only: the
    caller names the entity outright, and a doubtful semantic match would merge two things."""
    found = EntityResolver(w.session, None).resolve(name.strip(), kind, [])
    return w.session.get_object(found.entity_id) if found.entity_id else None


def _link_edges(w: Write, created: MemoryObject, links: list[dict[str, Any]]) -> list[Relation]:
    edges = []
    for i, link in enumerate(links):
        try:
            target = GraphMemory.node(w.session, link["node_id"], f"links[{i}].node_id")
        except NotFoundError as exc:
            raise ValidationError(exc.message, details=exc.details) from None
        if link.get("node_type") and V.node_type(str(link["node_type"])) != V.node_type_of(target):
            raise ValidationError(f"links[{i}]: node {target.id} is a {V.node_type_of(target)}, not a {link['node_type']}")
        edges.append(canonical_relation(link["relation_type"], created.id, target.id, {}, now_iso()))
    return edges


def get_node(g: GraphMemory, *, node_id: str, owner_id: str | None = None) -> dict[str, Any]:
    ns = g.namespace(owner_id)
    with g.read(ns) as session:
        return ok(node=V.node_view(g.node(session, node_id), ns))


def update_node(
    g: GraphMemory,
    *,
    node_id: str,
    owner_id: str | None = None,
    text: str | None = None,
    source: str | None = None,
    metadata: dict[str, Any] | None = None,
    status: str | None = None,
    ttl_days: float | None = None,
    expires_at: int | None = None,
    entity_type: str | None = None,
    versioning: bool = False,
) -> dict[str, Any]:
    ns = g.namespace(owner_id)
    if text is not None:
        V.text(text, g.limits)
    meta = V.metadata(metadata, g.limits) if metadata is not None else None
    V.status(status)
    _source(source)
    exp = V.expiry(ttl_days, expires_at, g.limits, g.now()) if (ttl_days is not None or expires_at is not None) else None
    if all(v is None for v in (text, source, metadata, status, ttl_days, expires_at, entity_type)):
        raise ValidationError("nothing to update: give text, source, metadata, status, ttl_days, expires_at or entity_type")
    with g.write(ns, "update_node") as w:
        obj = _visible_or_revived(g, w, node_id, exp)
        before = V.node_view(obj, ns)
        if obj.status == "expired" and status is None:
            status = "active"  # swept by the expire sweep, revived by a later expiry
        new = apply_update(obj, text=text, source=source, metadata=meta, status=status, ttl_days=ttl_days,
                           expires_at=expires_at, exp=exp, entity_type=entity_type)
        after = V.node_view(new, ns)
        changes: dict[str, Any] = {
            k: {"from": before[k], "to": after[k]}
            for k in ("text", "source", "metadata", "status", "ttl_days", "expires_at", "type", "lifecycle_status")
            if k in after and before.get(k) != after.get(k)
        }
        if versioning:
            changes["versioning"] = True
            changes["previous_version"] = obj.to_dict()  # the whole previous object: a kept version
        updated = w.patch.update(new, action="version" if versioning else "update", changes=changes)
    return ok(node=V.node_view(updated, ns))


def _visible_or_revived(g: GraphMemory, w: Write, node_id: str, exp: str | None) -> MemoryObject:
    """The node to update. An expired node does not exist for updates, as for every read, except
    when the update moves its expiry later (into the future): that revives it (docs/graph-toolset.md)."""
    try:
        return g.node(w.session, node_id)
    except NotFoundError:
        if exp is None:
            raise
        obj = w.raw.get_object(node_id) if node_id else None
        if obj is None or not V.is_graph_node(obj):
            raise
        return obj


def apply_update(
    obj: MemoryObject,
    *,
    text: str | None,
    source: str | None,
    metadata: dict[str, Any] | None,
    status: str | None,
    ttl_days: float | None,
    expires_at: int | None,
    exp: str | None,
    entity_type: str | None,
) -> MemoryObject:
    graph = dict(obj.metadata.get("graph") or {})
    sys_meta = dict(obj.metadata)
    new = obj
    if text is not None:
        if obj.object_type == "knowledge":
            new = replace(new, title=_title(text), summary=text)
        else:
            old = obj.title
            aliases = list(obj.payload.get("aliases") or [])
            if normalize_name(old) != normalize_name(text) and old not in aliases:
                aliases.append(old)  # a renamed entity still resolves by its old name
            new = replace(new, title=text.strip(), payload={**obj.payload, "name": text.strip(), "aliases": aliases})
    if entity_type is not None:
        if obj.object_type == "knowledge":
            raise ValidationError("entity_type applies to Entity nodes only")
        kind = entity_kind(entity_type)
        graph["type_label"] = entity_type
        new = replace(new, kind=kind, payload={**new.payload, "entity_type": kind}, summary=f"{kind}: {new.title}")
    if source is not None:
        graph["source"] = source
    if metadata is not None:
        graph["metadata"] = metadata
    if status is not None and obj.status not in V.STATUS_TO_LIFECYCLE[status]:
        new = replace(new, status=V.STATUS_TO_LIFECYCLE[status][0])
    if exp is not None:
        sys_meta["expires_at"] = exp
        graph["ttl_days"] = ttl_days if expires_at is None else None
    sys_meta["graph"] = graph
    return replace(new, metadata=sys_meta)


def mark_outdated(g: GraphMemory, *, fact_id: str, owner_id: str | None = None, reason: str | None = None) -> dict[str, Any]:
    ns = g.namespace(owner_id)
    if reason is not None and len(reason) > g.limits.max_text_length:
        raise ValidationError(f"reason too long (max {g.limits.max_text_length} chars)")
    with g.write(ns, "mark_outdated", reason) as w:
        obj = g.node(w.session, fact_id, "fact_id")
        if obj.status in V.STATUS_TO_LIFECYCLE["outdated"]:
            return ok(node=V.node_view(obj, ns), unchanged=True)
        meta = {**obj.metadata, "outdated_reason": reason}
        updated = w.patch.set_status(replace(obj, metadata=meta), "stale", reason or "marked outdated via graph toolset")
    return ok(node=V.node_view(updated, ns))


def delete_node(g: GraphMemory, *, node_id: str, owner_id: str | None = None) -> dict[str, Any]:
    """Delete a node, its derived rows and its edges. Deleting an entity also deletes the
    triplets (structured facts) it is the subject or object of, as deleting a node deletes its
    edges in a graph database; other objects that name it in subject/related refs lose the ref."""
    ns = g.namespace(owner_id)
    with g.write(ns, "delete_node") as w:
        # An expired node does not exist here either, as for get_node and update_node (the expire
        # sweep archives it); what a live entity takes with it is found expired or not.
        obj = g.node(w.session, node_id)
        raw_session = w.raw
        doomed = [obj]
        if obj.object_type in ("entity", "node"):
            keys = [fact_subject_key(obj.id), fact_object_key(obj.id)]
            fact_ids = sorted({oid for _, oid in raw_session.find_keys(keys)} - {obj.id})
            doomed += list(raw_session.get_objects(fact_ids).values())
        gone = {o.id for o in doomed}
        referrers = {r.origin_id for r in raw_session.relations_of(sorted(gone), limit=100_000)
                     if r.origin_id and r.origin_id not in gone and r.target_id in gone}
        for ref_obj in raw_session.get_objects(sorted(r for r in referrers if r)).values():
            subj = [r for r in ref_obj.subject_refs if r not in gone]
            rel = [r for r in ref_obj.related_node_refs if r not in gone]
            if subj != ref_obj.subject_refs or rel != ref_obj.related_node_refs:
                w.patch.update(replace(ref_obj, subject_refs=subj, related_node_refs=rel), action="unlink",
                               changes={"removed_refs": sorted(gone & (set(ref_obj.subject_refs) | set(ref_obj.related_node_refs)))})
        for o in doomed:
            w.patch.delete(o, f"delete_node {node_id}" if o.id != node_id else "delete_node")
    return ok(deleted_ids=[o.id for o in doomed])


def get_node_change_history(g: GraphMemory, *, node_id: str, owner_id: str | None = None) -> dict[str, Any]:
    """Versions newest first, read from the audit events of every patch that touched the node
    (either toolset). Works for a deleted node too: its history outlives it."""
    ns = g.namespace(owner_id)
    with g.runtime(ns).read_with_expired() as session:
        events = session.list_events(object_id=node_id, limit=MAX_HISTORY) if node_id else []
        current = session.get_object(node_id) if node_id else None
    if not events or (current is not None and not V.is_graph_node(current)):
        raise NotFoundError(f"node_id: node {node_id!r} not found", details={"id": node_id})
    versions = []
    for e in events:  # newest first
        data = e.data or {}
        raw_changes = data.get("changes")
        changes: dict[str, Any] = raw_changes if isinstance(raw_changes, dict) else {}
        entry: dict[str, Any] = {
            "version": data.get("version", 1 if e.action == "create" else None),
            "action": e.action,
            "changed_at": V.ms(e.created_at),
            "patch_id": e.patch_id,
            "event_id": e.id,
            "changes": {k: v for k, v in changes.items() if k != "previous_version"},
        }
        if e.action == "relate" or e.action == "unrelate":
            entry["changes"] = {"relation": data.get("relation")}
        previous = changes.get("previous_version") or data.get("snapshot")
        if isinstance(previous, dict):
            entry["previous"] = V.node_view(MemoryObject.from_dict(previous), ns)
        versions.append(entry)
    return ok(node_id=node_id, deleted=current is None, versions=versions,
              current=V.node_view(current, ns) if current is not None else None)
