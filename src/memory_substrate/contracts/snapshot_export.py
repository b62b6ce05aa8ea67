"""Write a namespace (or some of its objects) as a ``markitect.memory.graph.v1`` snapshot.

Objects become nodes (kinds mapped by ``mapping.node_kind_for``), segments become ``turn``
(conversation messages) or ``evidence`` nodes that ``belongs_to`` their source, relations
become edges, audit events become events. Everything this store needs to rebuild an object
travels in the node's ``attributes`` (object type and kind, refs, payload, metadata), so an
export imported into an empty namespace exports again to the same nodes, edges and events.

The snapshot is deterministic: no export timestamp, nodes ordered by (created_at, id), edges
by id, events by (at, id).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import cast

from memory_substrate.contracts import vocab
from memory_substrate.contracts.documents import GraphDocument, GraphEdge, GraphEvent, GraphNode
from memory_substrate.contracts.mapping import edge_kind_for, event_kind_for, node_kind_for
from memory_substrate.contracts.pack import digest
from memory_substrate.contracts.results import SnapshotReport
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject, Segment
from memory_substrate.storage.base import StoreSession

IMPORT_KEY = "graph_import"  # object metadata written by the importer, never exported
IMPORT_MODE = "graph_snapshot"
IMPORT_EVENT = "graph_event"
_ALL = 2**62
_PAGE = 1000
REF_FIELDS = ("subject_refs", "source_refs", "related_node_refs", "evidence_refs")


def segment_node_id(source_id: str, segment_id: str) -> str:
    return f"{source_id}#{segment_id}"


def object_node(obj: MemoryObject) -> tuple[GraphNode, bool]:
    """(node, exact) for one object; ``exact`` is False when its kind was approximated."""
    kind, exact = node_kind_for(obj.object_type, obj.kind, conversation=obj.kind == "conversation")
    found = obj.metadata.get(IMPORT_KEY)
    origin: JsonObject = found if isinstance(found, dict) else {}
    node: GraphNode = {"id": obj.id, "kind": kind, "title": obj.title or obj.id}
    if obj.summary:
        node["text"] = obj.summary
    if obj.status:
        node["status"] = obj.status
    for key in ("created_at", "valid_from", "valid_until"):
        if getattr(obj, key):
            node[key] = getattr(obj, key)
    if obj.confidence is not None:
        node["confidence"] = obj.confidence
    if obj.scope_refs:
        node["tags"] = list(obj.scope_refs)
    provenance: JsonObject = {
        "memory_source": origin.get("memory_source") or obj.memory_source,
        "reason": obj.reason,
    }
    provenance = {k: v for k, v in provenance.items() if v}
    if provenance:
        node["provenance"] = provenance
    attributes: JsonObject = {"object_type": obj.object_type, "object_kind": obj.kind}
    for key in (*REF_FIELDS, "payload"):
        if getattr(obj, key):
            attributes[key] = getattr(obj, key)
    metadata = {k: v for k, v in obj.metadata.items() if k != IMPORT_KEY}
    if metadata:
        attributes["metadata"] = metadata
    node["attributes"] = attributes
    return node, exact


def segment_node(seg: Segment, conversation: bool) -> GraphNode:
    first_line = seg.text.strip().split("\n", 1)[0][:80]
    node: GraphNode = {
        "id": segment_node_id(seg.source_id, seg.id),
        "kind": "turn" if conversation else "evidence",
        "title": first_line or seg.id,
        "text": seg.text,
    }
    if seg.created_at:
        node["created_at"] = seg.created_at
    attributes: JsonObject = {
        "object_type": "segment",
        "source_id": seg.source_id,
        "segment_id": seg.id,
        "ordinal": seg.ordinal,
        "locator": seg.locator,
        "hash": seg.hash,
    }
    if seg.metadata:
        attributes["metadata"] = seg.metadata
    node["attributes"] = attributes
    return node


def _all_objects(session: StoreSession, ids: Sequence[str] | None) -> list[MemoryObject]:
    if ids is not None:
        return list(session.get_objects(list(dict.fromkeys(ids))).values())
    out: list[MemoryObject] = []
    offset = 0
    while page := session.list_objects(order="created_asc", limit=_PAGE, offset=offset):
        offset += len(page)
        out.extend(page)
    return out


def _object_nodes(objects: list[MemoryObject]) -> tuple[list[GraphNode], Counter[tuple[str, str, str]]]:
    """The objects' nodes, and the kinds that had no exact node kind (counted)."""
    nodes: list[GraphNode] = []
    approximated: Counter[tuple[str, str, str]] = Counter()
    for obj in objects:
        node, exact = object_node(obj)
        nodes.append(node)
        if not exact:
            approximated[(obj.object_type, obj.kind, node["kind"])] += 1
    return nodes, approximated


def _segment_nodes(
    session: StoreSession, objects: list[MemoryObject], ids: Sequence[str] | None
) -> tuple[list[GraphNode], list[GraphEdge]]:
    """The exported sources' segments as nodes, each with its ``belongs_to`` edge."""
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    sources = {o.id: o for o in objects if o.object_type == "source"}
    if ids is None:
        segs: list[Segment] = list(session.iter_segments()) if sources else []
    else:
        segs = [s for sid in sorted(sources) for s in session.get_segments(sid)]
    for seg in segs:
        if seg.source_id not in sources:
            continue
        node = segment_node(seg, sources[seg.source_id].kind == "conversation")
        nodes.append(node)
        edges.append(
            {
                "id": f"{node['id']}>belongs_to",
                "kind": "belongs_to",
                "source": node["id"],
                "target": seg.source_id,
                "attributes": {"derivation": "segment_of"},
            }
        )
    return nodes, edges


