"""Graph reads for get_context and get_trace, over the canonical relations table.

Two functions with a narrow contract, also served by a derived graph backend (``DerivedGraph``):
``neighbourhood`` (breadth-first, undirected, bounded by depth and node count) and ``paths`` (simple undirected paths between two nodes, shortest first).
Walks read light edges (``edges_of``: ids and types, no payload), one query per BFS level for
the whole frontier; full relations are read once at the end for the edges returned
(``relations_among``, or by id for paths). Path search lives in ``pathsearch.py``. Only graph nodes (facts, entities, nodes) are walked: evidence sources
and other families are not spec-002 nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_substrate.derived.traversal import neighbourhood, shortest_paths
from memory_substrate.graphmem.pathsearch import Edge, find_paths
from memory_substrate.models import Relation
from memory_substrate.storage.base import StoreSession


@dataclass
class Subgraph:
    depth_of: dict[str, int] = field(default_factory=dict)  # node id -> BFS depth, in visit order
    edges: list[Relation] = field(default_factory=list)
    truncated: bool = False


class RelationGraph:
    def __init__(self, session: StoreSession, keep: Callable[[str], bool]) -> None:
        self.session = session
        self.keep = keep  # which ids are nodes of this graph

    def _edges(self, ids: Sequence[str], limit: int) -> list[Edge]:
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

    def paths(self, a: str, b: str, max_paths: int, max_depth: int) -> list[list[Relation]]:
        """Up to ``max_paths`` simple paths from ``a`` to ``b`` of at most ``max_depth`` edges,
        shortest first (``pathsearch.find_paths``: two walks joined where they meet); full
        relations are read by id for the edges returned."""

        def between(xs: Sequence[str], ys: Sequence[str], limit: int) -> list[Edge]:
            edges = self.session.edges_between(xs, ys, limit=limit)
            return [e for e in edges if self.keep(e[2]) and self.keep(e[3])]

        found = find_paths(self._edges, between, a, b, max_paths, max_depth)
        full = self.session.get_relations(sorted({e[0] for p in found for e in p})) if found else {}
        return [[full[e[0]] for e in p] for p in found if all(e[0] in full for e in p)]


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
