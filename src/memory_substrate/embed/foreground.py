"""Reads first: background embedding waits while a read request is in flight.

Why: the worker that makes vectors after capture (``graph.deferred``) runs the encoder in this
process. Its work is Python under the interpreter lock, and the encoder takes one call at a time
(``embed.universal``), so a search that arrived beside a whole batch waited for the batch to
embed its own query, and then shared the interpreter lock with it for the rest of its run.

A read request (``QueryService.run``: search, context and the other query modes) holds
:func:`foreground` while it runs. The worker embeds in small pieces and before each asks
:func:`background_turn`, which waits until no read has been in flight for ``QUIET_S``. So a read
waits on one piece at most (``graph.deferred.PIECE``), and reads that come without a pause
still let one piece through every ``STARVED_S``, so the queue always moves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

QUIET_S = 0.02  # the worker starts a piece once no read has run for this long ...
STARVED_S = 1.0  # ... or, while reads go on without such a pause, one piece this often

_cond = threading.Condition()
_active = 0
_last_end = 0.0
_urgent = 0  # callers that want the queue drained now (``graph.deferred.drain`` without yielding)


@contextmanager
def foreground() -> Iterator[None]:
    """Mark a read request in flight for the duration of the block (re-entrant, any thread)."""
    global _active, _last_end
    with _cond:
        _active += 1
    try:
        yield
    finally:
        with _cond:
            _active -= 1
            _last_end = time.monotonic()
            _cond.notify_all()


@contextmanager
def urgent() -> Iterator[None]:
    """While this block runs, :func:`background_turn` does not wait: someone is waiting for the
    background's work itself (``memory_maintain embed``), not for a read."""
    global _urgent
    with _cond:
        _urgent += 1
        _cond.notify_all()
    try:
        yield
    finally:
        with _cond:
            _urgent -= 1


def in_flight() -> int:
    """Read requests in flight now."""
    with _cond:
        return _active


def background_turn(stop: threading.Event | None = None) -> bool:
    """Wait for background work's turn: until no read has been in flight for ``QUIET_S``, at most
    ``STARVED_S`` (then it goes ahead anyway), or until ``stop`` is set. True when it got a quiet
    moment (or nothing waited), False when it went ahead starved or was stopped."""
    deadline = time.monotonic() + STARVED_S
    with _cond:
        while True:
            now = time.monotonic()
            if _urgent or (_active == 0 and now - _last_end >= QUIET_S):
                return True
            if now >= deadline or (stop is not None and stop.is_set()):
                return False
            wait = deadline - now if _active else min(deadline - now, QUIET_S - (now - _last_end))
            _cond.wait(max(0.001, min(wait, 0.1)))  # 0.1 s at most: ``stop`` is an event of its own
