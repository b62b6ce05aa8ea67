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
whose extra read sessions are not free (``Store.parallel_reads``: a pooled PostgreSQL connection
could wait on the very sessions that wait for it), and when both workers are busy.

Inline inside the compile's snapshot cost nothing measurable on the 2-core development machine
(interleaved, 120 compiles each: p50 21.9 ms inline against 23.9 ms beside at 10k segments,
48.6 against 57.0 ms at 100k; ``docs/context-compiler.md``).
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession

T = TypeVar("T")

WORKERS = 2
_POOL: ThreadPoolExecutor | None = None
_FREE = threading.BoundedSemaphore(WORKERS)


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="memory-substrate-stream")
        atexit.register(_POOL.shutdown, wait=False)
    return _POOL


class _Done(Future[T]):
    def __init__(self, value: T) -> None:
        super().__init__()
        self.set_result(value)


def beside(rt: Runtime, session: StoreSession, work: Callable[[StoreSession], T]) -> Future[T]:
    """Run ``work`` in a read session of its own on a worker thread (inline, in ``session``,
    when that session writes or is a request's snapshot); ``.result()`` gives its value or raises its error."""
    if (
        getattr(session, "writable", False)
        or not rt.store.parallel_reads
        or rt.in_snapshot()
        or not _FREE.acquire(blocking=False)
    ):
        return _Done(work(session))

    def run() -> T:
        try:
            with rt.read() as own:
                return work(own)
        finally:
            _FREE.release()

    try:
        return _pool().submit(run)
    except RuntimeError:  # the pool is shut down (interpreter exit)
        _FREE.release()
        return _Done(work(session))
