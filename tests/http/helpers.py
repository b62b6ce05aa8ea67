"""Run ``memory-substrate serve --transport http`` as a real process and talk MCP to it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.helpers import tool_error

SRC = str(Path(__file__).resolve().parents[2] / "src")


def server_env(root: Path, database_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env.update(MEMORY_SUBSTRATE_ROOT=str(root), MEMORY_SUBSTRATE_EMBEDDER="none", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    if database_url:
        env["MEMORY_SUBSTRATE_DATABASE_URL"] = database_url
    return env


def cli(env: dict[str, str], *args: str) -> str:
    """Run the CLI; return stdout (raises with stderr on failure)."""
    done = subprocess.run(
        [sys.executable, "-m", "memory_substrate.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise AssertionError(f"memory-substrate {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(env: dict[str, str], log: Path, *extra: str) -> Iterator[str]:
    """Start a server on a free loopback port; yield its MCP URL; SIGTERM it and expect exit 0.

    ``extra`` are more ``serve`` options (``--allow-path DIR``...)."""
    port = free_port()
    with log.open("w") as fh:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memory_substrate.cli.main",
                "serve",
                "--transport",
                "http",
                "--port",
                str(port),
                *extra,
            ],
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"server exited early ({proc.returncode}): {log.read_text()}")
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"server did not start: {log.read_text()}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(f"server ignored SIGTERM: {log.read_text()}") from None
    assert code == 0, f"server exit code {code}: {log.read_text()}"


def call_tools(url: str, token: str, calls: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Call (tool, mode, input_data) in order over one MCP connection.

    Each result is the tool's structured content, or ``{"error": {...}}`` for a tool error.
    """

    async def run() -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            for tool, mode, data in calls:
                result = await client.call_tool(tool, {"args": {"mode": mode, "input_data": data}})
                if result.is_error:
                    out.append({"error": tool_error(result.content[0].text)})  # type: ignore[union-attr]
                else:
                    out.append(dict(result.structured_content or {}))
        return out

    return anyio.run(run)


def post_status(url: str, headers: dict[str, str], body: bytes = b"{}") -> int:
    """The HTTP status of a bare POST to the MCP endpoint."""
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    return httpx2.post(url, headers={**base, **headers}, content=body, timeout=30).status_code


def knowledge(title: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "fact",
        "title": title,
        "summary": f"{title}, recorded over HTTP.",
        "reason": "integration test",
        "memory_source": "user_declared",
        "scope_refs": ["scope:project"],
        **extra,
    }
