"""The graph toolset's surface state: which namespace a call reaches, its units of work, caches.

What a write does to the graph is graph/'s (graph/nodes.py, graph/triplets.py); this module
opens the unit of work (``Runtime.write``) the tools write through and says who states it.

One ``GraphMemory`` serves one MCP server. ``owner_id`` is the namespace. A server built for
a local client (stdio, in-process) may reach any namespace of its store, as the CLI can; a
server bound to a token (HTTP) reaches only its own namespace, whatever ``owner_id`` says, and
a different ``owner_id`` is refused before anything is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from memory_substrate.app import Memory
from memory_substrate.embed.base import Embedder
from memory_substrate.errors import NotFoundError, ValidationError
from memory_substrate.expiry import VisibleSession
from memory_substrate.graph.apply import Governance
from memory_substrate.graphmem import schemas
from memory_substrate.graphmem.cache import CachedEmbedder, LRUCache, SearchCache, TTLCache, Vector
from memory_substrate.graphmem.errors import log
from memory_substrate.models import MemoryObject
from memory_substrate.patch import Patch
from memory_substrate.runtime import Runtime
from memory_substrate.settings import Settings
from memory_substrate.storage.base import StoreSession

RUNTIMES_KEPT = 256  # namespaces whose runtimes stay built (graphmem.service.GraphMemory)

TOOL = "graph_memory"
MEMORY_SOURCE = "agent_inferred"
# Graph-toolset writes are direct API writes without cited evidence: "extracted" trust (2) makes
# them active, below observed (3) and human-curated/user-declared (4) claims, which they never
# supersede or contest (graph/claims.py).
EVIDENCE_STATUS = "extracted"


@dataclass
class Write:
    session: StoreSession  # expired objects hidden
    patch: Patch
    now: datetime
    raw: StoreSession  # everything, expired included (deletes, sweeps)


class GraphMemory:
    def __init__(self, memory: Memory, *, bound: bool = False) -> None:
        self.memory = memory
        self.base = memory.runtime
        # The limits are the Memory's settings (settings.py reads them, .env included). A bad value
        # (MAX_TEXT_LENGTH=abc) must not kill the server before a client can hear why: that limit
        # keeps its default, the error is logged, and every tool answers it.
        self.limits: Settings = memory.settings
        self.config_error: str | None = None
        if memory.settings.config_error is not None:
            self.config_error = (
                f"graph toolset configuration: {memory.settings.config_error}; "
                "fix the environment or .env and restart"
            )
            log.error("%s", self.config_error)
        self.bound = bound
        lim = self.limits
        self.embedding_cache = LRUCache[Vector](
            lim.cache_embeddings_maxsize, enabled=lim.cache_embeddings_enabled
        )
        self.search_cache = SearchCache(
            TTLCache(lim.cache_search_maxsize, lim.cache_search_ttl, enabled=lim.cache_search_enabled)
        )
        # Per-namespace runtimes, bounded: on an unbound server every caller may name a new
        # owner_id, and an unbounded map would grow with each one. An evicted runtime is rebuilt
        # on its next call (its embedder choice is one indexed probe).
        self._runtimes = LRUCache[Runtime](RUNTIMES_KEPT)
        self._embedders: dict[str, CachedEmbedder] = {}  # by model name (a handful)
        self._plain = LRUCache[Runtime](
            RUNTIMES_KEPT
        )  # other namespaces' runtimes, for their embedder choice

    # --- namespaces and runtimes ---------------------------------------------------------
    def namespace(self, owner_id: str | None) -> str:
        if owner_id is None:
            return self.base.namespace
        schemas.owner(owner_id)
        if self.bound and owner_id != self.base.namespace:
            raise ValidationError(
                f"owner_id {owner_id!r} is not reachable with this connection (its namespace is {self.base.namespace!r})"
            )
        return owner_id

    def embedder(self, namespace: str | None = None) -> Embedder | None:
        """The caching embedder of ``namespace`` (default: the base one). Namespaces may embed
        with different models (a store written before the default changed keeps its own:
        embed/choice.py); the cache keys embeddings by model, so one cache serves them all."""
        ns = namespace or self.base.namespace
        if ns == self.base.namespace:
            inner = self.base.embedder_or_none()
        else:
            plain = self._plain.get(ns)
            if plain is None:
                plain = self.base.for_namespace(ns)
                self._plain.put(ns, plain)
            inner = plain.embedder_or_none()
        if inner is None:
            return None
        cached = self._embedders.get(inner.name)
        if cached is None or cached.inner is not inner:
            cached = self._embedders[inner.name] = CachedEmbedder(inner, self.embedding_cache)
        return cast(Embedder, cached)

    def runtime(self, namespace: str) -> Runtime:
        """The namespace's runtime, sharing the store and clock, with the caching embedder."""
        rt = self._runtimes.get(namespace)
        if rt is None:
            # a copy: the caching embedder stays out of the four tools' reads
            rt = self.base.with_embedder(namespace, self.embedder(namespace))
            self._runtimes.put(namespace, rt)
        return rt

    def now(self) -> datetime:
        return self.base.clock()

    # --- sessions ------------------------------------------------------------------------
    @contextmanager
    def read(self, namespace: str) -> Iterator[StoreSession]:
        with self.runtime(namespace).read() as session:
            yield session

    @contextmanager
    def write(self, namespace: str, mode: str, reason: str | None = None) -> Iterator[Write]:
        """A write session (expired objects hidden) and a patch; commits the patch and
        invalidates the namespace's search cache on success."""
        rt = self.runtime(namespace)
        with rt.write(
            TOOL, mode, reason or f"graph toolset {mode}", hide_expired=True, summary={"tool": mode}
        ) as (
            session,
            patch,
        ):
            visible = cast(VisibleSession, session)
            yield Write(session, patch, visible.now, visible.unfiltered)
        self.search_cache.invalidate(namespace)

    def governance(self, reason: str) -> Governance:
        """Who states a graph-toolset write (graph/nodes.py, graph/triplets.py write it)."""
        return Governance(
            reason=reason,
            memory_source=MEMORY_SOURCE,
            scope_refs=[self.limits.graph_scope],
            extractor="graph_toolset",
            evidence_status=EVIDENCE_STATUS,
        )

    def change_marker(self, session: StoreSession) -> str | None:
        latest = session.list_patches(limit=1)
        return latest[0].id if latest else None

    # --- lookups -------------------------------------------------------------------------
    @staticmethod
    def node(session: StoreSession, node_id: str, field: str = "node_id") -> MemoryObject:
        obj = session.get_object(node_id) if node_id else None
        if obj is None or not schemas.is_graph_node(obj):
            raise NotFoundError(f"{field}: node {node_id!r} not found", details={"id": node_id})
        return obj
