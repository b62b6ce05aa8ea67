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
read reloads the partition whole.

Advanced matrices are copy-on-write for readers: new rows go into spare capacity past the end
of the published view, and a replaced or removed row is masked (its id becomes ``None``) rather
than overwritten. Masked rows are compacted away once they pass a quarter of the matrix.

From ``vector_topk.QUANTISE_FROM`` rows a matrix also gets an int8 companion (see
``vector_topk``), built on the second search after a load and from then on extended row by row
by the same steps (each row's codes depend on that row alone), so a write never throws it away.

A cached matrix keeps only the columns some row uses. The default embedder's vectors are
``[English | multilingual | language]`` parts of which a text fills one (``embed.gated``): on a
namespace in English alone, 528 of 784 columns are zero in every row, and a search streamed them
all (int8 pass and float32 rescoring) to add nothing to any score. The query is cut to the same
columns, so every score is the one the full rows give. A write whose vector uses a column the
matrix left out (the first text in another language) widens the matrix in place: a copy of its
rows with zero columns added, not a reload of the partition from the store, which a bulk import's
background embedding would otherwise send every search to after each of its batches.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.storage import vector_topk

Loader = Callable[[], tuple[list[str], npt.NDArray[np.float32]]]
Matrix = npt.NDArray[np.float32]

# A matrix is kept narrower when its rows use fewer than this share of the columns.
NARROW_BELOW = 0.75


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
    quant: _QuantBuf | None = None  # int8 companion, rows aligned with ``buf``
    searched: bool = False  # searched once since its load: the next search builds ``quant``
    cols: npt.NDArray[np.intp] | None = None  # the columns ``buf`` keeps (None: every one)
    width: int = -1  # the vectors' full dimension (-1: ``buf``'s own)

    @property
    def dim(self) -> int:
        return self.buf.shape[1] if self.width < 0 else self.width

    def narrowed(self, vec: Matrix) -> Matrix | None:
        """A full-width vector as ``buf`` keeps it; None when it uses a column ``buf`` left out."""
        if self.cols is None:
            return vec
        left_out = np.ones(self.dim, dtype=bool)
        left_out[self.cols] = False
        if np.any(vec[left_out] != 0):
            return None
        return vec[self.cols]

    def widened(self, row: Matrix) -> Matrix:
        """A row of ``buf`` at the vectors' full width."""
        if self.cols is None:
            return row
        out = np.zeros(self.dim, dtype=np.float32)
        out[self.cols] = row
        return out

    @property
    def matrix(self) -> Matrix:
        return self.buf[: len(self.ids)]

    def kept_from(self, entry: _Entry) -> _Entry:
        """This entry with ``entry``'s columns."""
        self.cols, self.width = entry.cols, entry.width
        return self

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


@dataclass(frozen=True)
class _QuantBuf:
    """``vector_topk.Quantised`` arrays with spare capacity, appended to like ``_Entry.buf``."""

    codes: npt.NDArray[np.int8]
    inv_scale: Matrix
    code_norm: Matrix
    error_norm: Matrix

    @classmethod
    def of(cls, q: vector_topk.Quantised, capacity: int) -> _QuantBuf:
        dim = q.codes.shape[1]
        out = cls(
            np.empty((capacity, dim), dtype=np.int8),
            np.empty(capacity, dtype=np.float32),
            np.empty(capacity, dtype=np.float32),
            np.empty(capacity, dtype=np.float32),
        )
        out.put(0, q)
        return out

    def put(self, at: int, q: vector_topk.Quantised) -> None:
        end = at + len(q.codes)
        self.codes[at:end] = q.codes
        self.inv_scale[at:end] = q.inv_scale
        self.code_norm[at:end] = q.code_norm
        self.error_norm[at:end] = q.error_norm

    def view(self, n: int) -> vector_topk.Quantised:
        return vector_topk.Quantised(
            self.codes[:n], self.inv_scale[:n], self.code_norm[:n], self.error_norm[:n]
        )

    def grown(self, n: int, capacity: int) -> _QuantBuf:
        return _QuantBuf.of(self.view(n), capacity)

    def taken(self, rows: list[int]) -> _QuantBuf:
        q = vector_topk.Quantised(
            self.codes[rows], self.inv_scale[rows], self.code_norm[rows], self.error_norm[rows]
        )
        return _QuantBuf.of(q, len(rows))


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
            entry = _loaded(version, ids, matrix)
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
        return {oid: entry.widened(matrix[pos[oid]]) for oid in owner_ids if oid in pos}

    def search(
        self, key: Any, version: int, load: Loader, query: Matrix, limit: int, *, cache: bool = True
    ) -> list[tuple[str, float]]:
        """The ``limit`` best (owner id, cosine), best first, ties in stored order (exact)."""
        entry = self._entry(key, version, load, cache)
        ids, matrix = entry.ids, entry.matrix
        live = len(ids) - entry.dead
        if not live or entry.dim != query.shape[0]:
            return []
        quant = self._quantised(entry) if cache else None
        masked = entry.masked() if entry.dead else None
        q = query if entry.cols is None else np.asarray(query, dtype=np.float32)[entry.cols]
        hits = vector_topk.top_k(matrix, quant, q, min(limit, live), masked)
        return [(oid, score) for i, score in hits if (oid := ids[i]) is not None]

    def _quantised(self, entry: _Entry) -> vector_topk.Quantised | None:
        """The int8 companion of a cached matrix, built on its second search.

        The first search after a load scans in float32, so a matrix searched once and dropped
        never pays for a copy; after that, commits of this process extend it (``_apply``).
        """
        n = len(entry.ids)
        if n < vector_topk.QUANTISE_FROM or not vector_topk.available():
            return None
        if entry.quant is None:
            if not entry.searched:
                entry.searched = True
                return None
            built = _QuantBuf.of(vector_topk.quantise(entry.matrix), entry.buf.shape[0])
            with self._lock:
                if entry.quant is None:
                    entry.quant = built
        assert entry.quant is not None
        return entry.quant.view(n)


def used_columns(matrix: Matrix, batch: int = 8_192) -> npt.NDArray[np.intp] | None:
    """The columns some row of ``matrix`` is non-zero in; None when that is most of them (or none:
    nothing to gain)."""
    n, dim = matrix.shape
    used = np.zeros(dim, dtype=bool)
    for lo in range(0, n, batch):
        used |= np.any(matrix[lo : lo + batch] != 0, axis=0)
    count = int(used.sum())
    if count == 0 or count >= NARROW_BELOW * dim:
        return None
    return np.flatnonzero(used)


def _loaded(version: int, ids: list[str], matrix: Matrix) -> _Entry:
    """A cache entry for a loaded matrix, kept to the columns its rows use."""
    cols = used_columns(matrix) if len(matrix) else None
    if cols is None:
        return _Entry(version, list(ids), matrix)
    return _Entry(version, list(ids), np.ascontiguousarray(matrix[:, cols]), cols=cols, width=matrix.shape[1])


def _apply(entry: _Entry, step: VectorStep, model: str) -> _Entry | None:
    """A new entry with ``step`` applied (``entry`` itself is left as readers see it)."""
    removed = {oid for oid, m in step.removals if m == model}
    upserts = list(step.upserts) if step.model == model else []
    if step.model != model:  # an owner holds one vector: writing it under another model replaces ours
        removed |= {oid for oid, _ in step.upserts}
    if not removed and not upserts:
        return _Entry(
            step.v_to,
            entry.ids,
            entry.buf,
            entry.dead,
            entry.positions,
            entry.dead_rows,
            entry.quant,
            entry.searched,
        ).kept_from(entry)
    if upserts and len(entry.ids) == 0 and not removed:
        # The first rows of a partition cached empty: the matrix is theirs alone.
        latest = {oid: np.asarray(vec, dtype=np.float32) for oid, vec in upserts}
        if len({v.shape for v in latest.values()}) != 1 or latest[next(iter(latest))].ndim != 1:
            return None
        return _loaded(step.v_to, list(latest), np.stack(list(latest.values())))
    if upserts and (len(entry.ids) == 0 or any(v.shape != (entry.dim,) for _, v in upserts)):
        return None  # a dimension change: a reload sets the shape
    full = [np.asarray(vec, dtype=np.float32) for _, vec in upserts]
    if entry.cols is not None and upserts:
        # A column the matrix left out is used now (a new language's slot): the matrix takes it
        # in, its rows zero there, instead of a reload from the store.
        entry = _widened(entry, np.stack(full))
    narrowed: list[tuple[str, Matrix]] = []
    for (oid, _), vec in zip(upserts, full, strict=True):
        kept = entry.narrowed(vec)
        if kept is None:
            return None  # not after ``_widened``; a reload is the safe answer
        narrowed.append((oid, kept))
    ids = list(entry.ids)
    positions = dict(entry.index())
    quant = entry.quant
    dead = entry.dead
    for oid in removed | {oid for oid, _ in upserts}:
        i = positions.pop(oid, None)
        if i is not None:
            ids[i] = None
            dead += 1
    latest = dict(narrowed)  # the last vector of an owner written twice in one step wins
    buf = entry.buf
    need = len(ids) + len(latest)
    if need > buf.shape[0]:
        # 1.25x: a copy every quarter of growth, and at most a quarter of the matrix held spare
        grown = np.empty((max(need, buf.shape[0] + buf.shape[0] // 4, 64), buf.shape[1]), dtype=np.float32)
        grown[: len(ids)] = buf[: len(ids)]
        buf = grown
        if quant is not None:
            quant = quant.grown(len(ids), buf.shape[0])
    start = len(ids)
    for oid, vec in latest.items():
        buf[len(ids)] = vec
        positions[oid] = len(ids)
        ids.append(oid)
    if quant is not None and len(ids) > start:
        quant.put(start, vector_topk.quantise(buf[start : len(ids)]))
    if dead > max(64, len(ids) // 4):
        keep = [i for i, oid in enumerate(ids) if oid is not None]
        compact = buf[keep]
        kept_ids = [ids[i] for i in keep]
        taken = None if quant is None else quant.taken(keep)
        return _Entry(step.v_to, list(kept_ids), compact, 0, None, quant=taken).kept_from(entry)
    return _Entry(step.v_to, ids, buf, dead, positions, quant=quant, searched=entry.searched).kept_from(entry)


def _widened(entry: _Entry, vectors: Matrix) -> _Entry:
    """``entry`` keeping also the columns ``vectors`` use that it left out (itself when none): a
    copy of its rows with zero columns added (every row is zero where it left a column out), its
    int8 companion likewise (a zero codes as 0 and leaves the row's scale and norms as they are).
    At ``NARROW_BELOW`` of the columns or more it keeps every one."""
    assert entry.cols is not None
    used = np.zeros(entry.dim, dtype=bool)
    used[entry.cols] = True
    if not np.any(np.any(vectors[:, ~used] != 0, axis=0)):
        return entry
    used |= np.any(vectors != 0, axis=0)
    cols = np.flatnonzero(used) if used.sum() < NARROW_BELOW * entry.dim else np.arange(entry.dim)
    at = np.searchsorted(cols, entry.cols)  # where the kept columns go among the new ones
    n, capacity = len(entry.ids), entry.buf.shape[0]
    buf = np.zeros((capacity, len(cols)), dtype=np.float32)
    buf[:n, at] = entry.buf[:n]
    quant = None
    if entry.quant is not None:
        old = entry.quant
        codes = np.zeros((capacity, len(cols)), dtype=np.int8)
        codes[:n, at] = old.codes[:n]
        quant = _QuantBuf(codes, old.inv_scale.copy(), old.code_norm.copy(), old.error_norm.copy())
    out = _Entry(
        entry.version, entry.ids, buf, entry.dead, entry.positions, entry.dead_rows, quant, entry.searched
    )
    if len(cols) == entry.dim:
        return out  # every column: cols None, width the buffer's own
    out.cols, out.width = cols, entry.dim
    return out
