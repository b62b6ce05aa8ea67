"""WAL checkpoints off the request path.

SQLite's automatic checkpoint runs inside the COMMIT that pushes the WAL past 1,000 pages, so
every few writes one request pays for copying the log into the database file (measured: one
extraction in four took twice the median, all of it in that COMMIT). A store instead raises its
writers' automatic threshold far out of the way and lets this thread run PASSIVE checkpoints
shortly after writes. A PASSIVE checkpoint never blocks a reader or a writer, and it releases
the GIL while SQLite copies pages, so commits go on meanwhile.

The writers keep a high automatic threshold (``SAFETY_PAGES``) as a bound: should this thread
fall behind or die, the WAL still cannot grow without limit. Other processes opening the same
file keep SQLite's default and checkpoint for themselves.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

SAFETY_PAGES = 16_000  # 64 MB of 4 KB pages: the writers' own checkpoint threshold
SETTLE_S = 0.05  # let a burst of commits land before copying them in one pass


class Checkpointer:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._wake = threading.Event()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.runs = 0  # completed checkpoint passes, for tests and stats

    def poke(self) -> None:
        """A write committed: checkpoint soon (starts the thread on first use)."""
        with self._lock:
            if self._stop:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False, timeout=1.0)
        try:
            while True:
                self._wake.wait()
                if self._stop:
                    return
                self._wake.clear()
                time.sleep(SETTLE_S)  # later pokes of the burst fold into this pass
                self._wake.clear()
                if self._stop:
                    return
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.runs += 1
                except sqlite3.Error:
                    pass  # busy with another checkpointer, or the file went away: the next poke retries
        finally:
            conn.close()

    def close(self) -> None:
        with self._lock:
            self._stop = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout=5)
