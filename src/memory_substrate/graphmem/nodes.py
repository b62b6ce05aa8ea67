"""create_node, get_node, update_node, delete_node, mark_outdated, get_node_change_history."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from memory_substrate.errors import NotFoundError, ValidationError
from memory_substrate.graph import nodes as graph
from memory_substrate.graphmem import schemas
from memory_substrate.graphmem.errors import ok
from memory_substrate.graphmem.service import GraphMemory, Write
from memory_substrate.graphmem.view_types import GraphAttributes, HistoryEntry
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject

_TYPE = re.compile(r"^[A-Za-z0-9_ \-]{1,64}$")
MAX_LINKS = 100
MAX_HISTORY = 1000


def entity_kind(label: str | None) -> str:
    """An entity's kind from a graph-toolset type label ("PERSON" -> "person"); untyped -> "unspecified"."""
    if label is None or not str(label).strip():
        return "unspecified"
    if not _TYPE.match(str(label)):
        raise ValidationError(f"entity type {label!r} is invalid: use letters, digits, spaces, '-' or '_'")
    return re.sub(r"[\s\-]+", "_", str(label).strip().lower())


def graph_attributes(
    source: str, metadata: JsonObject, ttl_days: float | None, node_type: str
) -> GraphAttributes:
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


@dataclass(frozen=True)
class Link:
    """One ``links`` entry of ``create_node``, checked: ``node_type`` is as the caller gave it."""

    node_id: str
    relation_type: str
    node_type: object


def _links(links: list[JsonObject] | None) -> list[Link]:
    out = []
    for i, link in enumerate(links or []):
        fields: JsonObject = link if isinstance(link, dict) else {}
        node_id, rel_type = fields.get("node_id"), fields.get("relation_type")
        if not isinstance(node_id, str) or not isinstance(rel_type, str):
            raise ValidationError(f"links[{i}] must be an object with node_id and relation_type strings")
        extra = set(link) - {"node_id", "node_type", "relation_type"}
        if extra:
            raise ValidationError(f"links[{i}]: unknown field(s) {', '.join(sorted(extra))}")
        schemas.relation_type(rel_type)
        if link.get("node_type") is not None:
            schemas.node_type(str(link["node_type"]))
        out.append(Link(node_id, rel_type, link.get("node_type")))
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
    metadata: JsonObject | None = None,
    status: str | None = None,
    ttl_days: float | None = None,
    expires_at: int | None = None,
    auto_link: bool = True,
    semantic_threshold: float | None = None,
    links: list[JsonObject] | None = None,
) -> JsonObject:
    ns = g.namespace(owner_id)
    label = schemas.node_type(node_type)
    body = schemas.text(text, g.limits)
    meta = schemas.metadata(metadata, g.limits)
    lifecycle = schemas.STATUS_TO_LIFECYCLE[schemas.status(status) or "active"][0]
    _source(source)
    wanted_links = _links(links)
    threshold = _threshold(semantic_threshold, g.limits.similarity_threshold, "semantic_threshold")
    exp = schemas.expiry(ttl_days, expires_at, g.limits, g.now())
    attrs = graph_attributes(source, meta, ttl_days if expires_at is None else None, label)
    extra: JsonObject = {"graph": attrs, **({"expires_at": exp} if exp else {})}
    gov = g.governance(f"create_node via graph toolset (source {source})")
    with g.write(ns, "create_node") as w:
        if label == "Fact":
            created = graph.create_fact(w.patch, body, gov, status=lifecycle, metadata=extra)
        else:
            type_label = meta.get("type") or meta.get("entity_type")
            kind = entity_kind(str(type_label) if type_label is not None else None)
            existing = graph.existing_entity(w.session, body, kind)
            if existing is not None:
                return ok(node=schemas.node_view(existing, ns), existing=True, edges=[])
            attrs["type_label"] = type_label
            created = graph.create_entity(w.patch, body, kind, gov, status=lifecycle, metadata=extra)
        similar = g.embedder(ns) if auto_link and label == "Fact" else None
        edges = graph.attach(
            w.patch, created, _link_targets(w, wanted_links), embedder=similar, threshold=threshold
        )
    return ok(node=schemas.node_view(created, ns), edges=[schemas.edge_view(r) for r in edges])


