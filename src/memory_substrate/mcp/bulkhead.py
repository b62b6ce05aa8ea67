"""Bulkhead: one namespace's slow work cannot take the capacity that serves everyone's reads.

Every tool call runs its blocking work on a thread. Reads (search, context, page...) use anyio's
shared worker threads. Slow work (every capture, extraction, reindex, repair, the maintenance
cycle) runs instead under a limiter of its own per namespace (one MCP server serves one
namespace, so one ``Bulkhead`` per server): at most ``slow_concurrency`` calls at once, at most
``slow_queue`` more waiting, and any call past that answers ``memory_rate_limited`` at once
instead of queueing without end. A namespace that floods captures therefore waits on, or is
refused by, its own limit and never holds the threads another namespace's search needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio

from memory_substrate.errors import RateLimitedError

T = TypeVar("T")

# (tool, mode) pairs that read disks or networks, call a model, or rebuild indexes. Every
# ingest mode is a capture (conversation included: it embeds and indexes up to a whole body).
SLOW_TOOLS = frozenset({"memory_ingest"})
SLOW_MODES = {"memory_maintain": frozenset({"extract", "reindex", "repair", "cycle"})}


def is_slow(tool: str, mode: str) -> bool:
    """Whether a call of ``tool`` in ``mode`` runs under the bulkhead."""
    return tool in SLOW_TOOLS or mode in SLOW_MODES.get(tool, frozenset())


class Bulkhead:
    """The slow-work limit of one namespace."""

    def __init__(self, namespace: str, *, concurrency: int, queue: int) -> None:
        if concurrency < 1 or queue < 0:
            raise ValueError("concurrency must be at least 1 and queue at least 0")
        self.namespace = namespace
        self.concurrency = concurrency
        self.queue = queue
        self.admitted = 0  # running + waiting; touched only on the event loop's thread
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, tool: str, mode: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a thread of this namespace's own; ``RateLimitedError`` when full."""
        if self.admitted >= self.concurrency + self.queue:
            raise RateLimitedError(
                f"namespace {self.namespace!r} already has {self.admitted} slow calls (captures, extraction, "
                f"reindex) running or waiting: at most {self.concurrency} run at once and {self.queue} wait. "
                f"{tool} {mode} was not started; retry when one of them has finished",
                details={"namespace": self.namespace, "tool": tool, "mode": mode,
                         "concurrency": self.concurrency, "queue": self.queue},
            )
        if self._limiter is None:  # made on the event loop that uses it
            self._limiter = anyio.CapacityLimiter(self.concurrency)
        self.admitted += 1
        try:
            return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)
        finally:
            self.admitted -= 1
