"""Bulkhead: one namespace's slow work cannot take the capacity that serves everyone's reads.

Every tool call runs its blocking work on a thread. Reads (search, context, page...) use anyio's
shared worker threads. Slow work (every capture, extraction, reindex, repair, the maintenance
cycle) runs instead under a limiter of its own per namespace (one MCP server serves one
namespace, so one ``Bulkhead`` per server): at most ``slow_concurrency`` calls at once, at most
``slow_queue`` more waiting, and any call past that answers ``memory_rate_limited`` at once
instead of queueing without end. A namespace that floods captures therefore waits on, or is
refused by, its own limit and never holds the threads another namespace's search needs.

Heavy reads get a bulkhead of their own. A read is CPU-bound Python: every read of the process
shares one interpreter lock, so four 100,000-character searches of one namespace running at once
leave another namespace's search a fifth of the interpreter. A read whose input is large
(``is_heavy_read``: its input past ``HEAVY_INPUT_CHARS`` characters, or a package budget past
``HEAVY_BUDGET_TOKENS``) runs under its namespace's heavy-read limit (``heavy_read_concurrency``,
default 1, and ``heavy_read_queue`` waiting): however many such reads a namespace sends, at most
that many of its reads hold the interpreter beside everyone else's. Small reads, the nearly all,
go straight to a thread: nothing queues them.
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


# A read's input this long (its strings and keys, summed) or a package budget this large makes it
# heavy. Agents' searches and tasks are a few hundred characters, a hook's prompt at most 4,000.
HEAVY_INPUT_CHARS = 8_000
HEAVY_BUDGET_TOKENS = 16_000
READ_TOOLS = frozenset({"memory_query"})


def is_slow(tool: str, mode: str) -> bool:
    """Whether a call of ``tool`` in ``mode`` runs under the bulkhead."""
    return tool in SLOW_TOOLS or mode in SLOW_MODES.get(tool, frozenset())


def is_heavy_read(tool: str, input_data: object, options: object) -> bool:
    """Whether a read is large enough to run under its namespace's heavy-read bulkhead."""
    if tool not in READ_TOOLS:
        return False
    budget = options.get("budget_tokens") if isinstance(options, dict) else None
    if isinstance(budget, int) and not isinstance(budget, bool) and budget > HEAVY_BUDGET_TOKENS:
        return True
    return _chars(input_data, HEAVY_INPUT_CHARS) >= HEAVY_INPUT_CHARS


def _chars(value: object, limit: int) -> int:
    """The characters of ``value``'s strings (keys included), counted up to ``limit``."""
    total = 0
    stack: list[object] = [value]
    while stack and total < limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return total


class Bulkhead:
    """The slow-work limit of one namespace."""

    def __init__(
        self,
        namespace: str,
        *,
        concurrency: int,
        queue: int,
        what: str = "slow calls (captures, extraction, reindex)",
    ) -> None:
        if concurrency < 1 or queue < 0:
            raise ValueError("concurrency must be at least 1 and queue at least 0")
        self.namespace = namespace
        self.what = what
        self.concurrency = concurrency
        self.queue = queue
        self.admitted = 0  # running + waiting; touched only on the event loop's thread
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, tool: str, mode: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a thread of this namespace's own; ``RateLimitedError`` when full."""
        if self.admitted >= self.concurrency + self.queue:
            raise RateLimitedError(
                f"namespace {self.namespace!r} already has {self.admitted} {self.what} running or waiting: "
                f"at most {self.concurrency} run at once and {self.queue} wait. "
                f"{tool} {mode} was not started; retry when one of them has finished",
                details={
                    "namespace": self.namespace,
                    "tool": tool,
                    "mode": mode,
                    "concurrency": self.concurrency,
                    "queue": self.queue,
                },
            )
        if self._limiter is None:  # made on the event loop that uses it
            self._limiter = anyio.CapacityLimiter(self.concurrency)
        self.admitted += 1
        try:
            return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)
        finally:
            self.admitted -= 1
