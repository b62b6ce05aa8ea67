"""The graph toolset's two caches: an LRU of query embeddings and a TTL cache of search results.

Hand-written (about 80 lines) rather than a dependency: both need an injectable clock and
thread safety, and the core install stays as it is.

Invalidation. The search cache must drop on every mutation of *either* toolset, including
writes made by another process on the same store. Every write of every surface is one patch,
so the newest patch id of a namespace is a store-level change marker: a search first reads it
(one indexed row) and, if it moved since the entries were cached, drops that namespace's
entries. Graph-toolset writes also clear their namespace at once.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from memory_substrate.embed.base import Embedder
from memory_substrate.graphmem.view_types import CacheStats, SearchBody, TTLCacheStats

V = TypeVar("V")
Vector = npt.NDArray[np.float32]


class LRUCache(Generic[V]):
    def __init__(self, maxsize: int, *, enabled: bool = True) -> None:
        self.maxsize, self.enabled = maxsize, enabled and maxsize > 0
        self._data: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            self.misses += 1
            return None

    def put(self, key: Hashable, value: V) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def expire(self, key: Hashable) -> None:
        """Drop an entry that ``get`` just found stale: its hit becomes a miss."""
        with self._lock:
            self._data.pop(key, None)
            self.hits -= 1
            self.misses += 1

    def drop(self, match: Callable[[Hashable], bool]) -> None:
        with self._lock:
            for key in [k for k in self._data if match(k)]:
                del self._data[key]

    def __len__(self) -> int:
        return len(self._data)

    def stats(self) -> CacheStats:
        return {
            "enabled": self.enabled,
            "size": len(self),
            "maxsize": self.maxsize,
            "hits": self.hits,
            "misses": self.misses,
        }


class TTLCache(Generic[V]):
    """An LRU whose entries each live ``ttl`` seconds; ``timer`` is injectable for tests."""

    def __init__(
        self, maxsize: int, ttl: float, *, enabled: bool = True, timer: Callable[[], float] = time.monotonic
    ) -> None:
        self.entries: LRUCache[tuple[float, V]] = LRUCache(maxsize, enabled=enabled)
        self.ttl, self.timer = ttl, timer

    def get(self, key: Hashable) -> V | None:
        hit = self.entries.get(key)
        if hit is None:
            return None
        expires, value = hit
        if expires <= self.timer():
            self.entries.expire(key)
            return None
        return value

    def put(self, key: Hashable, value: V) -> None:
        self.entries.put(key, (self.timer() + self.ttl, value))

    def drop(self, match: Callable[[Hashable], bool]) -> None:
        self.entries.drop(match)

    def __len__(self) -> int:
        return len(self.entries)

    def stats(self) -> TTLCacheStats:
        return {**self.entries.stats(), "ttl": self.ttl}


class SearchCache:
    """Search results per namespace, valid while the namespace's newest patch is unchanged."""

    def __init__(self, cache: TTLCache[SearchBody]) -> None:
        self.cache = cache
        self._marker: dict[str, str | None] = {}

    def get(self, namespace: str, marker: str | None, key: Hashable) -> SearchBody | None:
        if self._marker.get(namespace, marker) != marker:
            self.invalidate(namespace)
        self._marker[namespace] = marker
        return self.cache.get((namespace, key))

    def put(self, namespace: str, key: Hashable, value: SearchBody) -> None:
        self.cache.put((namespace, key), value)

    def invalidate(self, namespace: str) -> None:
        self.cache.drop(lambda k: isinstance(k, tuple) and k[0] == namespace)


class CachedEmbedder:
    """An ``Embedder`` whose embeddings come from an LRU when the same text was embedded
    before (queries and documents keyed apart: some models embed them differently). A new
    fact is embedded once for ``auto_link`` and reused when its patch stores the vector."""

    def __init__(self, inner: Embedder, cache: LRUCache[Vector]) -> None:
        self.inner, self.cache = inner, cache
        self.name, self.dimensions = inner.name, inner.dimensions

    def embed_documents(self, texts: list[str]) -> Vector:
        hits = [self.cache.get((self.inner.name, "doc", t)) for t in texts]
        missing = [i for i, h in enumerate(hits) if h is None]
        if missing:
            fresh = self.inner.embed_documents([texts[i] for i in missing])
            for row, i in enumerate(missing):
                hits[i] = fresh[row]
                self.cache.put((self.inner.name, "doc", texts[i]), fresh[row])
        if not texts:
            return self.inner.embed_documents(texts)
        # every miss was filled just above: no row is None
        return np.stack([h for h in hits if h is not None]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> Vector:
        key = (self.inner.name, "query", text)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        vec = self.inner.embed_query(text)
        self.cache.put(key, vec)
        return vec
