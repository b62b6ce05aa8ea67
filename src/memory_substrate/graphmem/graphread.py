"""Graph reads for get_context and get_trace: the package's one walk, over graph nodes only.

``neighbourhood`` is ``derived.traversal.neighbourhood`` (``light_neighbourhood``) and ``paths`` is
``derived.pathsearch.find_paths`` (simple undirected paths, shortest first), whichever graph the
namespace reads: the canonical relations table (light edges through ``edges_of`` and
``edges_between``, one query per level; full relations read once at the end for the edges
returned) or a built derived backend (its ``relations_of``). Only graph nodes (facts, entities,
nodes) are walked: evidence sources and other families are not graph-toolset nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memory_substrate.derived.base import GraphReader
from memory_substrate.derived.pathsearch import Edge, EdgesBetween, between_from, find_paths
from memory_substrate.derived.traversal import light_neighbourhood
from memory_substrate.models import Relation
from memory_substrate.storage.base import StoreSession


@dataclass
class Subgraph:
    depth_of: dict[str, int] = field(default_factory=dict)  # node id -> BFS depth, nearest first
    edges: list[Relation] = field(default_factory=list)
    truncated: bool = False


class NodeGraph:
    """The walk over graph nodes of one namespace's graph (canonical or derived)."""

    def __init__(
        self,
        edges_of: Callable[[Sequence[str], int], list[Edge]],
        edges_between: EdgesBetween,
        relations: Callable[[Sequence[str]], dict[str, Relation]],
        keep: Callable[[str], bool],
    ) -> None:
        self._read_edges, self._read_between, self._relations, self.keep = (
            edges_of,
            edges_between,
            relations,
            keep,
        )

    @classmethod
    def canonical(cls, session: StoreSession, keep: Callable[[str], bool]) -> NodeGraph:
        return cls(
            lambda ids, limit: session.edges_of(ids, limit=limit),
            lambda xs, ys, limit: session.edges_between(xs, ys, limit=limit),
            session.get_relations,
            keep,
        )

    @classmethod
    def derived(cls, reader: GraphReader, keep: Callable[[str], bool]) -> NodeGraph:
        seen: dict[str, Relation] = {}

        def edges_of(ids: Sequence[str], limit: int) -> list[Edge]:
            rels = reader.relations_of(list(ids), limit=limit)
            seen.update((r.id, r) for r in rels)
            return [(r.id, r.rel_type, r.source_id, r.target_id) for r in rels]

        return cls(edges_of, between_from(edges_of), lambda ids: {i: seen[i] for i in ids if i in seen}, keep)

    def _kept(self, edges: list[Edge]) -> list[Edge]:
        return [e for e in edges if self.keep(e[2]) and self.keep(e[3])]

    def _edges(self, ids: Sequence[str], limit: int) -> list[Edge]:
        return self._kept(self._read_edges(ids, limit))

    def _between(self, xs: Sequence[str], ys: Sequence[str], limit: int) -> list[Edge]:
        return self._kept(self._read_between(xs, ys, limit))

    def neighbourhood(self, ids: list[str], depth: int, max_nodes: int) -> Subgraph:
        """Nodes within ``depth`` hops (at most ``max_nodes``, nearest first, each level in id
        order) and every edge among them, ordered by id."""
        got = light_neighbourhood(self._edges, ids, depth=depth, max_nodes=max_nodes)
        found = {r.id for r in got.edges}
        # The walk reads no edge of its last level; get_context also shows the edges among those nodes.
        last = [n for n, d in got.depth_of.items() if d == depth]
        for e in self._edges(last, 10_000) if last else []:
            if e[2] in got.depth_of and e[3] in got.depth_of and e[2] != e[3]:
                found.add(e[0])
        full = self._relations(sorted(found)) if found else {}
        return Subgraph(dict(got.depth_of), [full[i] for i in sorted(full)], got.truncated)

    def paths(self, a: str, b: str, max_paths: int, max_depth: int) -> list[list[Relation]]:
        """Up to ``max_paths`` simple paths from ``a`` to ``b`` of at most ``max_depth`` edges,
        shortest first; full relations are read by id for the edges returned."""
        found = find_paths(self._edges, self._between, a, b, max_paths, max_depth)
        full = self._relations(sorted({e[0] for p in found for e in p})) if found else {}
        return [[full[e[0]] for e in p] for p in found if all(e[0] in full for e in p)]
