"""create_relation, delete_relation, get_context, get_trace and create_summary_fact."""

from __future__ import annotations

from memory_substrate.errors import NotFoundError, ValidationError
from memory_substrate.graph import nodes as graph
from memory_substrate.graphmem import schemas
from memory_substrate.graphmem.errors import ok
from memory_substrate.graphmem.graphread import NodeGraph
from memory_substrate.graphmem.nodes import graph_attributes
from memory_substrate.graphmem.service import GraphMemory
from memory_substrate.graphmem.view_types import NodeRef, NodeView, TracePath
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject
from memory_substrate.storage.base import StoreSession

MAX_DEPTH = 5
MAX_NODES = 500
MAX_PATHS = 50
MAX_SUMMARISED = 200


def create_relation(
    g: GraphMemory,
    *,
    from_id: str,
    to_id: str,
    relation_type: str,
    owner_id: str | None = None,
    properties: JsonObject | None = None,
) -> JsonObject:
    ns = g.namespace(owner_id)
    schemas.relation_type(relation_type)
    props = schemas.metadata(properties, g.limits, "properties")
    if from_id == to_id:
        raise ValidationError("from_id and to_id must differ")
    with g.write(ns, "create_relation") as w:
        src = g.node(w.session, from_id, "from_id")
        tgt = g.node(w.session, to_id, "to_id")
        rel = graph.relate(w.patch, relation_type, src.id, tgt.id, props)
    return ok(relation_type=relation_type, relation=schemas.edge_view(rel))


def delete_relation(
    g: GraphMemory, *, from_id: str, to_id: str, owner_id: str | None = None, relation_type: str | None = None
) -> JsonObject:
    """Remove the edges from ``from_id`` to ``to_id`` (of one type when given). Edges derived
    from an object's own fields (a fact's subject, a triplet's predicate) are part of that
    object: change or delete the object instead; they are reported, not removed."""
    ns = g.namespace(owner_id)
    if relation_type is not None:
        schemas.relation_type(relation_type)
    with g.write(ns, "delete_relation") as w:
        deleted, derived = graph.unrelate(w.patch, from_id, to_id, relation_type)
    return ok(deleted=deleted, kept_derived=[schemas.edge_view(r) for r in derived])


def _graph(g: GraphMemory, session: StoreSession, namespace: str) -> NodeGraph:
    """The walk over the canonical relation graph, or over the configured derived graph backend
    once it is built (FalkorDB or Kùzu), graph nodes only: the same rules on either."""
    from memory_substrate.derived.access import graph_reader

    reader = graph_reader(g.runtime(namespace), session)
    if reader.name == "file":
        return NodeGraph.canonical(session, schemas.is_graph_id)
    return NodeGraph.derived(reader, schemas.is_graph_id)


def get_context(
    g: GraphMemory, *, node_id: str, owner_id: str | None = None, depth: int = 1, max_nodes: int | None = None
) -> JsonObject:
    ns = g.namespace(owner_id)
    n = g.limits.subgraph_default_max_nodes if max_nodes is None else max_nodes
    if not 0 <= depth <= MAX_DEPTH:
        raise ValidationError(f"depth must be between 0 and {MAX_DEPTH}")
    if not 1 <= n <= MAX_NODES:
        raise ValidationError(f"max_nodes must be between 1 and {MAX_NODES}")
    with g.read(ns) as session:
        root = g.node(session, node_id)
        sub = _graph(g, session, ns).neighbourhood([root.id], depth, n)
        objs = session.get_objects(list(sub.depth_of))
    nodes: list[NodeView] = []
    for nid, d in sub.depth_of.items():
        if nid in objs:
            view = schemas.node_view(objs[nid], ns)
            view["depth"] = d
            nodes.append(view)
    edges = [schemas.edge_view(r) for r in sub.edges if r.source_id in objs and r.target_id in objs]
    return ok(root_id=root.id, nodes=nodes, edges=edges, truncated=sub.truncated)


def _end(objs: dict[str, MemoryObject], node_id: str, field: str) -> MemoryObject:
    """``GraphMemory.node`` over objects already read (both ends of a trace in one read)."""
    obj = objs.get(node_id) if node_id else None
    if obj is None or not schemas.is_graph_node(obj):
        raise NotFoundError(f"{field}: node {node_id!r} not found", details={"id": node_id})
    return obj


def get_trace(
    g: GraphMemory, *, from_id: str, to_id: str, owner_id: str | None = None, max_paths: int = 5
) -> JsonObject:
    ns = g.namespace(owner_id)
    if not 1 <= max_paths <= MAX_PATHS:
        raise ValidationError(f"max_paths must be between 1 and {MAX_PATHS}")
    depth = g.limits.trace_max_depth
    with g.read(ns) as session:
        ends = session.get_objects([i for i in (from_id, to_id) if i])  # one read for both ends
        a = _end(ends, from_id, "from_id")
        b = _end(ends, to_id, "to_id")
        found = _graph(g, session, ns).paths(a.id, b.id, max_paths, depth)
        ids = sorted({i for p in found for r in p for i in (r.source_id, r.target_id)} - set(ends))
        objs = {**ends, **session.get_objects(ids)} if ids else dict(ends)
    paths: list[TracePath] = []
    for p in found:
        node_ids = [a.id]
        for r in p:
            node_ids.append(r.target_id if r.source_id == node_ids[-1] else r.source_id)
        paths.append(
            {
                "length": len(p),
                "nodes": [_trace_node(objs, i, ns) for i in node_ids],
                "edges": [schemas.edge_view(r) for r in p],
            }
        )
    return ok(paths=paths, count=len(paths), max_depth=depth)


def _trace_node(objs: dict[str, MemoryObject], node_id: str, namespace: str) -> NodeView | NodeRef:
    """A node on a trace: its view, or only its id when it could not be read."""
    return schemas.node_view(objs[node_id], namespace) if node_id in objs else {"id": node_id}


def create_summary_fact(
    g: GraphMemory, *, fact_ids: list[str], summary_text: str, owner_id: str | None = None
) -> JsonObject:
    """A new Fact holding the summary, with a SUMMARIZES edge to each summarised fact."""
    ns = g.namespace(owner_id)
    ids = list(dict.fromkeys(fact_ids))
    if not ids:
        raise ValidationError("fact_ids must name at least one fact")
    if len(ids) > MAX_SUMMARISED:
        raise ValidationError(f"fact_ids: at most {MAX_SUMMARISED}")
    schemas.text(summary_text, g.limits, "summary_text")
    metadata = schemas.metadata({"summarizes": ids}, g.limits)
    attrs = graph_attributes("summary", metadata, None, "Fact")
    with g.write(ns, "create_node") as w:  # the summary is a created node (its history says create_node)
        fact, edges = graph.create_summary(
            w.patch,
            ids,
            summary_text,
            g.governance("create_node via graph toolset (source summary)"),
            metadata={"graph": attrs},
        )
    return ok(node=schemas.node_view(fact, ns), edges=[schemas.edge_view(r) for r in edges])
