"""Neighbourhood and shortest-path walks over any ``edges_of`` primitive, with one set of rules.

Every graph backend answers ``edges_of(ids, limit)`` natively (one round trip per level); the
rules that decide *which* nodes, edges and paths come back live here once (paths through
``pathsearch.py``), so FalkorDB, Kùzu and the canonical tables cannot disagree on ties,
truncation or order (see ``base.py``). ``WalkedGraph`` is the graph port built on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memory_substrate.derived.base import EDGE_CAP, PATH_CAP, GraphPath, Neighbourhood
from memory_substrate.derived.pathsearch import Edge, between_from, find_paths
from memory_substrate.models import Relation

EdgesOf = Callable[[Sequence[str], int], list[Relation]]


def neighbourhood(edges_of: EdgesOf, roots: Sequence[str], *, depth: int, max_nodes: int) -> Neighbourhood:
    depth_of: dict[str, int] = {}
    for root in sorted(dict.fromkeys(roots)):
        if len(depth_of) < max_nodes:
            depth_of[root] = 0
    truncated = len(depth_of) < len(set(roots))
    frontier = list(depth_of)
    seen_edges: dict[str, Relation] = {}
    for level in range(1, depth + 1):
        if not frontier:
            break
        rels = edges_of(frontier, EDGE_CAP + 1)
        if len(rels) > EDGE_CAP:
            rels, truncated = rels[:EDGE_CAP], True
        fresh: set[str] = set()
        for rel in rels:
            if rel.source_id == rel.target_id:
                continue
            seen_edges[rel.id] = rel
            for end in (rel.source_id, rel.target_id):
                if end not in depth_of:
                    fresh.add(end)
        frontier = []
        for nid in sorted(fresh):
            if len(depth_of) >= max_nodes:
                truncated = True
                break
            depth_of[nid] = level
            frontier.append(nid)
    edges = sorted(
        (r for r in seen_edges.values() if r.source_id in depth_of and r.target_id in depth_of),
        key=lambda r: r.id,
    )
    return Neighbourhood(depth_of, edges, truncated)


def light_neighbourhood(
    edges_of: Callable[[Sequence[str], int], list[Edge]], roots: Sequence[str], *, depth: int, max_nodes: int
) -> Neighbourhood:
    """``neighbourhood`` over light edges (id, type, source, target), as ``StoreSession.edges_of``
    reads them: its edges carry no payload (read the full relations of those returned by id)."""
    return neighbourhood(
        lambda ids, limit: [Relation(*e) for e in edges_of(ids, limit)],
        roots,
        depth=depth,
        max_nodes=max_nodes,
    )


def shortest_paths(
    edges_of: EdgesOf, source: str, target: str, *, max_paths: int, max_depth: int
) -> list[GraphPath]:
    """Every shortest path (``pathsearch.find_paths``, the one path search), ordered by
    (node ids, relation ids) and cut to ``max_paths``."""
    if source == target:
        return [GraphPath([source])]
    seen: dict[str, Relation] = {}

    def light(ids: Sequence[str], limit: int) -> list[Edge]:
        rels = edges_of(ids, limit)
        seen.update((r.id, r) for r in rels)
        return [(r.id, r.rel_type, r.source_id, r.target_id) for r in rels if r.source_id != r.target_id]

    found = find_paths(light, between_from(light), source, target, PATH_CAP, max_depth, shortest_only=True)
    return sort_paths([_path(source, [seen[e[0]] for e in p]) for p in found], max_paths)


def _path(start: str, rels: list[Relation]) -> GraphPath:
    nodes = [start]
    for rel in rels:
        nodes.append(rel.target_id if rel.source_id == nodes[-1] else rel.source_id)
    return GraphPath(nodes, rels)


def sort_paths(paths: list[GraphPath], max_paths: int) -> list[GraphPath]:
    return sorted(paths, key=GraphPath.key)[:max_paths]


class WalkedGraph:
    """The graph port (``base.GraphReader``) for a reader that supplies only its edges: the walks
    are this module's, so every backend answers by the same rules."""

    name = ""

    def _edges(self, ids: Sequence[str], limit: int) -> list[Relation]:
        raise NotImplementedError

    def relations_of(self, object_ids: Sequence[str], *, limit: int = 500) -> list[Relation]:
        return self._edges(object_ids, limit)

    def neighbourhood(self, object_ids: Sequence[str], *, depth: int, max_nodes: int) -> Neighbourhood:
        return neighbourhood(self._edges, object_ids, depth=depth, max_nodes=max_nodes)

    def paths(
        self, source_id: str, target_id: str, *, max_paths: int = 5, max_depth: int = 4
    ) -> list[GraphPath]:
        return shortest_paths(self._edges, source_id, target_id, max_paths=max_paths, max_depth=max_depth)
