"""The configured graph reader and vector index of a namespace, for services to read through.

A derived backend answers only once it is built; until then (or without a mirrored store) reads
fall back to the canonical tables, which always hold the truth.
"""

from __future__ import annotations

from memory_substrate.derived.base import GraphReader, VectorIndex
from memory_substrate.derived.file_graph import FileGraph
from memory_substrate.derived.mirror import Mirror
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession


def mirror_of(rt: Runtime) -> Mirror | None:
    mirror = getattr(rt.store, "mirror", None)
    return mirror if isinstance(mirror, Mirror) else None


def graph_reader(rt: Runtime, session: StoreSession) -> GraphReader:
    name = str(session.get_config().get("graph_backend") or "file")
    mirror = mirror_of(rt)
    if name == "file" or mirror is None:
        return FileGraph(session)
    backend = mirror.indexes.backend(name)
    if not backend.is_built(rt.namespace):
        return FileGraph(session)
    reader: GraphReader = backend.reader(rt.namespace)
    return reader


def vector_index(rt: Runtime, session: StoreSession) -> VectorIndex:
    name = str(session.get_config().get("semantic_backend") or "builtin")
    mirror = mirror_of(rt)
    if name == "builtin" or mirror is None:
        return _Builtin(session)
    backend = mirror.indexes.backend(name)
    if not backend.is_built(rt.namespace):
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
