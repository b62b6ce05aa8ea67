"""A hook never stalls or blocks the agent: every failure and every overrun ends in exit 0 with
nothing on stdout, and leaves one line in the hook log.

Claude Code and Codex read a hook's exit status 2 as "block this prompt" (or this stop), and
wait for a hook up to its configured timeout. So the hook process exits 0 whatever happens: an
exception, a store that is missing, locked or corrupt, a root that is not a directory. A
watchdog thread ends the process at the event's deadline, set under the client's own limit;
SQLite and the writer lock wait in C or in ``time.sleep``, so the watchdog runs while they wait.

The one line written to stdout (the context for the client) goes out under a lock the watchdog
takes too: the process is never ended half-way through it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

LOG_NAME = "hooks.log"
LOG_MAX_BYTES = 2_000_000  # past this the log is rotated once (hooks.log.1) so it never grows unbounded
LINE_MAX = 600


def scrubbed(text: str) -> str:
    """``text`` through the secret scan: an error message may quote what it failed on, and no
    secret may reach the log either. Unscanned only if the scan itself cannot load."""
    try:
        from memory_substrate.redaction import redact_text
    except ImportError:
        return text
    return redact_text(text)


def fallback_log() -> Path:
    """Where the log goes when the store's root cannot hold it (a file, unwritable, missing parent)."""
    import tempfile  # only then: a hook that logs nothing does not pay for its import

    return Path(tempfile.gettempdir()) / f"memory-substrate-hooks-{_user()}.log"


def _user() -> str:
    try:
        return str(os.getuid())
    except AttributeError:  # Windows
        return os.environ.get("USERNAME", "user")


class HookLog:
    """Appends one line per event that failed, overran or was refused; never raises."""

    def __init__(self, root: Path | None, client: str) -> None:
        self.root = root
        self.client = client
        self.event = "-"

    def path(self) -> Path:
        if self.root is not None:
            logs = self.root / "logs"
            try:
                if self.root.is_dir() or not self.root.exists():
                    logs.mkdir(parents=True, exist_ok=True)
                    return logs / LOG_NAME
            except OSError:
                pass
        return fallback_log()

    def write(self, message: str) -> None:
        when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        text = scrubbed(" ".join(str(message).split())[:LINE_MAX])
        line = f"{when} {self.client} {self.event} pid={os.getpid()} {text}\n"
        for path in (self.path(), fallback_log()):
            try:
                _rotate(path)
                with open(path, "a", encoding="utf-8") as fh:
                    fh.write(line)
                return
            except OSError:
                continue


def _rotate(path: Path) -> None:
    try:
        if path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
    except OSError:
        pass


class Deadline:
    """Ends the process with exit status 0 once ``seconds`` have passed, logging why.

    ``extend_to`` moves the deadline (the event's own limit is known once stdin is read);
    ``emit`` writes the answer under the lock the watchdog takes, so it is whole or absent."""

    def __init__(self, seconds: float, log: HookLog) -> None:
        self.log = log
        self.started = time.monotonic()
        self._until = self.started + seconds
        self._lock = threading.Lock()
        self._done = False
        self._thread = threading.Thread(
            target=self._watch, name="memory-substrate-hook-deadline", daemon=True
        )
        self._thread.start()

    def extend_to(self, seconds: float) -> None:
        self._until = self.started + seconds

    def remaining(self) -> float:
        return max(0.0, self._until - time.monotonic())

    def _watch(self) -> None:
        while True:
            left = self._until - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(left, 0.05))
        with self._lock:
            if self._done:
                return
            self._done = True
            self.log.write(
                f"deadline: gave up after {time.monotonic() - self.started:.2f} s (nothing injected or stored)"
            )
            os._exit(0)

    def emit(self, text: str | None) -> None:
        """Write ``text`` (one line) to stdout and mark the event done; nothing if the deadline won."""
        with self._lock:
            if self._done:
                return
            self._done = True
            if text:
                try:
                    sys.stdout.write(text + "\n")
                    sys.stdout.flush()
                except (OSError, ValueError):  # the client closed its end: nothing to tell it
                    pass
