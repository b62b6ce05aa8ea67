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
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.embed.base import Embedder


class LRUCache:
    def __init__(self, maxsize: int, *, enabled: bool = True) -> None:
        self.maxsize, self.enabled = maxsize, enabled and maxsize > 0
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            self.misses += 1
            return None

    def put(self, key: Hashable, value: Any) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)

    def stats(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "size": len(self),
            "maxsize": self.maxsize,
            "hits": self.hits,
            "misses": self.misses,
        }


class TTLCache(LRUCache):
    """LRU with a time-to-live per entry; ``timer`` is injectable for tests."""

    def __init__(
        self, maxsize: int, ttl: float, *, enabled: bool = True, timer: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(maxsize, enabled=enabled)
        self.ttl, self.timer = ttl, timer

    def get(self, key: Hashable) -> Any | None:
        hit = super().get(key)
        if hit is None:
            return None
        expires, value = hit
        if expires <= self.timer():
            with self._lock:
                self._data.pop(key, None)
                self.hits -= 1
                self.misses += 1
            return None
        return value

    def put(self, key: Hashable, value: Any) -> None:
        super().put(key, (self.timer() + self.ttl, value))

    def drop(self, match: Callable[[Hashable], bool]) -> None:
        with self._lock:
            for key in [k for k in self._data if match(k)]:
                del self._data[key]

    def stats(self) -> dict[str, Any]:
        return {**super().stats(), "ttl": self.ttl}


class SearchCache:
    """Search results per namespace, valid while the namespace's newest patch is unchanged."""

    def __init__(self, cache: TTLCache) -> None:
        self.cache = cache
        self._marker: dict[str, str | None] = {}

    def get(self, namespace: str, marker: str | None, key: Hashable) -> Any | None:
        if self._marker.get(namespace, marker) != marker:
            self.invalidate(namespace)
        self._marker[namespace] = marker
        return self.cache.get((namespace, key))

    def put(self, namespace: str, key: Hashable, value: Any) -> None:
        self.cache.put((namespace, key), value)

    def invalidate(self, namespace: str) -> None:
        self.cache.drop(lambda k: isinstance(k, tuple) and k[0] == namespace)


class CachedEmbedder:
    """An ``Embedder`` whose embeddings come from an LRU when the same text was embedded
    before (queries and documents keyed apart: some models embed them differently). A new
    fact is embedded once for ``auto_link`` and reused when its patch stores the vector."""

    def __init__(self, inner: Embedder, cache: LRUCache) -> None:
        self.inner, self.cache = inner, cache
        self.name, self.dimensions = inner.name, inner.dimensions

    def embed_documents(self, texts: list[str]) -> npt.NDArray[np.float32]:
        hits: list[Any] = [self.cache.get((self.inner.name, "doc", t)) for t in texts]
        missing = [i for i, h in enumerate(hits) if h is None]
        if missing:
            fresh = self.inner.embed_documents([texts[i] for i in missing])
            for row, i in enumerate(missing):
                hits[i] = fresh[row]
                self.cache.put((self.inner.name, "doc", texts[i]), fresh[row])
        if not texts:
            return self.inner.embed_documents(texts)
        return np.stack(hits).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        key = (self.inner.name, "query", text)
        hit = self.cache.get(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        vec = self.inner.embed_query(text)
        self.cache.put(key, vec)
        return vec