def _link_targets(w: Write, links: list[Link]) -> list[tuple[str, str]]:
    """(relation type, target id) of each link, once its target is a node of the type it names."""
    out = []
    for i, link in enumerate(links):
        try:
            target = GraphMemory.node(w.session, link.node_id, f"links[{i}].node_id")
        except NotFoundError as exc:
            raise ValidationError(exc.message, details=exc.details) from None
        if link.node_type and schemas.node_type(str(link.node_type)) != schemas.node_type_of(target):
            raise ValidationError(
                f"links[{i}]: node {target.id} is a {schemas.node_type_of(target)}, not a {link.node_type}"
            )
        out.append((link.relation_type, target.id))
    return out


def get_node(g: GraphMemory, *, node_id: str, owner_id: str | None = None) -> JsonObject:
    ns = g.namespace(owner_id)
    with g.read(ns) as session:
        return ok(node=schemas.node_view(g.node(session, node_id), ns))


def update_node(
    g: GraphMemory,
    *,
    node_id: str,
    owner_id: str | None = None,
    text: str | None = None,
    source: str | None = None,
    metadata: JsonObject | None = None,
    status: str | None = None,
    ttl_days: float | None = None,
    expires_at: int | None = None,
    entity_type: str | None = None,
    versioning: bool = False,
) -> JsonObject:
    ns = g.namespace(owner_id)
    if text is not None:
        schemas.text(text, g.limits)
    meta = schemas.metadata(metadata, g.limits) if metadata is not None else None
    schemas.status(status)
    _source(source)
    exp = (
        schemas.expiry(ttl_days, expires_at, g.limits, g.now())
        if (ttl_days is not None or expires_at is not None)
        else None
    )
    if all(v is None for v in (text, source, metadata, status, ttl_days, expires_at, entity_type)):
        raise ValidationError(
            "nothing to update: give text, source, metadata, status, ttl_days, expires_at or entity_type"
        )
    with g.write(ns, "update_node") as w:
        obj = _visible_or_revived(g, w, node_id, exp)
        before: Mapping[str, object] = schemas.node_view(obj, ns)
        if obj.status == "expired" and status is None:
            status = "active"  # swept by the expire sweep, revived by a later expiry
        new = _revised(
            obj,
            text=text,
            source=source,
            metadata=meta,
            status=status,
            ttl_days=ttl_days,
            expires_at=expires_at,
            exp=exp,
            entity_type=entity_type,
        )
        after: Mapping[str, object] = schemas.node_view(new, ns)
        changes: JsonObject = {
            k: {"from": before[k], "to": after[k]}
            for k in (
                "text",
                "source",
                "metadata",
                "status",
                "ttl_days",
                "expires_at",
                "type",
                "lifecycle_status",
            )
            if k in after and before.get(k) != after.get(k)
        }
        updated = graph.save_revision(w.patch, obj, new, changes, versioning=versioning)
    return ok(node=schemas.node_view(updated, ns))


def _visible_or_revived(g: GraphMemory, w: Write, node_id: str, exp: str | None) -> MemoryObject:
    """The node to update. An expired node does not exist for updates, as for every read, except
    when the update moves its expiry later (into the future): that revives it (docs/graph-toolset.md)."""
    try:
        return g.node(w.session, node_id)
    except NotFoundError:
        if exp is None:
            raise
        obj = w.raw.get_object(node_id) if node_id else None
        if obj is None or not schemas.is_graph_node(obj):
            raise
        return obj


