"""The read ports of derived indexes, and what a mirrored backend implements.

Graph semantics, identical on every backend (the contract suite holds each to them):

* edges are directed relations, traversed in either direction; self-loops are ignored;
* ``relations_of(ids)``: every relation touching one of ``ids``, ordered by (created_at, id);
* ``neighbourhood(ids, depth, max_nodes)``: breadth-first from ``ids``; each level's newly
  reached nodes are taken in id order until ``max_nodes`` is reached (``truncated`` says some
  were dropped); ``edges`` are the relations seen while expanding levels below ``depth`` whose
  two ends were both kept, ordered by id;
* ``paths(a, b, max_paths, max_depth)``: every *shortest* path of at most ``max_depth`` hops,
  ordered by (node ids, relation ids), first ``max_paths``. Parallel relations give distinct paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memory_substrate.derived.report_types import FingerprintView
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.storage.base import StoreSession
from memory_substrate.storage.outbox import OutboxEntry

EDGE_CAP = 10_000  # relations read per traversal level; beyond it a result is marked truncated
PATH_CAP = 1_000  # shortest paths enumerated before ordering and cutting to max_paths


@dataclass
class Neighbourhood:
    depth_of: dict[str, int]  # node id -> hops from the nearest root, in the order reached
    edges: list[Relation]
    truncated: bool = False


@dataclass
class GraphPath:
    node_ids: list[str]
    relations: list[Relation] = field(default_factory=list)  # relations[i] joins node_ids[i] and [i + 1]

    def key(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return tuple(self.node_ids), tuple(r.id for r in self.relations)


class GraphReader(Protocol):
    """Graph reads of one namespace: expand, graph mode, get_context, get_trace, neighbourhood retrieval."""

    name: str

    def relations_of(self, object_ids: Sequence[str], *, limit: int = 500) -> list[Relation]: ...
    def neighbourhood(self, object_ids: Sequence[str], *, depth: int, max_nodes: int) -> Neighbourhood: ...
    def paths(
        self, source_id: str, target_id: str, *, max_paths: int = 5, max_depth: int = 4
    ) -> list[GraphPath]: ...


class VectorIndex(Protocol):
    """Top-k cosine search over stored vectors of one namespace (scores: cosine similarity)."""

    name: str

    def vector_search(
        self, model: str, query: npt.NDArray[np.float32], *, owner_type: str, limit: int
    ) -> list[tuple[str, float]]: ...


@dataclass
class Fingerprint:
    """Counts and order-independent checksums of what a backend holds, per item family."""

    counts: dict[str, int]
    checksums: dict[str, str]
    items: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)  # family -> id -> digest

    def view(self) -> FingerprintView:
        return {"counts": self.counts, "checksums": self.checksums}


class DerivedBackend(Protocol):
    """A mirror of one namespace's canonical rows in an external engine."""

    name: str  # "falkordb" | "kuzu" | "lancedb"
    families: tuple[str, ...]  # item families it mirrors: "objects", "relations", "vectors"
    owner_types: tuple[str, ...]  # vector owner types it mirrors ("object", "segment")

    def is_built(self, namespace: str) -> bool: ...
    def drop(self, namespace: str) -> None: ...
    def rebuild(self, namespace: str, session: StoreSession) -> dict[str, int]:
        """Drop and load everything from canonical rows; mark the namespace built."""
        ...

    def apply(self, namespace: str, session: StoreSession, entries: Sequence[OutboxEntry]) -> dict[str, int]:
        """Bring the ids named by ``entries`` in line with their current canonical state."""
        ...

    def repair(self, namespace: str, session: StoreSession, ids: dict[str, list[str]]) -> dict[str, int]:
        """Re-mirror the ids (per family) a fingerprint comparison found out of line."""
        ...

    def fingerprint(self, namespace: str) -> Fingerprint: ...
    def reader(self, namespace: str) -> Any:
        """The read port (``GraphReader`` or ``VectorIndex``) over one namespace."""
        ...

    def close(self) -> None: ...


def object_digest(obj: MemoryObject) -> str:
    """What a graph mirror must agree on for an object (its identity and lifecycle state)."""
    return f"{obj.object_type}|{obj.kind}|{obj.status}|{obj.version}|{obj.updated_at}"


def relation_digest(rel: Relation) -> str:
    return f"{rel.rel_type}|{rel.source_id}|{rel.target_id}|{rel.origin_id or ''}"


def vector_digest(model: str, vec: npt.NDArray[np.float32]) -> str:
    import hashlib

    return f"{model}|{hashlib.sha1(np.asarray(vec, dtype=np.float32).tobytes()).hexdigest()[:16]}"
