"""The built-in ``file`` graph backend: the canonical relations table behind the graph port.

Nothing is mirrored: the store's own ``relations`` rows (with their ``relation_schema``) are the
graph, so this reader is always in line and needs no rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_substrate.derived.base import GraphPath, Neighbourhood
from memory_substrate.derived.traversal import neighbourhood, shortest_paths
from memory_substrate.models import Relation
from memory_substrate.storage.base import StoreSession


class FileGraph:
    name = "file"

    def __init__(self, session: StoreSession) -> None:
        self.session = session

    def _edges(self, ids: Sequence[str], limit: int) -> list[Relation]:
        return self.session.relations_of(list(ids), limit=limit)

    def relations_of(self, object_ids: Sequence[str], *, limit: int = 500) -> list[Relation]:
        return self._edges(object_ids, limit)

    def neighbourhood(self, object_ids: Sequence[str], *, depth: int, max_nodes: int) -> Neighbourhood:
        return neighbourhood(self._edges, object_ids, depth=depth, max_nodes=max_nodes)

    def paths(self, source_id: str, target_id: str, *, max_paths: int = 5, max_depth: int = 4) -> list[GraphPath]:
        return shortest_paths(self._edges, source_id, target_id, max_paths=max_paths, max_depth=max_depth)