def _relation_edges(
    session: StoreSession, object_ids: set[str], node_ids: set[str], whole: bool
) -> tuple[list[GraphEdge], int]:
    """Edges of the relations between exported nodes, and how many had an end outside."""
    edges: list[GraphEdge] = []
    dangling = 0
    relations = (
        session.list_relations(limit=_ALL) if whole else session.relations_of(sorted(object_ids), limit=_ALL)
    )
    for rel in {r.id: r for r in relations}.values():
        if rel.source_id not in node_ids or rel.target_id not in node_ids:
            dangling += 1
            continue
        found = rel.payload.get("relation_schema")
        schema: JsonObject = found if isinstance(found, dict) else {}  # a dict wherever relations are made
        attributes: JsonObject = {
            "rel_type": rel.rel_type,
            "derivation": schema.get("derivation"),
            "origin": rel.origin_id,
            "field": schema.get("origin_field"),
            "properties": rel.payload.get("properties") or None,
        }
        edges.append(
            {
                "id": rel.id,
                "kind": edge_kind_for(rel.rel_type),
                "source": rel.source_id,
                "target": rel.target_id,
                "attributes": {k: v for k, v in attributes.items() if v is not None},
            }
        )
    return edges, dangling


def _events(
    session: StoreSession, node_ids: set[str], edge_ids: set[str]
) -> tuple[list[GraphEvent], Counter[str]]:
    """Events about exported nodes and edges (an imported snapshot's own events as they were),
    and what was skipped, by reason."""
    out_events: list[GraphEvent] = []
    skipped = Counter[str]()
    import_patches = {p.id for p in session.list_patches(limit=_ALL) if p.mode == IMPORT_MODE}
    for ev in session.list_events(limit=_ALL):
        if ev.patch_id in import_patches:
            if ev.action != IMPORT_EVENT:
                skipped["import_bookkeeping"] += 1
                continue
            # The importer writes a graph_event with the snapshot's own event, valid graph.v1.
            original = cast(GraphEvent, dict(ev.data["event"]))
            original["refs"] = [r for r in original["refs"] if r in node_ids or r in edge_ids]
            if original["refs"]:
                out_events.append(original)
            else:
                skipped["not_about_exported_nodes"] += 1
            continue
        if ev.object_id not in node_ids:
            skipped["not_about_exported_nodes"] += 1
            continue
        out_events.append(
            {
                "id": ev.id,
                "kind": event_kind_for(ev.action, ev.data),
                "at": ev.created_at,
                "refs": [ev.object_id],
                "data": {"action": ev.action, "detail": ev.data},
            }
        )
    out_events.sort(key=lambda e: (e["at"], e["id"]))
    return out_events, skipped


def export_snapshot(
    session: StoreSession,
    *,
    ids: Sequence[str] | None = None,
    segments: bool = True,
    events: bool = True,
    snapshot_id: str | None = None,
) -> tuple[GraphDocument, SnapshotReport]:
    """(snapshot, report) for the session's namespace, or only the objects ``ids``.

    The report counts what was approximated or left out: object kinds without an exact node
    kind, relations whose ends are not in the snapshot, events about things that are not nodes.
    """
    objects = sorted(_all_objects(session, ids), key=lambda o: (o.created_at, o.id))
    nodes, approximated = _object_nodes(objects)
    edges: list[GraphEdge] = []
    if segments:
        seg_nodes, seg_edges = _segment_nodes(session, objects, ids)
        nodes += seg_nodes
        edges += seg_edges
    node_ids = {n["id"] for n in nodes}
    rel_edges, dangling = _relation_edges(session, {o.id for o in objects}, node_ids, ids is None)
    edges = sorted(edges + rel_edges, key=lambda e: e["id"])
    out_events, skipped = (
        _events(session, node_ids, {e["id"] for e in edges}) if events else ([], Counter[str]())
    )

    namespace = session.namespace
    snapshot: GraphDocument = {
        "schema_version": vocab.GRAPH_V1,
        "id": snapshot_id or f"memory-substrate:{namespace}",
        "title": f"memory-substrate namespace {namespace}",
        "nodes": nodes,
        "edges": edges,
        "events": out_events,
        "metadata": {"exporter": "memory-substrate", "mapping": "docs/contracts.md#store-mapping"},
    }
    report: SnapshotReport = {
        "namespace": namespace,
        "snapshot_id": snapshot["id"],
        "counts": {"nodes": len(nodes), "edges": len(edges), "events": len(out_events)},
        "approximated": [
            {"object_type": t, "kind": k, "node_kind": n, "count": c}
            for (t, k, n), c in sorted(approximated.items())
        ],
        "left_out": {"relations_with_an_end_outside": dangling, **dict(sorted(skipped.items()))},
        "content_sha256": digest({"nodes": nodes, "edges": edges, "events": out_events}),
    }
    return snapshot, report
