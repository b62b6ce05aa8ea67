"""The hook process from start to exit: read the event, answer within its deadline, exit 0.

Whatever happens (an exception, a bad config, a store that cannot be opened, the deadline), the
process ends with ``os._exit(0)``: nothing a hook does may block the client's prompt (exit 2) or
delay it past the event's deadline, and skipping the interpreter's teardown saves the client a
few tens of milliseconds on every prompt. What is written to the store is committed before.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from memory_substrate.hooks.config import DEFAULT_TIMEOUT, ConfigError, default_root, load
from memory_substrate.hooks.failopen import Deadline, HookLog
from memory_substrate.hooks.store_settings import store_overrides

STDIN_MAX = 10_000_000  # an event is a few kilobytes; a prompt can be long, not this long
LOCK_WAIT_S = 2.0  # a write's wait for another process's lock on the store (normal writes take milliseconds)


def run(client: str, overrides: Mapping[str, object]) -> NoReturn:
    root = _root(overrides)
    log = HookLog(root, client)
    deadline = Deadline(DEFAULT_TIMEOUT, log)
    _exit_zero_on_signals()
    answer: str | None = None
    try:
        answer = _answer(client, root, overrides, log, deadline)
    except BaseException as exc:  # every failure, KeyboardInterrupt and SystemExit included
        log.write(_failure(exc))
    deadline.emit(answer)
    os._exit(0)


def _answer(
    client: str, root: Path | None, overrides: Mapping[str, object], log: HookLog, deadline: Deadline
) -> str | None:
    raw = sys.stdin.buffer.read(STDIN_MAX)
    from memory_substrate.hooks.events import Stores, handle, parse_event

    event = parse_event(client, raw)
    if event is None:
        log.write("not a hook event on stdin (expected a JSON object with hook_event_name)")
        return None
    log.event = event.name
    if client not in ("claude-code", "codex"):
        log.write(f"unknown client {client!r}: use claude-code or codex")
        return None
    try:
        config = load(root)
    except ConfigError as exc:
        log.write(f"config: {exc}; the hooks do nothing until it is fixed")
        return None
    deadline.extend_to(config.timeout(event.name))
    if config.root.exists() and not config.root.is_dir():
        log.write(f"the store root {config.root} is not a directory")
        return None
    # A store another process keeps locked is given up on well before the deadline: the prompt
    # goes on without context, and a capture is done by the next event (its cursor did not move).
    stores = Stores(
        config,
        store_overrides(overrides),
        lock_timeout_s=max(0.1, min(LOCK_WAIT_S, deadline.remaining() - 0.3)),
    )
    return handle(event, config, stores, log)


def _root(overrides: Mapping[str, object]) -> Path | None:
    root = overrides.get("root")  # a Path from the CLI's option, or a string
    if isinstance(root, str | os.PathLike):
        return Path(root)
    env = os.environ.get("MEMORY_SUBSTRATE_ROOT")
    try:
        return Path(env).expanduser() if env else default_root()
    except RuntimeError:  # no home directory to expand
        return None


def _exit_zero_on_signals() -> None:
    """A client that gives up on the hook stops it; that is no failure to report to it."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, OSError):  # not the main thread, or no such signal here
            signal.signal(sig, lambda *_: os._exit(0))


def _failure(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc)
    code = getattr(exc, "code", None)
    where = f" [{code}]" if isinstance(code, str) else ""
    text = f"failed{where}: {type(exc).__name__}: {message}"
    if os.environ.get("MEMORY_SUBSTRATE_DEBUG"):
        import traceback

        text += " | " + " | ".join(traceback.format_exception(exc)[-3:])
    return text
