"""Segment vectors made after capture: the queue, its drain and the background worker.

Why: the default embedder (``use-gated``) embeds English turns with a static model (a table
look-up) and every other language with the Universal Sentence Encoder (a network pass per turn,
pure numpy), so a capture in German took several times as long as an English one. A capture now
stores every turn, its full-text row and the vectors that are cheap (``Embedder.deferrable``
says which are not), and leaves the rest to this module; search finds those turns by their words
(and by whatever vectors exist) until their vectors are written.

The queue is the extraction queue's table (``jobs``, kind ``embed``): one job per source, whose
``data["segments"]`` lists the segment ids still without a vector, written in the capture's own
transaction. So a store closed (or a process killed) with work pending loses nothing: the next
``Memory`` opened on the namespace finds the jobs and resumes. A failed batch leaves its jobs
``retrying`` with the error (``failed`` after ``jobs.MAX_ATTEMPTS``), shown by ``status`` in
``memory_maintain structure``; ``memory_maintain embed`` drains the queue now (and with
``retry_failed`` puts failed jobs back first).

The worker is one daemon thread per store and namespace, started by the first capture that
defers anything (or by opening a namespace with work pending), stopped when the store closes.
It embeds batches once captures have paused for ``IDLE_S``, and while they go on only a small
batch every ``MAX_WAIT_S``: on a loaded machine the encoder beside a burst of captures would take
the CPU they need (a batch of 512 German turns is ~0.5 s of a quiet core, 1.5 s of a busy one).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import NotRequired, TypedDict

import numpy as np
import numpy.typing as npt

from memory_substrate.embed import foreground
from memory_substrate.embed.base import Embedder
from memory_substrate.graph import jobs
from memory_substrate.indexing import segment_embedding_text, segment_vector_id
from memory_substrate.models import Job
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import new_id, now_iso

log = logging.getLogger(__name__)

EMBED = "embed"
BATCH = 512  # segments a drain embeds and writes in one go (~0.5 s of the encoder on one quiet core)
PIECE = 4  # ... the worker in pieces of this many (~5 ms on a quiet core), each once no read runs
IDLE_S = 0.5  # the worker waits for captures to pause this long ...
MAX_WAIT_S = 10.0  # ... but while they go on, still embeds a small batch this often,
BUSY_BATCH = 64  # this many segments (~1% of a core), so the queue always moves
RETRY_S = 5.0  # after a failed batch
WAITING = ("pending", "retrying")
_ALL = 1_000_000


class EmbedFailure(TypedDict):
    source_id: str
    status: str
    attempts: int
    segments: int
    last_error: str | None


class EmbedQueue(TypedDict):
    """What waits for its vectors (``memory_maintain structure`` and ``embed`` show it)."""

    segments_pending: int
    segments_failed: int
    jobs: dict[str, int]
    failures: NotRequired[list[EmbedFailure]]


class EmbedStep(TypedDict):
    """One drain: vectors written, jobs taken, jobs failed, and why nothing could be embedded."""

    embedded: int
    jobs: int
    failed: int
    reason: NotRequired[object]  # ``Runtime.semantic_status``'s reason: no embedder
    error: NotRequired[str]


class EmbedTotals(TypedDict):
    """Drains until nothing waits: their totals, and the error that stopped them."""

    embedded: int
    jobs: int
    failed: int
    error: NotRequired[object]


def deferrable(embedder: Embedder | None, texts: Sequence[str], *, background: bool) -> list[bool]:
    """Which texts a capture leaves to the background (none when ``background`` is off or the
    embedder makes every vector cheaply)."""
    ask = getattr(embedder, "deferrable", None)
    if not background or ask is None or not texts:
        return [False] * len(texts)
    return list(ask(list(texts)))


def enqueue(session: StoreSession, source_id: str, segment_ids: Sequence[str]) -> None:
    """Record that these segments of ``source_id`` still need their vectors (in the caller's
    transaction). A source with a job still waiting gets the new ids added to it."""
    if not segment_ids:
        return
    now = now_iso()
    job = session.get_job(EMBED, source_id)
    if job is None:
        job = Job(new_id("job"), EMBED, source_id, "pending", 0, now, now, None, {})
    waiting = list(job.data.get("segments") or []) if job.status in WAITING else []
    ids = list(dict.fromkeys([*waiting, *segment_ids]))
    if job.status not in WAITING:
        job.attempts = 0
    job.status, job.updated_at, job.error = "pending", now, None
    job.data = {**job.data, "segments": ids, "count": len(ids)}
    session.put_job(job)


def status(session: StoreSession, *, failures: int = 5) -> EmbedQueue:
    """How many segments wait for their vectors, the jobs by state, and the last failures."""
    waiting = session.list_jobs(kind=EMBED, statuses=[*WAITING, "failed"], limit=_ALL)
    out: EmbedQueue = {
        "segments_pending": sum(int(j.data.get("count", 0)) for j in waiting if j.status in WAITING),
        "segments_failed": sum(int(j.data.get("count", 0)) for j in waiting if j.status == "failed"),
        "jobs": jobs.queue_status(session, EMBED),
    }
    troubled = [j for j in waiting if j.error][:failures]
    if troubled:
        out["failures"] = [
            {
                "source_id": j.target_id,
                "status": j.status,
                "attempts": j.attempts,
                "segments": int(j.data.get("count", 0)),
                "last_error": j.error,
            }
            for j in troubled
        ]
    return out


def queued_segments(session: StoreSession) -> int:
    """Segments whose vectors wait in the queue (failed jobs included: they wait for a retry)."""
    return sum(
        int(j.data.get("count", 0))
        for j in session.list_jobs(kind=EMBED, statuses=[*WAITING, "failed"], limit=_ALL)
    )


def pending_count(session: StoreSession) -> int:
    counts = session.job_counts(EMBED)
    return sum(counts.get(s, 0) for s in WAITING)


# One drain at a time per process: the worker and a ``memory_maintain embed`` call must not
# embed the same batch twice (two processes may: the vectors are the same, upserts converge).
_DRAINING = threading.Lock()


def drain(rt: Runtime, *, limit: int = BATCH, pause: Callable[[], object] | None = None) -> EmbedStep:
    """Embed up to about ``limit`` waiting segments (whole jobs, at least one) and write their
    vectors; a failure is recorded on the jobs taken and returned, never raised. ``pause`` (the
    worker's): called before each piece of ``PIECE`` texts and before the write, to wait for the
    background's turn (``embed.foreground``); without it (``memory_maintain embed``) the batch is
    embedded at once, and a worker's batch under way stops yielding until this one has run."""
    embedder = rt.embedder_or_none()
    with contextlib.ExitStack() as held:
        if pause is None:
            held.enter_context(foreground.urgent())
        held.enter_context(_DRAINING)
        return _drain(rt, embedder, limit, pause)


def _drain(
    rt: Runtime, embedder: Embedder | None, limit: int, pause: Callable[[], object] | None
) -> EmbedStep:
    with rt.read_with_expired() as session:
        taken = _take(session, limit)
        segments = {
            j.target_id: session.get_segments(j.target_id, segment_ids=j.data.get("segments") or [])
            for j in taken
        }
    if not taken:
        return {"embedded": 0, "jobs": 0, "failed": 0}
    if embedder is None:
        return {"embedded": 0, "jobs": 0, "failed": 0, "reason": rt.semantic_status().get("reason")}
    # A reindex may have made some meanwhile (it embeds every segment without a vector).
    with rt.read_with_expired() as session:
        made = session.get_vectors(
            embedder.name,
            "segment",
            [segment_vector_id(s.source_id, s.id) for j in taken for s in segments[j.target_id]],
        )
    flat = [
        s for j in taken for s in segments[j.target_id] if segment_vector_id(s.source_id, s.id) not in made
    ]
    try:
        texts = [segment_embedding_text(s.text, s.metadata) for s in flat]
        vectors: npt.NDArray[np.float32] | list[npt.NDArray[np.float32]] = (
            _embed(embedder, texts, pause) if flat else []
        )
    except Exception as exc:  # a model that fails must not lose the work: it stays queued, with the error
        log.exception("deferred embedding failed")
        _fail(rt, taken, f"{type(exc).__name__}: {exc}")
        return {
            "embedded": 0,
            "jobs": len(taken),
            "failed": len(taken),
            "error": f"{type(exc).__name__}: {exc}",
        }
    rows = [(segment_vector_id(s.source_id, s.id), vectors[i]) for i, s in enumerate(flat)]
    if pause is not None:
        pause()
    with rt.write("memory_maintain", EMBED, None, embed=False) as (session, _patch):
        if rows:
            session.upsert_vectors(embedder.name, "segment", rows)
        for job in taken:
            _settle(session, job)
    return {"embedded": len(rows), "jobs": len(taken), "failed": 0}


def _embed(
    embedder: Embedder, texts: list[str], pause: Callable[[], object] | None
) -> npt.NDArray[np.float32]:
    """The texts' vectors, embedded in pieces of ``PIECE`` with a ``pause`` before each (at once
    without one). A vector does not depend on the texts embedded beside it."""
    if pause is None:
        return embedder.embed_documents(texts)
    pieces = []
    for lo in range(0, len(texts), PIECE):
        pause()
        pieces.append(np.asarray(embedder.embed_documents(texts[lo : lo + PIECE]), dtype=np.float32))
    return np.concatenate(pieces)


def _take(session: StoreSession, limit: int) -> list[Job]:
    taken: list[Job] = []
    count = 0
    for job in session.list_jobs(kind=EMBED, statuses=list(WAITING), limit=max(8, limit // 10)):
        if taken and count + int(job.data.get("count", 0)) > limit:
            break
        taken.append(job)
        count += int(job.data.get("count", 0))
    return taken


def _settle(session: StoreSession, taken: Job) -> None:
    """Done, unless a capture appended segments to the same source while the batch ran: those
    stay queued."""
    job = session.get_job(EMBED, taken.target_id) or taken
    done = set(taken.data.get("segments") or [])
    rest = [s for s in job.data.get("segments") or [] if s not in done]
    job.updated_at = now_iso()
    job.status, job.error = ("pending", None) if rest else ("done", None)
    job.data = {**job.data, "segments": rest, "count": len(rest)}
    session.put_job(job)


def _fail(rt: Runtime, taken: list[Job], error: str) -> None:
    with rt.write("memory_maintain", EMBED, None, embed=False) as (session, _patch):
        for job in taken:
            job.attempts += 1
            job.status = "failed" if job.attempts >= jobs.MAX_ATTEMPTS else "retrying"
            job.error, job.updated_at = error[:2000], now_iso()
            session.put_job(job)


def retry_failed(rt: Runtime) -> int:
    """Put every failed job back in the queue (its attempts start again); how many."""
    with rt.write("memory_maintain", EMBED, None, embed=False) as (session, _patch):
        failed = session.list_jobs(kind=EMBED, statuses=["failed"], limit=_ALL)
        for job in failed:
            job.status, job.attempts, job.updated_at = "pending", 0, now_iso()
            session.put_job(job)
    return len(failed)


def drain_all(rt: Runtime, *, limit: int | None = None) -> EmbedTotals:
    """Drain until nothing waits (or ``limit`` segments are done, or a batch fails): totals."""
    total: EmbedTotals = {"embedded": 0, "jobs": 0, "failed": 0}
    while limit is None or total["embedded"] < limit:
        step = drain(rt, limit=BATCH if limit is None else min(BATCH, limit - total["embedded"]))
        total["embedded"] += step["embedded"]
        total["jobs"] += step["jobs"]
        total["failed"] += step["failed"]
        if step.get("error") or step.get("reason"):
            total["error"] = step.get("error") or step.get("reason")
            break
        if not step["jobs"]:
            break
    return total


class _Worker:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.last_capture = time.monotonic()
        self.last_batch = time.monotonic()
        self.thread = threading.Thread(
            target=self._run, name=f"memory-substrate-embed-{rt.namespace}", daemon=True
        )
        self.thread.start()

    def touch(self) -> None:
        self.last_capture = time.monotonic()
        self.wake.set()

    def _pause(self) -> None:
        """Wait for the background's turn: no read in flight (embed.foreground)."""
        foreground.background_turn(self.stopping)

    def _run(self) -> None:
        while not self.stopping.is_set():
            self.wake.wait()  # a capture that queued work, or stopping
            self.wake.clear()
            while not self.stopping.is_set():
                now = time.monotonic()
                busy = now - self.last_capture < IDLE_S
                wait = MAX_WAIT_S - (now - self.last_batch) if busy else 0.0
                if wait > 0:
                    self.stopping.wait(min(wait, IDLE_S))
                    continue
                self.last_batch = time.monotonic()
                try:
                    step = drain(self.rt, limit=BUSY_BATCH if busy else BATCH, pause=self._pause)
                except Exception:  # the store closing under it, a database gone: the jobs stay queued
                    log.exception("deferred embedding worker")
                    step = {"embedded": 0, "jobs": 0, "failed": 1}
                if step.get("failed") or step.get("reason"):
                    self.stopping.wait(RETRY_S)
                if not step["jobs"]:
                    break


_WORKERS: dict[tuple[int, str], _Worker] = {}
_WORKERS_LOCK = threading.Lock()
_HELD = False  # hold_workers(): this process runs no worker


def hold_workers() -> None:
    """Run no worker in this process: what its captures defer waits in the queue for the next
    process that runs one (``serve``), or for ``memory_maintain embed``. For a process that ends
    in a moment, such as an agent's hook, a batch begun there (loading the encoder alone takes
    seconds) would only hold it up."""
    global _HELD
    _HELD = True


def notify(rt: Runtime) -> None:
    """Work was queued for ``rt``'s namespace (or found waiting): make sure its worker runs."""
    if not rt.settings.embed_in_background or _HELD:
        return
    key = (id(rt.store), rt.namespace)
    with _WORKERS_LOCK:
        worker = _WORKERS.get(key)
        if worker is None or not worker.thread.is_alive():
            worker = _WORKERS[key] = _Worker(rt)
    worker.touch()


def resume(rt: Runtime) -> None:
    """Start the worker when the namespace has work left from an earlier process."""
    if not rt.settings.embed_in_background:
        return
    with rt.read_with_expired() as session:
        if pending_count(session):
            notify(rt)


def stop_workers(store: object, *, timeout_s: float = 30.0) -> None:
    """Stop the workers of ``store`` (before it closes); a batch under way finishes first, what
    waits stays queued for the next process."""
    with _WORKERS_LOCK:
        mine = [k for k in _WORKERS if k[0] == id(store)]
        workers = [_WORKERS.pop(k) for k in mine]
    for worker in workers:
        worker.stopping.set()
        worker.wake.set()
    for worker in workers:
        worker.thread.join(timeout_s)
