"""Exact cosine search over an in-memory matrix, reloaded when the stored version changes.

Shared by backends that keep vectors as plain rows (SQLite). The cache is keyed by
(namespace, owner_type, model) and validated against a version counter that every vector
write bumps inside its transaction, so a reader never scores against a stale matrix.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.storage import vector_topk

Loader = Callable[[], tuple[list[str], npt.NDArray[np.float32]]]


class VectorCache:
    def __init__(self) -> None:
        self._entries: dict[Any, tuple[int, list[str], npt.NDArray[np.float32]]] = {}
        self._positions: dict[Any, dict[str, int]] = {}
        self._quantised: dict[Any, tuple[int, vector_topk.Quantised | None]] = {}
        self._lock = threading.Lock()

    def _entry(
        self, key: Any, version: int, load: Loader, cache: bool = True
    ) -> tuple[int, list[str], npt.NDArray[np.float32]]:
        if not cache:
            # The caller sees uncommitted vector writes: its matrix must never be shared, or a
            # rollback would leave a phantom under a version number a later commit reuses.
            ids, matrix = load()
            return (version, ids, matrix)
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or entry[0] != version:
            ids, matrix = load()
            entry = (version, ids, matrix)
            with self._lock:
                self._entries[key] = entry
                self._positions.pop(key, None)
                self._quantised.pop(key, None)
        return entry

    def forget(self, namespace: str) -> None:
        """Drop every cached matrix of a namespace (keys lead with it), e.g. after it was deleted."""
        with self._lock:
            for key in [k for k in self._entries if isinstance(k, tuple) and k and k[0] == namespace]:
                self._entries.pop(key, None)
                self._positions.pop(key, None)
                self._quantised.pop(key, None)

    def lookup(
        self, key: Any, version: int, load: Loader, owner_ids: list[str], *, cache: bool = True
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Rows of the cached matrix for these owners (loading it if stale)."""
        _, ids, matrix = self._entry(key, version, load, cache)
        if not cache:
            private = {oid: i for i, oid in enumerate(ids)}
            return {oid: matrix[private[oid]] for oid in owner_ids if oid in private}
        with self._lock:
            pos = self._positions.get(key)
            if pos is None:
                pos = {oid: i for i, oid in enumerate(ids)}
                self._positions[key] = pos
        return {oid: matrix[pos[oid]] for oid in owner_ids if oid in pos}

    def search(
        self, key: Any, version: int, load: Loader, query: npt.NDArray[np.float32], limit: int, *, cache: bool = True
    ) -> list[tuple[str, float]]:
        """The ``limit`` best (owner id, cosine), best first, ties in stored order (exact)."""
        version, ids, matrix = self._entry(key, version, load, cache)
        if not ids or matrix.shape[1] != query.shape[0]:
            return []
        quantised = self._quantised_of(key, version, matrix) if cache else None
        return [(ids[i], score) for i, score in vector_topk.top_k(matrix, quantised, query, limit)]

    def _quantised_of(self, key: Any, version: int, matrix: npt.NDArray[np.float32]) -> vector_topk.Quantised | None:
        """The int8 companion of a cached matrix, built on the second search of a version.

        The first search after a write scans in float32 as before, so a store that alternates
        writes and searches never pays for a copy it would throw away; a version that is
        searched again (the common, read-mostly case) gets it.
        """
        if len(matrix) < vector_topk.QUANTISE_FROM or not vector_topk.available():
            return None
        with self._lock:
            held = self._quantised.get(key)
            if held is None or held[0] != version:
                self._quantised[key] = (version, None)  # seen once: build on the next search
                return None
        if held[1] is not None:
            return held[1]
        quantised = vector_topk.quantise(matrix)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] == version and entry[2] is matrix:
                self._quantised[key] = (version, quantised)
        return quantised
