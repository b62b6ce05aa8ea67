"""The configured graph reader and vector index of a namespace, for services to read through.

A derived backend answers only once it is built; until then, while it cannot be reached, or
without a mirrored store, reads fall back to the canonical tables, which always hold the truth
(an unreachable backend is logged).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memory_substrate.derived.base import DerivedBackend, GraphReader, Neighbourhood, VectorIndex
from memory_substrate.derived.file_graph import FileGraph
from memory_substrate.derived.mirror import Mirror
from memory_substrate.derived.traversal import WalkedGraph
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.models import Relation
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession

log = logging.getLogger(__name__)


def _ready(mirror: Mirror, name: str, namespace: str) -> DerivedBackend | None:
    try:
        backend = mirror.indexes.backend(name)
        return backend if backend.is_built(namespace) else None
    except MemorySubstrateError as exc:
        log.warning("%s unavailable, reading the canonical tables instead: %s", name, exc.message)
        return None


def mirror_of(rt: Runtime) -> Mirror | None:
    mirror = getattr(rt.store, "mirror", None)
    return mirror if isinstance(mirror, Mirror) else None


def graph_reader(rt: Runtime, session: StoreSession) -> GraphReader:
    name = str(session.get_config().get("graph_backend") or "file")
    mirror = mirror_of(rt)
    if name == "file" or mirror is None:
        return FileGraph(session)
    backend = _ready(mirror, name, rt.namespace)
    if backend is None:
        return FileGraph(session)
    reader: GraphReader = backend.reader(rt.namespace)
    hidden = _expired(session)
    return _VisibleGraph(reader, hidden) if hidden else reader


def vector_index(rt: Runtime, session: StoreSession) -> VectorIndex:
    name = str(session.get_config().get("semantic_backend") or "builtin")
    mirror = mirror_of(rt)
    if name == "builtin" or mirror is None:
        return _Builtin(session)
    backend = _ready(mirror, name, rt.namespace)
    if backend is None:
        return _Builtin(session)
    index: VectorIndex = backend.reader(rt.namespace)
    hidden = _expired(session)
    return _VisibleVectors(index, hidden) if hidden else index


def _expired(session: StoreSession) -> set[str]:
    """Expired ids the read session hides (``expiry.VisibleSession``); a mirror still holds them
    until the sweep archives them, so its answers are filtered the same way."""
    expired = getattr(session, "expired_ids", None)
    return set(expired()) if callable(expired) else set()


class _VisibleGraph(WalkedGraph):
    """A derived graph walked as if expired objects were gone: the shared traversal over its edges."""

    def __init__(self, inner: GraphReader, hidden: set[str]) -> None:
        self.inner, self.hidden, self.name = inner, hidden, inner.name

    def _edges(self, ids: Sequence[str], limit: int) -> list[Relation]:
        rels = self.inner.relations_of([i for i in ids if i not in self.hidden], limit=limit)
        return [r for r in rels if r.source_id not in self.hidden and r.target_id not in self.hidden]

    def neighbourhood(self, object_ids: Sequence[str], *, depth: int, max_nodes: int) -> Neighbourhood:
        return super().neighbourhood(
            [i for i in object_ids if i not in self.hidden], depth=depth, max_nodes=max_nodes
        )


class _VisibleVectors:
    def __init__(self, inner: VectorIndex, hidden: set[str]) -> None:
        self.inner, self.hidden, self.name = inner, hidden, inner.name

    def vector_search(self, model, query, *, owner_type, limit):  # type: ignore[no-untyped-def]
        hits = self.inner.vector_search(model, query, owner_type=owner_type, limit=limit + len(self.hidden))
        return [h for h in hits if h[0] not in self.hidden and h[0].split("#", 1)[0] not in self.hidden][
            :limit
        ]


class _Builtin:
    """The store's own vectors (exact cosine) behind the vector port."""

    name = "builtin"

    def __init__(self, session: StoreSession) -> None:
        self.session = session

    def vector_search(self, model, query, *, owner_type, limit):  # type: ignore[no-untyped-def]
        return self.session.vector_search(model, query, owner_type=owner_type, limit=limit)
