"""One queue for the writers of one SQLite file across processes.

SQLite lets one writer in at a time; the others wait in its busy handler, which sleeps between
retries for up to 100 ms at a time and keeps no order, so a writer that has waited long keeps
losing to newcomers that retry sooner. With 8 processes writing back to back, single writes
waited up to 14-28 s. Writers therefore take an ``flock`` on a lock file beside the
database before ``BEGIN IMMEDIATE``, retrying every millisecond: whoever waits gets in within
about a millisecond of the lock being free, and SQLite's own lock is then free too. The kernel
drops the lock of a process that dies. Where ``fcntl`` is missing (Windows), this does nothing
and SQLite's busy handler alone decides.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

POLL_S = 0.001


class WriterLock:
    """``held()``: this process holds the file's writer lock (re-entrant per holder, not thread-safe:
    callers serialise their own threads first)."""

    def __init__(self, db_path: Path, timeout_s: float = 30.0) -> None:
        self.path = Path(f"{db_path}-writer.lock")
        self.timeout_s = timeout_s
        self._fd: int | None = None
        self._depth = 0

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        return self._fd

    @contextmanager
    def held(self) -> Iterator[None]:
        """Raises ``TimeoutError`` when another process keeps the lock past the timeout."""
        if fcntl is None or self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        fd = self._open()
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.path} held for more than {self.timeout_s} s") from None
                time.sleep(POLL_S)
        self._depth = 1
        try:
            yield
        finally:
            self._depth = 0
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
