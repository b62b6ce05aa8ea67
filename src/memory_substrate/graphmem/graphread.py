"""Graph reads for get_context and get_trace, over the canonical relations table.

Two functions with a narrow contract, also served by a derived graph backend (``DerivedGraph``):
``neighbourhood`` (breadth-first, undirected, bounded by depth and node count) and ``paths`` (simple undirected paths between two nodes, shortest first).
Walks read light edges (``edges_of``: ids and types, no payload), one query per BFS level for
the whole frontier; full relations are read once at the end for the edges returned
(``relations_among``). Only graph nodes (facts, entities, nodes) are walked: evidence sources
and other families are not spec-002 nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_substrate.derived.traversal import neighbourhood, shortest_paths
from memory_substrate.models import Relation
from memory_substrate.storage.base import StoreSession

Edge = tuple[str, str, str, str]  # (relation id, rel_type, source_id, target_id)
LEVEL_LIMIT = 2000  # edges read per BFS level of a path search; a hub beyond it is walked partially
PROBE = 200  # a level read with this limit first: cheap sides grow first
MAX_STEPS = 10_000  # DFS steps of a path search: bounds the work on dense graphs
# Once the shortest paths are found, the walk goes deeper for longer ones only while it has read
# fewer edges than this: near hubs, one more level costs thousands of edges for paths that are
# longer than the ones already found.
EXTRA_BUDGET = 1000


@dataclass
class Subgraph:
    depth_of: dict[str, int] = field(default_factory=dict)  # node id -> BFS depth, in visit order
    edges: list[Relation] = field(default_factory=list)
    truncated: bool = False


class RelationGraph:
    def __init__(self, session: StoreSession, keep: Callable[[str], bool]) -> None:
        self.session = session
        self.keep = keep  # which ids are nodes of this graph

    def _edges(self, ids: list[str], limit: int) -> list[Edge]:
        return [e for e in self.session.edges_of(ids, limit=limit) if self.keep(e[2]) and self.keep(e[3])]

    def neighbourhood(self, ids: list[str], depth: int, max_nodes: int) -> Subgraph:
        """Nodes within ``depth`` hops (at most ``max_nodes``, nearest first), edges among them."""
        sub = Subgraph({i: 0 for i in ids[:max_nodes]})
        frontier = list(sub.depth_of)
        for level in range(1, depth + 1):
            room = max_nodes - len(sub.depth_of)
            if not frontier or room <= 0:
                sub.truncated = sub.truncated or bool(frontier and room <= 0)
                break
            # Enough edges to fill the room even when many lead back to known nodes.
            limit = room * 10 + 50
            edges = self._edges(frontier, limit)
            nxt: list[str] = []
            for _, _, src, tgt in edges:
                for nid in (src, tgt):
                    if nid not in sub.depth_of:
                        if len(sub.depth_of) >= max_nodes:
                            sub.truncated = True
                            continue
                        sub.depth_of[nid] = level
                        nxt.append(nid)
            sub.truncated = sub.truncated or len(edges) >= limit
            frontier = nxt
        sub.edges = [r for r in self.session.relations_among(list(sub.depth_of)) if self.keep(r.source_id) and self.keep(r.target_id)]
        return sub

    def _level_edges(self, frontier: dict[str, list[str]]) -> tuple[str, list[Edge]]:
        """Pick the side to grow and read its next level. A frontier's size says little about
        its cost (one hub can carry thousands of edges), so each side is first probed with a
        small limit: a side whose whole level fits is grown with that read; only when both
        overflow is the smaller frontier read in full (up to ``LEVEL_LIMIT``)."""
        sides = sorted((x for x in frontier if frontier[x]), key=lambda x: len(frontier[x]))
        for side in sides:
            edges = self._edges(frontier[side], PROBE)
            if len(edges) < PROBE:
                return side, edges
        return sides[0], self._edges(frontier[sides[0]], LEVEL_LIMIT)

    @staticmethod
    def _grow(edges: list[Edge], seen: set[str], adj: dict[str, dict[str, Edge]]) -> list[str]:
        """Record a level's edges in ``adj``; return the newly reached nodes."""
        nxt = []
        for edge in edges:
            _, _, src, tgt = edge
            for x, y in ((src, tgt), (tgt, src)):
                adj.setdefault(x, {})[edge[0]] = edge
                if x in seen and y not in seen:
                    seen.add(y)
                    nxt.append(y)
        return nxt

    def paths(self, a: str, b: str, max_paths: int, max_depth: int) -> list[list[Relation]]:
        """Up to ``max_paths`` simple paths from ``a`` to ``b`` of at most ``max_depth`` edges,
        shortest first.

        Bidirectional: a path of length L has all its edges read once the two walks' radii sum
        to L (each edge touches a node strictly inside one of the balls). So the walks grow one
        level at a time, the cheaper side first, and paths of length <= ra + rb are
        enumerated as soon as the balls meet; longer ones only while fewer than ``max_paths``
        were found, up to ``max_depth``, and while the walk has read fewer than ``EXTRA_BUDGET``
        edges.
        """
        if a == b:
            return []
        adj: dict[str, dict[str, Edge]] = {}
        seen = {a: {a}, b: {b}}
        frontier = {a: [a], b: [b]}
        radius = {a: 0, b: 0}
        found: list[list[Edge]] = []
        read = 0
        while radius[a] + radius[b] < max_depth and (frontier[a] or frontier[b]):
            if found and read >= EXTRA_BUDGET:
                break  # shortest paths found; longer ones only while reading stays cheap
            side, edges = self._level_edges(frontier)
            frontier[side] = self._grow(edges, seen[side], adj)
            read += len(edges)
            radius[side] += 1
            if seen[a] & seen[b]:
                found = self._enumerate(a, b, adj, radius[a] + radius[b], max_paths)
                if len(found) >= max_paths:
                    break
        found = found[:max_paths]
        nodes = sorted({n for p in found for e in p for n in (e[2], e[3])})
        full = {r.id: r for r in self.session.relations_among(nodes)} if nodes else {}
        return [[full[e[0]] for e in p] for p in found if all(e[0] in full for e in p)]

    @staticmethod
    def _enumerate(a: str, b: str, adj: dict[str, dict[str, Edge]], max_len: int, max_paths: int) -> list[list[Edge]]:
        """Simple paths a -> b of at most ``max_len`` edges in ``adj``, by increasing length."""
        dist = _distances(b, adj, max_len)
        if a not in dist:
            return []
        found: list[list[Edge]] = []
        steps_left = [MAX_STEPS]

        def walk(node: str, path: list[Edge], visited: set[str], length: int) -> None:
            steps_left[0] -= 1
            if steps_left[0] < 0 or len(found) >= max_paths:
                return
            if node == b:
                if len(path) == length:
                    found.append(list(path))
                return
            for edge in adj.get(node, {}).values():
                nxt = edge[3] if edge[2] == node else edge[2]
                if nxt in visited or len(path) + 1 + dist.get(nxt, max_len + 1) > length:
                    continue
                visited.add(nxt)
                path.append(edge)
                walk(nxt, path, visited, length)
                path.pop()
                visited.discard(nxt)

        for length in range(dist[a], max_len + 1):  # iterative deepening: shortest paths first
            walk(a, [], {a}, length)
            if len(found) >= max_paths or steps_left[0] < 0:
                break
        return found


