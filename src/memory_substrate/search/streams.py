"""The vector candidate stream of a segment search, run beside the full-text stream.

A segment search draws two independent candidate streams: full-text (the store ranks its
matches) and vector (nearest neighbours of the query's embedding). Each costs a few
milliseconds at 100k segments, and neither needs the other, so the vector stream runs on a
worker thread in a read session of its own while the caller's session runs the full-text
query. SQLite and PostgreSQL both leave the interpreter lock while they execute a statement,
so the two overlap on a machine with a spare core; on a busy one the cost is a thread hand-off.

The worker's session is a second snapshot taken a moment after the caller's: a segment
committed in between can appear among its hits and is dropped when the caller's session
cannot read it, as if the search had started a moment earlier. The stream runs inline instead
inside a write session (only that session sees its own uncommitted writes), inside a request's
snapshot (``Runtime.snapshot``: a context compile reads everything in one session), on a store
without spare read sessions (``Store.parallel_reads``), and when both workers are busy. A worker
that gets no spare session at once (``Store.spare_read``: PostgreSQL's pool has every connection
held, perhaps by callers that wait on their own workers) hands the work back, and the caller runs
it in its own session once its full-text stream is done: never a wait on a connection.

Inline inside the compile's snapshot cost nothing measurable on the 2-core development machine
(interleaved, 120 compiles each: p50 21.9 ms inline against 23.9 ms beside at 10k segments,
48.6 against 57.0 ms at 100k; ``docs/context-compiler.md``).
"""

from __future__ import annotations

import atexit
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, ParamSpec, TypeVar, cast

from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession

T = TypeVar("T")
P = ParamSpec("P")

WORKERS = 2
_POOL: ThreadPoolExecutor | None = None
_FREE = threading.BoundedSemaphore(WORKERS)


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="memory-substrate-stream")
        atexit.register(_POOL.shutdown, wait=False)
    return _POOL


class Pending(Generic[T]):
    """A stream's value on its way: ``done()`` says whether it is there, ``result()`` waits for it
    (and raises its error). Run inline, it is there from the start."""

    def __init__(self, value: T) -> None:
        self._value = value

    def done(self) -> bool:
        return True

    def result(self) -> T:
        return self._value


class _OnWorker(Pending[T]):
    """The worker's future; when the worker had no spare session (``_BUSY``), the first
    ``result()`` runs the work in the caller's own session, in the caller's thread, once."""

    def __init__(self, worker: Future[object], inline: Callable[[], T]) -> None:
        self._worker, self._inline = worker, inline
        self._ready = False

    def done(self) -> bool:
        return self._worker.done()

    def result(self) -> T:
        if not self._ready:
            value = self._worker.result()
            self._value = self._inline() if value is _BUSY else cast(T, value)
            self._ready = True
        return self._value


_BUSY = object()


def beside(rt: Runtime, session: StoreSession, work: Callable[[StoreSession], T]) -> Pending[T]:
    """Run ``work`` in a read session of its own on a worker thread (inline, in ``session``,
    when that session writes or is a request's snapshot, or when no spare session is free);
    ``.result()`` gives its value or raises its error."""
    if (
        getattr(session, "writable", False)
        or not rt.store.parallel_reads
        or rt.in_snapshot()
        or not _FREE.acquire(blocking=False)
    ):
        return Pending(work(session))

    def run() -> object:
        try:
            with rt.spare_read() as own:
                return _BUSY if own is None else work(own)
        finally:
            _FREE.release()

    try:
        return _OnWorker(_pool().submit(run), lambda: work(session))
    except RuntimeError:  # the pool is shut down (interpreter exit)
        _FREE.release()
        return Pending(work(session))


def in_callers_context(fn: Callable[P, T]) -> Callable[P, T]:
    """``fn`` run, wherever it is later called, in a copy of the calling thread's context
    variables: on a worker it sees the request's state (``embed.base.query_memo``) as it would
    inline. Call it once per copy (a context cannot be entered twice at a time)."""
    ctx = contextvars.copy_context()

    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return ctx.run(fn, *args, **kwargs)

    return run
