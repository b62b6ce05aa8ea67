"""The life of a long-running command: the port it listens on, and stopping when asked.

Stopping. Ctrl-C (SIGINT) and SIGTERM end every command within ``STOP_DEADLINE_S``. The first
signal raises ``KeyboardInterrupt`` in the main thread, so the command unwinds as usual: an open
write transaction leaves its ``with`` block by the exception and is rolled back, one that has
committed stays. A command may still be held up after that (the MCP SDK reads stdin in a worker
thread that nothing can interrupt; a tool call runs in another). So the first signal also starts
a deadline: when it passes, the process ends with ``os._exit``. A write that had not committed
by then is never committed: SQLite discards it on the next open, PostgreSQL when the connection
drops. A second signal ends the process at once, on the same terms.

Servers (``serve``, ``inspect``) exit 0 when stopped this way (stopping is how they end);
every other command exits 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM).

Ports. ``listen_socket`` binds before anything says "serving", so a port another process holds
is one line naming the port and the flag to change it, and exit 2 (a ``ValidationError``).
Accepted connections have Nagle's algorithm off, so a response is not held for a delayed ACK.

Threads. ``serve`` hands the GIL to a waiting thread sooner than CPython's default
(``favour_short_calls``), so a short read waits less behind another caller's slow work.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from memory_substrate.errors import ValidationError

STOP_DEADLINE_S = 1.0
STOP_HINT = "Ctrl-C or SIGTERM stops it"

_state: dict[str, int | bool] = {"signum": 0, "server": False}


@contextlib.contextmanager
def stop_handlers() -> Iterator[None]:
    """Route SIGINT and SIGTERM through ``request_stop`` while the block runs, then put back
    what was there (a program or test that runs the CLI in-process keeps its own handlers).
    Only the main thread may set handlers (Python's rule); elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serving() -> None:
    """This process is a server: stopping on request is its normal end (exit 0)."""
    _state["server"] = True


def stop_requested() -> int:
    """The signal that asked this process to stop, or 0."""
    return int(_state["signum"])


def exit_status() -> int:
    """What a process stopped by ``stop_requested()`` exits with."""
    signum = stop_requested()
    return 0 if _state["server"] or not signum else 128 + signum


def request_stop(signum: int) -> None:
    """Record the stop and start the deadline; a second request ends the process now."""
    if _state["signum"]:
        _end()
    _state["signum"] = signum
    threading.Thread(target=_deadline, name="memory-substrate-stop", daemon=True).start()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    request_stop(signum)
    raise KeyboardInterrupt


def _deadline() -> None:
    time.sleep(STOP_DEADLINE_S)
    _end()


def _end() -> None:
    try:
        sys.stderr.write("memory-substrate: stopped\n")
        sys.stderr.flush()
    finally:
        os._exit(exit_status())


def listen_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (not yet listening), or a ``ValidationError`` naming
    the port and ``--port`` when it cannot be had."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose
    # proto says TCP, and accepted connections copy it from here. With Nagle on, a response
    # written as headers then body waits for the client's delayed ACK: about 40 ms a request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ValidationError(
                f"port {port} on {host} is already in use; choose another with --port",
                details={"host": host, "port": port},
            ) from None
        raise ValidationError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", details={"host": host, "port": port}
        ) from None
    sock.set_inheritable(True)
    return sock


def run_uvicorn(
    app: Any, host: str, port: int, *, announce: Callable[[], None] | None = None, **config: Any
) -> None:
    """Serve ``app`` with uvicorn on ``host:port`` until stopped. Binds first (``listen_socket``:
    a busy port is a ``ValidationError`` before anything is served); a stop signal shuts down
    gracefully under the deadline above, and the process then exits 0. ``announce`` runs once
    the port is held."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            # uvicorn would re-raise the signal after shutdown, which skips the caller's cleanup
            # and reports death by signal; a stopped server ends normally instead.
            request_stop(sig)
            self.should_exit = True

    sock = listen_socket(host, port)
    serving()
    if announce is not None:
        announce()
    server = Server(
        uvicorn.Config(app, host=host, port=port, server_header=False, timeout_graceful_shutdown=1, **config)
    )
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


# How long a thread may hold the GIL while another waits for it, in a serving process (CPython's
# default is 5 ms). A served read crosses threads several times (the event loop, the token
# lookup, the tool's worker thread, back to the loop) and each crossing waits for whoever holds
# the GIL to be asked to give it up, up to the interval each time. Beside four CPU-bound calls of
# another namespace a search that takes 5-7 ms alone took ~100 ms (p50) at 5 ms, 65-90 ms at
# 1 ms with messages validated in pieces (docs/benchmarks.md); the slow calls took no
# longer for the extra switching.
SERVE_SWITCH_INTERVAL_S = 0.001


def favour_short_calls(interval_s: float = SERVE_SWITCH_INTERVAL_S) -> float:
    """Hand the GIL to a waiting thread after ``interval_s``; returns the interval it replaces.
    For a process that serves (``memory-substrate serve``); a program embedding ``Memory``
    decides for itself: nothing changes on import."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval_s)
    return previous