def _distances(start: str, adj: dict[str, dict[str, Edge]], limit: int) -> dict[str, int]:
    dist, frontier = {start: 0}, [start]
    for d in range(1, limit + 1):
        nxt = []
        for node in frontier:
            for _, _, src, tgt in adj.get(node, {}).values():
                other = tgt if src == node else src
                if other not in dist:
                    dist[other] = d
                    nxt.append(other)
        frontier = nxt
    return dist


class DerivedGraph:
    """The same two reads served by a derived graph backend (``derived.base.GraphReader``).

    The walk itself is the shared traversal (``derived/traversal.py``) over the backend's edges,
    keeping only edges between graph nodes, so a route is never lost because the backend's
    shortest path ran through a source. Paths are the shortest ones (the derived contract)."""

    def __init__(self, reader: Any, keep: Callable[[str], bool]) -> None:
        self.reader = reader
        self.keep = keep

    def _edges(self, ids: Sequence[str], limit: int) -> list[Relation]:
        rels: list[Relation] = self.reader.relations_of(list(ids), limit=limit)
        return [r for r in rels if self.keep(r.source_id) and self.keep(r.target_id)]

    def neighbourhood(self, ids: list[str], depth: int, max_nodes: int) -> Subgraph:
        got = neighbourhood(self._edges, ids, depth=depth, max_nodes=max_nodes)
        return Subgraph(dict(got.depth_of), list(got.edges), truncated=got.truncated)

    def paths(self, a: str, b: str, max_paths: int, max_depth: int) -> list[list[Relation]]:
        return [p.relations for p in shortest_paths(self._edges, a, b, max_paths=max_paths, max_depth=max_depth)]
