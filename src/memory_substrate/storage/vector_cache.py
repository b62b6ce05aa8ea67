"""Exact cosine search over an in-memory matrix, kept current by the writes of this process.

Shared by backends that keep vectors as plain rows (SQLite). The cache is keyed by
(namespace, owner_type, model) and validated against a version counter that every vector
write bumps inside its transaction, so a reader never scores against a stale matrix.

Reloading a whole partition after every write made each write pay for the next read (about
9 ms per 2,000 entity vectors, far more for segment partitions). A write session therefore
records what it changed as :class:`VectorStep` s, each taking the counter from ``v_from`` to
``v_to``; after its commit :meth:`VectorCache.advance` applies them to a cached matrix that sits
exactly at the first step's ``v_from``. The write lock makes a transaction's steps contiguous,
so a matrix advanced this way equals a fresh load. Any change the steps do not describe (another
process, a path that does not record steps) leaves the counter ahead of the cache and the next
read reloads, as before.

Advanced matrices are copy-on-write for readers: new rows go into spare capacity past the end
of the published view, and a replaced or removed row is masked (its id becomes ``None``) rather
than overwritten. Masked rows are compacted away once they pass a quarter of the matrix.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

Loader = Callable[[], tuple[list[str], npt.NDArray[np.float32]]]
Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class VectorStep:
    """One committed change of a partition's vectors, from counter ``v_from`` to ``v_to``."""

    owner_type: str
    v_from: int | None  # None: the counter was created by this write, no earlier cache can match
    v_to: int
    model: str | None = None  # model of ``upserts``
    upserts: Sequence[tuple[str, Matrix]] = ()
    removals: Sequence[tuple[str, str]] = ()  # (owner_id, model)


@dataclass
class _Entry:
    version: int
    ids: list[str | None]  # None marks a masked row (replaced or removed)
    buf: Matrix  # rows [0, len(ids)) are live data; rows past it are spare capacity
    dead: int = 0
    positions: dict[str, int] | None = field(default=None)
    dead_rows: npt.NDArray[np.intp] | None = field(default=None)

    @property
    def matrix(self) -> Matrix:
        return self.buf[: len(self.ids)]

    def masked(self) -> npt.NDArray[np.intp]:
        if self.dead_rows is None:
            self.dead_rows = np.flatnonzero(
                np.fromiter((oid is None for oid in self.ids), dtype=bool, count=len(self.ids))
            )
        return self.dead_rows

    def index(self) -> dict[str, int]:
        if self.positions is None:
            self.positions = {oid: i for i, oid in enumerate(self.ids) if oid is not None}
        return self.positions


def _score(matrix: Matrix, query: Matrix) -> Matrix:
    # einsum, not ``matrix @ query``: the BLAS matrix-vector product spins up its thread pool,
    # which on a busy machine costs tens of milliseconds at p95 for a product that takes 0.1 ms.
    return np.einsum("ij,j->i", matrix, query.astype(np.float32))


class VectorCache:
    def __init__(self) -> None:
        self._entries: dict[Any, _Entry] = {}
        self._lock = threading.Lock()

    def _entry(self, key: Any, version: int, load: Loader, cache: bool = True) -> _Entry:
        if not cache:
            # The caller sees uncommitted vector writes: its matrix must never be shared, or a
            # rollback would leave a phantom under a version number a later commit reuses.
            ids, matrix = load()
            return _Entry(version, list(ids), matrix)
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or entry.version != version:
            ids, matrix = load()
            entry = _Entry(version, list(ids), matrix)
            with self._lock:
                self._entries[key] = entry
        return entry

    def forget(self, namespace: str) -> None:
        """Drop every cached matrix of a namespace (keys lead with it), e.g. after it was deleted."""
        with self._lock:
            for key in [k for k in self._entries if isinstance(k, tuple) and k and k[0] == namespace]:
                self._entries.pop(key, None)

    def advance(self, namespace: str, steps: Sequence[VectorStep]) -> None:
        """Apply the steps of a committed transaction to the matrices cached at their start."""
        if not steps:
            return
        with self._lock:
            for key, entry in list(self._entries.items()):
                if not (isinstance(key, tuple) and len(key) == 3 and key[0] == namespace):
                    continue
                _, owner_type, model = key
                mine = [s for s in steps if s.owner_type == owner_type]
                if not mine or mine[0].v_from != entry.version:
                    continue
                updated: _Entry | None = entry
                for step in mine:
                    if updated is None or step.v_from != updated.version:
                        break
                    updated = _apply(updated, step, model)
                if updated is None:
                    self._entries.pop(key, None)  # a change it cannot take in place: reload on next read
                else:
                    self._entries[key] = updated

    def lookup(
        self, key: Any, version: int, load: Loader, owner_ids: list[str], *, cache: bool = True
    ) -> dict[str, Matrix]:
        """Rows of the cached matrix for these owners (loading it if stale)."""
        entry = self._entry(key, version, load, cache)
        with self._lock:
            pos = entry.index()
        matrix = entry.matrix
        return {oid: matrix[pos[oid]] for oid in owner_ids if oid in pos}

    def search(
        self, key: Any, version: int, load: Loader, query: Matrix, limit: int, *, cache: bool = True
    ) -> list[tuple[str, float]]:
        entry = self._entry(key, version, load, cache)
        ids, matrix = entry.ids, entry.matrix
        live = len(ids) - entry.dead
        if not live or matrix.shape[1] != query.shape[0]:
            return []
        scores = _score(matrix, query)
        if entry.dead:
            scores[entry.masked()] = -np.inf
        k = min(limit, live)
        top = np.argpartition(-scores, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(oid, float(scores[i])) for i in top if (oid := ids[i]) is not None][:k]


def _apply(entry: _Entry, step: VectorStep, model: str) -> _Entry | None:
    """A new entry with ``step`` applied (``entry`` itself is left as readers see it)."""
    removed = {oid for oid, m in step.removals if m == model}
    upserts = list(step.upserts) if step.model == model else []
    if step.model != model:  # an owner holds one vector: writing it under another model replaces ours
        removed |= {oid for oid, _ in step.upserts}
    if not removed and not upserts:
        return _Entry(step.v_to, entry.ids, entry.buf, entry.dead, entry.positions)
    if upserts and (len(entry.ids) == 0 or any(v.shape != (entry.buf.shape[1],) for _, v in upserts)):
        return None  # first rows of a partition, or a dimension change: a reload sets the shape
    ids = list(entry.ids)
    positions = dict(entry.index())
    dead = entry.dead
    for oid in removed | {oid for oid, _ in upserts}:
        i = positions.pop(oid, None)
        if i is not None:
            ids[i] = None
            dead += 1
    latest = dict(upserts)  # the last vector of an owner written twice in one step wins
    buf = entry.buf
    need = len(ids) + len(latest)
    if need > buf.shape[0]:
        grown = np.empty((max(need, 2 * buf.shape[0], 64), buf.shape[1]), dtype=np.float32)
        grown[: len(ids)] = buf[: len(ids)]
        buf = grown
    for oid, vec in latest.items():
        buf[len(ids)] = np.asarray(vec, dtype=np.float32)
        positions[oid] = len(ids)
        ids.append(oid)
    if dead > max(64, len(ids) // 4):
        keep = [i for i, oid in enumerate(ids) if oid is not None]
        compact = buf[keep]
        kept_ids = [ids[i] for i in keep]
        return _Entry(step.v_to, list(kept_ids), compact, 0, None)
    return _Entry(step.v_to, ids, buf, dead, positions)
