"""The configured graph reader and vector index of a namespace, for services to read through.

A derived backend answers only once it is built; until then, while it cannot be reached, or
without a mirrored store, reads fall back to the canonical tables, which always hold the truth
(an unreachable backend is logged).
"""

from __future__ import annotations

import logging

from memory_substrate.derived.base import DerivedBackend, GraphReader, VectorIndex
from memory_substrate.derived.file_graph import FileGraph
from memory_substrate.derived.mirror import Mirror
from memory_substrate.errors import MemorySubstrateError
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
    return reader


def vector_index(rt: Runtime, session: StoreSession) -> VectorIndex:
    name = str(session.get_config().get("semantic_backend") or "builtin")
    mirror = mirror_of(rt)
    if name == "builtin" or mirror is None:
        return _Builtin(session)
    backend = _ready(mirror, name, rt.namespace)
    if backend is None:
        return _Builtin(session)
    index: VectorIndex = backend.reader(rt.namespace)
    return index


class _Builtin:
    """The store's own vectors (exact cosine) behind the vector port."""

    name = "builtin"

    def __init__(self, session: StoreSession) -> None:
        self.session = session

    def vector_search(self, model, query, *, owner_type, limit):  # type: ignore[no-untyped-def]
        return self.session.vector_search(model, query, owner_type=owner_type, limit=limit)
