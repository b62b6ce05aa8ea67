"""Exact top-k cosine search that reads a quarter of the bytes: an int8 pass, then float32 rescoring.

A float32 scan of every stored vector is bound by memory bandwidth (100k x 384 floats is 150 MB
per query; at 1M segments it alone exceeds the search budget). Here each row is also kept as int8
with its own scale, and ``simsimd`` (a small compiled SIMD kernel library) scores the query
against the int8 matrix. Quantisation error is bounded per row, so the pass yields an interval
that surely holds each true score. Only rows whose interval can reach the k-th best lower bound
can be in the answer; they are rescored in float32 highest upper bound first, until none left can
reach the k-th exact score found so far. The answer is therefore the same set, in the same order,
as a full float32 scan (up to float32 rounding, ~1e-7), not an approximation.

Without ``simsimd`` (a platform with no wheel) or for small matrices, the plain float32 scan runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

_simsimd: Any
try:  # pragma: no cover - the import succeeds wherever the wheel exists
    import simsimd as _simsimd
except ImportError:  # pragma: no cover
    _simsimd = None

QUANTISE_FROM = 20_000  # rows; below this a float32 scan is already a fraction of a millisecond
# Float32 rounding of a dot product over a few thousand dimensions stays far below this; it keeps
# a row whose exact score ties the k-th one on the right side of the threshold.
ROUNDING_SLACK = 1e-5
RESCORE_BATCH = 512  # rows in the first float32 batch (2k if that is more); each later batch doubles


@dataclass(frozen=True)
class Quantised:
    """int8 rows with per-row scale, and what bounds each row's quantisation error (float32)."""

    codes: npt.NDArray[np.int8]
    inv_scale: npt.NDArray[np.float32]  # row value = code * inv_scale
    code_norm: npt.NDArray[np.float32]  # |dequantised row|
    error_norm: npt.NDArray[np.float32]  # |row - dequantised row|


def quantise(matrix: npt.NDArray[np.float32], batch: int = 8_192) -> Quantised:
    """Per-row int8 codes of ``matrix`` (in batches, so the temporaries stay small: 65,536-row
    batches of 256-d rows raised the peak memory of a 100k-segment search process by 160 MB)."""
    n = len(matrix)
    codes = np.empty(matrix.shape, dtype=np.int8)
    inv = np.empty(n, dtype=np.float32)
    code_norm = np.empty(n, dtype=np.float32)
    error_norm = np.empty(n, dtype=np.float32)
    for lo in range(0, n, batch):
        rows = matrix[lo : lo + batch]
        peak = np.abs(rows).max(axis=1)
        peak[peak == 0] = 1.0
        scale = (127.0 / peak).astype(np.float32)
        block = np.rint(rows * scale[:, None])
        codes[lo : lo + batch] = block
        deq = block / scale[:, None]
        inv[lo : lo + batch] = 1.0 / scale
        code_norm[lo : lo + batch] = np.linalg.norm(deq, axis=1)
        error_norm[lo : lo + batch] = np.linalg.norm(rows - deq, axis=1)
    # float32 arithmetic above is off by ~1e-7 per norm: covered by ROUNDING_SLACK.
    return Quantised(codes=codes, inv_scale=inv, code_norm=code_norm, error_norm=error_norm)


def available() -> bool:
    return _simsimd is not None


def dot(matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``matrix @ query`` without BLAS: its thread pool costs tens of milliseconds at p95 on a busy
    machine for a product that takes a tenth of a millisecond; einsum's loop is single-threaded."""
    scores: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, query.astype(np.float32))
    return scores


def full_scan(
    matrix: npt.NDArray[np.float32],
    query: npt.NDArray[np.float32],
    k: int,
    masked: npt.NDArray[np.intp] | None = None,
) -> list[tuple[int, float]]:
    """The reference: every row scored in float32; best first, ties by row order.

    ``masked`` rows (replaced or deleted in a cached matrix) never qualify.
    """
    scores = dot(matrix, query)
    if masked is not None and len(masked):
        scores[masked] = -np.inf
        k = min(k, len(scores) - len(masked))
    return _best(scores, np.arange(len(scores)), k)


def _best(scores: npt.NDArray[np.float32], rows: npt.NDArray[np.intp], k: int) -> list[tuple[int, float]]:
    k = min(k, len(rows))
    if k <= 0:
        return []
    if k < len(rows):
        part = np.argpartition(-scores, k - 1)
        kth = scores[part[k - 1]]
        keep = np.flatnonzero(scores >= kth)  # every tie of the k-th score, so ties order by row
    else:
        keep = np.arange(len(rows))
    order = keep[np.lexsort((rows[keep], -scores[keep]))][:k]
    return [(int(rows[i]), float(scores[i])) for i in order]


