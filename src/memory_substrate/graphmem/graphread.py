"""Graph reads for get_context and get_trace, over the canonical relations table.

Two functions with a narrow contract, so that a derived graph backend (issue 12) can serve
them later without touching the tools: ``neighbourhood`` (breadth-first, undirected, bounded by
depth and node count) and ``paths`` (simple undirected paths between two nodes, shortest first).
Each BFS level is one ``relations_of`` call for the whole frontier. Only graph nodes (facts,
entities, nodes) are walked: evidence sources and other families are not spec-002 nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memory_substrate.models import Relation
from memory_substrate.storage.base import StoreSession

LEVEL_LIMIT = 5000  # relations fetched per BFS level; a hub beyond it is walked partially


@dataclass
class Subgraph:
    depth_of: dict[str, int] = field(default_factory=dict)  # node id -> BFS depth, in visit order
    edges: dict[str, Relation] = field(default_factory=dict)
    truncated: bool = False


class RelationGraph:
    def __init__(self, session: StoreSession, keep: Callable[[str], bool]) -> None:
        self.session = session
        self.keep = keep  # which ids are nodes of this graph

    def _level(self, ids: list[str]) -> list[Relation]:
        rels = self.session.relations_of(ids, limit=LEVEL_LIMIT)
        return [r for r in rels if self.keep(r.source_id) and self.keep(r.target_id)]

    def neighbourhood(self, ids: list[str], depth: int, max_nodes: int) -> Subgraph:
        sub = Subgraph({i: 0 for i in ids[:max_nodes]})
        frontier = list(sub.depth_of)
        for level in range(1, depth + 1):
            if not frontier:
                break
            nxt: list[str] = []
            for rel in self._level(frontier):
                for nid in (rel.source_id, rel.target_id):
                    if nid not in sub.depth_of:
                        if len(sub.depth_of) >= max_nodes:
                            sub.truncated = True
                            continue
                        sub.depth_of[nid] = level
                        nxt.append(nid)
                if rel.source_id in sub.depth_of and rel.target_id in sub.depth_of:
                    sub.edges[rel.id] = rel
            frontier = nxt
        # Edges among the last level's nodes were not fetched by the loop above.
        if frontier and len(sub.depth_of) > 1:
            inside = set(sub.depth_of)
            for rel in self._level(frontier):
                if rel.source_id in inside and rel.target_id in inside:
                    sub.edges[rel.id] = rel
        return sub

    def _ball(self, start: str, radius: int, adj: dict[str, dict[str, Relation]]) -> None:
        seen, frontier = {start}, [start]
        for _ in range(radius):
            if not frontier:
                return
            nxt = []
            for rel in self._level(frontier):
                for a, b in ((rel.source_id, rel.target_id), (rel.target_id, rel.source_id)):
                    adj.setdefault(a, {})[rel.id] = rel
                    if a in seen and b not in seen:
                        seen.add(b)
                        nxt.append(b)
            frontier = nxt

    def paths(self, a: str, b: str, max_paths: int, max_depth: int) -> list[list[Relation]]:
        """Up to ``max_paths`` simple paths from ``a`` to ``b`` of at most ``max_depth`` edges.

        Meet in the middle: every path of length <= D has its first ceil(D/2) edges inside the
        ball of radius ceil(D/2) around ``a`` and the rest inside the ball of radius floor(D/2)
        around ``b``, so two half-depth walks fetch every edge a path can use.
        """
        if a == b:
            return []
        adj: dict[str, dict[str, Relation]] = {}
        self._ball(a, (max_depth + 1) // 2, adj)
        self._ball(b, max_depth // 2, adj)
        dist = _distances(b, adj, max_depth)
        if a not in dist:
            return []
        found: list[list[Relation]] = []
        budget = [10_000]  # DFS steps: bounds the work on dense graphs

        def walk(node: str, path: list[Relation], visited: set[str]) -> None:
            budget[0] -= 1
            if budget[0] < 0:
                return
            if node == b:
                found.append(list(path))
                return
            steps = [(rel, rel.target_id if rel.source_id == node else rel.source_id) for rel in adj.get(node, {}).values()]
            steps.sort(key=lambda s: dist.get(s[1], max_depth + 1))  # towards b first: shortest paths early
            for rel, nxt in steps:
                if nxt in visited or len(path) + 1 + dist.get(nxt, max_depth + 1) > max_depth:
                    continue
                visited.add(nxt)
                path.append(rel)
                walk(nxt, path, visited)
                path.pop()
                visited.discard(nxt)

        walk(a, [], {a})
        found.sort(key=len)
        return found[:max_paths]


def _distances(start: str, adj: dict[str, dict[str, Relation]], limit: int) -> dict[str, int]:
    dist, frontier = {start: 0}, [start]
    for d in range(1, limit + 1):
        nxt = []
        for node in frontier:
            for rel in adj.get(node, {}).values():
                other = rel.target_id if rel.source_id == node else rel.source_id
                if other not in dist:
                    dist[other] = d
                    nxt.append(other)
        frontier = nxt
    return dist
