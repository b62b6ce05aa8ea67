"""The built-in ``file`` graph backend: the canonical relations table behind the graph port.

Nothing is mirrored: the store's own ``relations`` rows (with their ``relation_schema``) are the
graph, so this reader is always in line and needs no rebuild.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_substrate.derived.traversal import WalkedGraph
from memory_substrate.models import Relation
from memory_substrate.storage.base import StoreSession


class FileGraph(WalkedGraph):
    name = "file"

    def __init__(self, session: StoreSession) -> None:
        self.session = session

    def _edges(self, ids: Sequence[str], limit: int) -> list[Relation]:
        return self.session.relations_of(list(ids), limit=limit)
