"""Graph health for ``report``, computed with networkx on the stored relation projection.

Counts compare the *backend* (the relations the store holds: the ``file`` projection) with the
*canonical* side (objects, and the relations canonical objects imply plus canonical
relations). Insights are deterministic, on the undirected graph of records that are still in
play (everything except superseded, archived and expired objects):

* ``isolated_nodes``: records with no relation at all.
* ``sparse_clusters``: connected components of at least ``SPARSE_MIN_SIZE`` records whose
  density (edges / possible edges) is below ``SPARSE_MAX_DENSITY``: records held together by a
  thin chain or a single hub, which may want more typed relations or consolidation.
* ``bridge_nodes``: articulation points, records whose removal splits their component.
* ``weakly_connected_scopes``: scopes with at least two records that fall into more than one
  connected component: the scope's own records are not linked to each other through relations.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, TypeVar

from memory_substrate.maintain.common import ref_view
from memory_substrate.maintain.reindex import GraphDiff
from memory_substrate.maintain.report_types import BridgeNode, GraphHealth, SparseCluster, WeakScope
from memory_substrate.maintain.results import Section
from memory_substrate.models import MemoryObject, Relation

RETIRED = ("superseded", "archived", "expired")
SPARSE_MIN_SIZE = 3
SPARSE_MAX_DENSITY = 0.25
MEMBERS_SHOWN = 10
T = TypeVar("T")

if TYPE_CHECKING:
    import networkx


def _section(items: list[T], max_items: int) -> Section[T]:
    return {"count": len(items), "items": items[:max_items], "truncated": len(items) > max_items}


def _counts(
    objects: list[MemoryObject],
    relations: list[Relation],
    diff: GraphDiff,
    *,
    backend: str,
    configured: bool,
) -> GraphHealth:
    """What the backend holds beside the canonical tables."""
    ids = {o.id for o in objects}
    dangling = {e for r in relations for e in (r.source_id, r.target_id) if e not in ids}
    return {
        "backend": backend,
        "configured": configured,
        "counts": {
            "canonical": {"nodes": len(objects), "relations": diff["expected"] + diff["canonical"]},
            "backend": {"nodes": len(objects), "relations": diff["stored"]},
        },
        "missing_backend_counts": {"relations": len(diff["missing"]), "nodes": len(dangling)},
        "extra_backend_counts": {"relations": len(diff["extra"])},
        "outdated_backend_counts": {"relations": len(diff["outdated"])},
        "stub_node_count": sum(
            1 for o in objects if o.object_type == "node" and (o.kind == "stub" or o.metadata.get("stub"))
        ),
        "thresholds": {"sparse_min_size": SPARSE_MIN_SIZE, "sparse_max_density": SPARSE_MAX_DENSITY},
    }


def _components(
    graph: networkx.Graph[str], degree: dict[str, int]
) -> tuple[dict[str, int], list[SparseCluster]]:
    """Each node's component (largest first), and the components too sparse for their size."""
    import networkx as nx

    component_of: dict[str, int] = {}
    sparse: list[SparseCluster] = []
    for i, comp in enumerate(sorted(nx.connected_components(graph), key=lambda c: (-len(c), min(c)))):
        for node in comp:
            component_of[node] = i
        size = len(comp)
        if size < SPARSE_MIN_SIZE:
            continue
        edges = sum(degree[n] for n in comp) // 2
        density = 2 * edges / (size * (size - 1))
        if density < SPARSE_MAX_DENSITY:
            members = sorted(comp, key=lambda n: (-degree[n], n))
            sparse.append(
                {
                    "size": size,
                    "relations": edges,
                    "density": round(density, 4),
                    "hub_id": members[0],
                    "member_ids": members[:MEMBERS_SHOWN],
                }
            )
    return component_of, sparse


def _weak_scopes(
    records: dict[str, MemoryObject],
    graph: networkx.Graph[str],
    degree: dict[str, int],
    component_of: dict[str, int],
) -> list[WeakScope]:
    """Scopes whose records fall into more than one component."""
    by_scope: dict[str, list[str]] = defaultdict(list)
    for oid, obj in records.items():
        for scope in obj.scope_refs:
            by_scope[scope].append(oid)
    weak: list[WeakScope] = []
    for scope, members in sorted(by_scope.items()):
        if len(members) < 2:
            continue
        components = {component_of[m] for m in members}
        if len(components) < 2:
            continue
        inside = set(members)
        internal = sum(1 for m in members for n in graph[m] if n in inside) // 2
        weak.append(
            {
                "scope": scope,
                "records": len(members),
                "internal_relations": internal,
                "touching_relations": sum(degree[m] for m in members) - internal,
                "components": len(components),
                "isolated_records": sum(1 for m in members if degree[m] == 0),
            }
        )
    weak.sort(key=lambda w: (-w["components"], w["scope"]))
    return weak


def graph_health(
    objects: list[MemoryObject],
    relations: list[Relation],
    diff: GraphDiff,
    *,
    backend: str,
    configured: bool,
    max_items: int,
) -> GraphHealth:
    health = _counts(objects, relations, diff, backend=backend, configured=configured)
    try:
        import networkx as nx
    except ImportError:
        health["available"] = False
        health["reason"] = "graph insights need networkx: pip install networkx"
        return health
    records = {o.id: o for o in objects if o.status not in RETIRED}
    graph: networkx.Graph[str] = nx.Graph()
    graph.add_nodes_from(records)
    graph.add_edges_from(
        (r.source_id, r.target_id)
        for r in relations
        if r.source_id in records and r.target_id in records and r.source_id != r.target_id
    )
    degree = dict(graph.degree)
    isolated = sorted(n for n, d in degree.items() if d == 0)
    component_of, sparse = _components(graph, degree)
    bridges = sorted(nx.articulation_points(graph), key=lambda n: (-degree[n], n))
    bridge_items: list[BridgeNode] = [{**ref_view(records[n]), "degree": degree[n]} for n in bridges]
    weak = _weak_scopes(records, graph, degree, component_of)
    health["available"] = True
    health["graph"] = {
        "records": graph.number_of_nodes(),
        "relations": graph.number_of_edges(),
        "components": len(set(component_of.values())),
    }
    health["isolated_nodes"] = {
        "count": len(isolated),
        "items": [ref_view(records[n]) for n in isolated[:max_items]],
        "truncated": len(isolated) > max_items,
    }
    health["sparse_clusters"] = _section(sparse, max_items)
    health["bridge_nodes"] = _section(bridge_items, max_items)
    health["weakly_connected_scopes"] = _section(weak, max_items)
    return health
