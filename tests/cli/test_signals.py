"""Ctrl-C and SIGTERM stop every long-running command within 2 s, through its real entry point.

``serve`` (stdio) runs in a pseudo-terminal and gets a typed Ctrl-C, as a newcomer's first
command does; the HTTP servers get the signals while a client holds a connection open; an
import is interrupted in the middle of its writes and the store is then checked whole.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.inspect.browser import free_port

EXE = os.path.join(os.path.dirname(sys.executable), "memory-substrate")
STOP_LIMIT_S = 2.0


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env.update(MEMORY_SUBSTRATE_ROOT=str(root), MEMORY_SUBSTRATE_EMBEDDER="none", PYTHONUNBUFFERED="1")
    return env


def _wait_exit(pid: int, limit: float) -> int | None:
    """The exit status of ``pid`` if it ends within ``limit`` seconds, else None (then killed)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def test_ctrl_c_in_a_terminal_stops_stdio_serve(tmp_path: Path) -> None:
    pid, fd = pty.fork()
    if pid == 0:  # the child: the server, with the pseudo-terminal as its controlling terminal
        os.execve(EXE, [EXE, "serve"], _env(tmp_path))
    out = b""
    try:
        deadline = time.monotonic() + 60
        while b"stops it" not in out and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                out += os.read(fd, 4096)
        assert b"Ctrl-C" in out, out  # the start-up line says how to stop it
        time.sleep(0.3)  # the SDK's stdin reader is waiting on the terminal now
        started = time.monotonic()
        os.write(fd, b"\x03")
        status = _wait_exit(pid, STOP_LIMIT_S)
        assert status is not None, f"still running {STOP_LIMIT_S} s after Ctrl-C"
        assert time.monotonic() - started < STOP_LIMIT_S
        assert status == 0
    finally:
        os.close(fd)


def _start(args: list[str], env: dict[str, str], url: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([EXE, *args], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return proc
        except urllib.error.HTTPError:
            return proc  # it answers (401/404 is an answer)
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise AssertionError(f"{args} did not start: {proc.communicate()[1]}") from None
            time.sleep(0.1)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("command", ["serve", "inspect"])
def test_http_servers_stop_on_a_signal_with_a_connection_open(tmp_path: Path, command: str, sig: int) -> None:
    import socket

    port = free_port()
    args = (
        ["serve", "--transport", "http", "--port", str(port)]
        if command == "serve"
        else ["inspect", "--port", str(port)]
    )
    path = "/healthz" if command == "serve" else "/"
    proc = _start(args, _env(tmp_path), f"http://127.0.0.1:{port}{path}")
    # A client that keeps its connection open (a browser tab, an MCP session) must not hold it up.
    idle = socket.create_connection(("127.0.0.1", port))
    try:
        started = time.monotonic()
        proc.send_signal(sig)
        status = _wait_exit(proc.pid, STOP_LIMIT_S)
        assert status is not None, (
            f"{command} still running {STOP_LIMIT_S} s after {signal.Signals(sig).name}"
        )
        assert time.monotonic() - started < STOP_LIMIT_S
        assert status == 0
        assert proc.stderr is not None
        assert "Ctrl-C" in proc.stderr.read()  # the start-up line says how to stop it
    finally:
        idle.close()
        if proc.stderr is not None:
            proc.stderr.close()


def _memory_file(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(
                json.dumps(
                    {
                        "type": "entity",
                        "name": f"Service {i}",
                        "entityType": "service",
                        "observations": [f"Service {i} runs on host h{i}", f"owned by team t{i % 7}"],
                    }
                )
                + "\n"
            )
        for i in range(1, n):
            fh.write(
                json.dumps(
                    {
                        "type": "relation",
                        "from": f"Service {i}",
                        "to": f"Service {i - 1}",
                        "relationType": "depends_on",
                    }
                )
                + "\n"
            )


def test_ctrl_c_stops_an_import_and_leaves_the_store_whole(tmp_path: Path) -> None:
    """SIGINT in the middle of an import's writes: it stops within 2 s with 130, the store passes
    SQLite's integrity check, and importing again completes it exactly (no half-written entity)."""
    data = tmp_path / "memory.jsonl"
    _memory_file(data, 3000)
    env = _env(tmp_path / "store")
    proc = subprocess.Popen(
        [EXE, "import-from", "mcp-memory", str(data)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    db = tmp_path / "store" / "memory.sqlite3"
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if db.exists() and _count(db, "SELECT count(*) FROM patches") >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the import finished before it could be interrupted; make the file larger"
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    status = _wait_exit(proc.pid, STOP_LIMIT_S)
    assert status is not None and time.monotonic() - started < STOP_LIMIT_S
    assert status == 130
    assert proc.stderr is not None and "interrupted" in proc.stderr.read()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    entities = "SELECT count(*) FROM objects WHERE object_type = 'entity'"
    assert _count(db, entities) < 3000
    done = subprocess.run(
        [EXE, "import-from", "mcp-memory", str(data)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert _count(db, entities) == 3000


def _count(db: Path, sql: str) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return int(con.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def test_running_the_cli_in_process_leaves_the_callers_handlers(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from memory_substrate.cli.main import main

    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    res = CliRunner().invoke(main, ["--root", str(tmp_path), "--embedder", "none", "doctor"])
    assert res.exit_code == 0, res.output
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