def _revised(
    obj: MemoryObject,
    *,
    text: str | None,
    source: str | None,
    metadata: JsonObject | None,
    status: str | None,
    ttl_days: float | None,
    expires_at: int | None,
    exp: str | None,
    entity_type: str | None,
) -> MemoryObject:
    """A graph-toolset update as a revision of the object (``graph.revised``): the node's
    ``metadata.graph`` attributes, its spec status mapped to a lifecycle status, its kind."""
    attrs = dict(schemas.graph_attributes_of(obj))
    kind = None
    if entity_type is not None:
        kind = entity_kind(entity_type)
        attrs["type_label"] = entity_type
    if source is not None:
        attrs["source"] = source
    if metadata is not None:
        attrs["metadata"] = metadata
    if exp is not None:
        attrs["ttl_days"] = ttl_days if expires_at is None else None
    lifecycle = None
    if status is not None and obj.status not in schemas.STATUS_TO_LIFECYCLE[status]:
        lifecycle = schemas.STATUS_TO_LIFECYCLE[status][0]
    return graph.revised(obj, text=text, kind=kind, status=lifecycle, graph=attrs, expires_at=exp)


def mark_outdated(
    g: GraphMemory, *, fact_id: str, owner_id: str | None = None, reason: str | None = None
) -> JsonObject:
    ns = g.namespace(owner_id)
    if reason is not None and len(reason) > g.limits.max_text_length:
        raise ValidationError(f"reason too long (max {g.limits.max_text_length} chars)")
    with g.write(ns, "mark_outdated", reason) as w:
        obj = g.node(w.session, fact_id, "fact_id")
        if obj.status in schemas.STATUS_TO_LIFECYCLE["outdated"]:
            return ok(node=schemas.node_view(obj, ns), unchanged=True)
        updated = graph.mark_outdated(w.patch, obj, reason)
    return ok(node=schemas.node_view(updated, ns))


def delete_node(g: GraphMemory, *, node_id: str, owner_id: str | None = None) -> JsonObject:
    """Delete a node, its derived rows and its edges, an entity's triplets too (``graph.delete_node``)."""
    ns = g.namespace(owner_id)
    with g.write(ns, "delete_node") as w:
        # An expired node does not exist here either, as for get_node and update_node (the expire
        # sweep archives it); what a live entity takes with it is found expired or not.
        doomed = graph.delete_node(w.patch, w.raw, g.node(w.session, node_id))
    return ok(deleted_ids=[o.id for o in doomed])


def get_node_change_history(g: GraphMemory, *, node_id: str, owner_id: str | None = None) -> JsonObject:
    """Versions newest first, read from the audit events of every patch that touched the node
    (either toolset). Works for a deleted node too: its history outlives it."""
    ns = g.namespace(owner_id)
    with g.runtime(ns).read_with_expired() as session:
        events = session.list_events(object_id=node_id, limit=MAX_HISTORY) if node_id else []
        current = session.get_object(node_id) if node_id else None
    if not events or (current is not None and not schemas.is_graph_node(current)):
        raise NotFoundError(f"node_id: node {node_id!r} not found", details={"id": node_id})
    versions: list[HistoryEntry] = []
    for e in events:  # newest first
        data = e.data or {}
        raw_changes = data.get("changes")
        changes: JsonObject = raw_changes if isinstance(raw_changes, dict) else {}
        entry: HistoryEntry = {
            "version": data.get("version", 1 if e.action == "create" else None),
            "action": e.action,
            "changed_at": schemas.ms(e.created_at),
            "patch_id": e.patch_id,
            "event_id": e.id,
            "changes": {k: v for k, v in changes.items() if k != "previous_version"},
        }
        if e.action == "relate" or e.action == "unrelate":
            entry["changes"] = {"relation": data.get("relation")}
        previous = changes.get("previous_version") or data.get("snapshot")
        if isinstance(previous, dict):
            entry["previous"] = schemas.node_view(MemoryObject.from_dict(previous), ns)
        versions.append(entry)
    return ok(
        node_id=node_id,
        deleted=current is None,
        versions=versions,
        current=schemas.node_view(current, ns) if current is not None else None,
    )