def top_k(
    matrix: npt.NDArray[np.float32],
    quantised: Quantised | None,
    query: npt.NDArray[np.float32],
    k: int,
    masked: npt.NDArray[np.intp] | None = None,
) -> list[tuple[int, float]]:
    """(row, cosine) of the ``k`` best rows, best first; same answer as ``full_scan``."""
    dead = 0 if masked is None else len(masked)
    if quantised is None or _simsimd is None or k <= 0 or k >= len(matrix) - dead:
        return full_scan(matrix, query, k, masked)
    q = query.astype(np.float32)
    rows, upper = candidates(quantised, q, k, masked)
    return _rescore(matrix, q, rows, upper, k)


def candidates(
    quantised: Quantised, q: npt.NDArray[np.float32], k: int, masked: npt.NDArray[np.intp] | None = None
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """The int8 pass: every row whose upper bound reaches the k-th best lower bound, with its upper
    bound (a superset of the answer; 0 < k < the live rows)."""
    q_peak = float(np.abs(q).max()) or 1.0
    q_scale = 127.0 / q_peak
    q_codes = np.rint(q * q_scale).astype(np.int8)
    q_deq = q_codes.astype(np.float64) / q_scale
    q_err = float(np.linalg.norm(q.astype(np.float64) - q_deq))
    q_norm = float(np.linalg.norm(q.astype(np.float64)))
    raw = np.asarray(_simsimd.cdist(q_codes[None, :], quantised.codes, metric="inner", out_dtype="float32"))[
        0
    ]
    approx = raw * quantised.inv_scale * np.float32(1.0 / q_scale)
    # q.v - qd.vd = q.(v - vd) + (q - qd).vd, each bounded by Cauchy-Schwarz.
    slack = np.float32(q_norm) * quantised.error_norm + np.float32(q_err) * quantised.code_norm
    slack += np.float32(ROUNDING_SLACK)
    if masked is not None and len(masked):
        approx[masked] = -np.inf  # both bounds -inf: a masked row is neither a threshold nor a candidate
    lower = approx - slack
    threshold = _kth_largest(lower, k)
    upper = approx + slack
    rows = np.flatnonzero(upper >= threshold)
    return rows, upper[rows]


def _rescore(
    matrix: npt.NDArray[np.float32],
    q: npt.NDArray[np.float32],
    rows: npt.NDArray[np.intp],
    upper: npt.NDArray[np.float32],
    k: int,
) -> list[tuple[int, float]]:
    """The ``k`` best of ``rows`` by their float32 score, rescoring as few as the bounds allow.

    Rows are rescored highest upper bound first, in growing batches, until no row left can reach
    the k-th exact score found so far. That score only rises as rows are added, so a row left
    out has an upper bound (its exact score or more) below the final k-th: it could be neither
    in the answer nor tied with it. The k-th *lower* bound that chose ``rows`` is loose (on 100k
    stored turns, 11k rows qualify for k = 51 and 22k for k = 136, each a float32 row of the
    default embedder's 784 dimensions copied and multiplied); the k-th exact score is much higher, and a few batches reach it.
    """
    done = max(2 * k, RESCORE_BATCH)  # the first batch
    if len(rows) <= done:
        return _best(dot(matrix[rows], q), rows, k)
    order = np.argsort(-upper, kind="stable")
    rows, upper = rows[order], upper[order]
    exact = dot(matrix[rows[:done]], q)
    while done < len(rows):
        kth = np.partition(exact, len(exact) - k)[len(exact) - k]
        reach = int(np.searchsorted(-upper, -kth, side="right"))  # rows whose upper bound >= kth
        if reach <= done:
            break
        nxt = min(reach, 2 * done)
        exact = np.concatenate([exact, dot(matrix[rows[done:nxt]], q)])
        done = nxt
    return _best(exact, rows[:done], k)


def _kth_largest(values: npt.NDArray[np.float32], k: int) -> np.float32:
    """The k-th largest value, exactly, partitioning only a likely top slice of the array.

    A strided sample proposes a cut expected to keep about 2k values; when fewer than k pass it,
    the whole array is partitioned instead.
    """
    n = len(values)
    step = 8
    if n >= 64 * k:
        sample = values[::step]
        r = min(len(sample), max(1, (2 * k) // step))
        cut = np.partition(sample, len(sample) - r)[len(sample) - r]
        top = values[values >= cut]
        if len(top) >= k:
            kth: np.float32 = np.partition(top, len(top) - k)[len(top) - k]
            return kth
    kth = np.partition(values, n - k)[n - k]
    return kth
