"""HTTP under load: 50 concurrent MCP clients against one server on loopback.

Each client opens its own MCP session with a bearer token and loops over a mix of calls (search,
remember, page, recent) until the time is up: 5 s in CI, 30 s under MEMORY_SUBSTRATE_SOAK=1.
Reports calls, errors, p50/p95 latency and the server's resident memory before and after; the
server must then shut down cleanly on SIGTERM (exit 0, checked by ``http_server``).
Only loopback addresses are used.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.helpers import ToolFailed, call, knowledge
from tests.http.helpers import cli, http_server, server_env
from tests.reliability.common import report, scale

CLIENTS = 50


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _server_pid(port: int) -> int:
    """The pid listening on 127.0.0.1:port (the server process), from /proc/net/tcp."""
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, state = fields[1], fields[3]
        if state == "0A" and int(local.split(":")[1], 16) == port:
            inode = fields[9]
    assert inode is not None, "no listening socket"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if fd.readlink().as_posix() == f"socket:[{inode}]":
                    return int(proc.name)
        except OSError:
            continue
    raise AssertionError("no process owns the listening socket")


@pytest.mark.parametrize("backend_kind", ["sqlite", "postgres"])
def test_fifty_clients_on_loopback(
    tmp_path: Path, namespace: str, backend_kind: str, request: pytest.FixtureRequest
) -> None:
    url_db = request.getfixturevalue("postgres_url") if backend_kind == "postgres" else None
    env = server_env(tmp_path / "root", url_db)
    token = cli(env, "token", "create", "--namespace", namespace).strip()
    duration = int(os.environ.get("MEMORY_SUBSTRATE_HTTP_LOAD_SECONDS") or scale(5, 30))
    latencies: list[float] = []
    errors: list[str] = []
    with http_server(env, tmp_path / "server.log") as url:
        assert url.startswith("http://127.0.0.1:")
        pid = _server_pid(int(url.split(":")[2].split("/")[0]))

        async def client_loop(n: int, gate: dict[str, Any], seen: list[str]) -> None:
            async with (
                create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                # Every client connects first; the clock starts when the last one is ready.
                gate["ready"] += 1
                if gate["ready"] == gate["clients"]:
                    gate["deadline"] = time.monotonic() + gate["seconds"]
                    gate["go"].set()
                await gate["go"].wait()
                i = 0
                while time.monotonic() < gate["deadline"]:
                    started = time.perf_counter()
                    try:
                        step = (n + i) % 4
                        if step == 0:
                            out = await call(
                                client,
                                "memory_remember",
                                "knowledge",
                                knowledge(title=f"load {n}-{i} lighthouse", summary=f"client {n} call {i}"),
                            )
                            seen.append(out["object_id"])
                        elif step == 1:
                            await call(client, "memory_query", "search", {"query": "lighthouse client"})
                        elif step == 2 and seen:
                            await call(client, "memory_query", "page", {"id": seen[-1]})
                        else:
                            await call(client, "memory_query", "recent", {}, {"max_items": 5})
                    except ToolFailed as exc:
                        errors.append(f"{exc.code}: {exc.error.get('message')}")
                    except Exception as exc:  # transport-level failures count as errors too
                        errors.append(f"{type(exc).__name__}: {exc}")
                    latencies.append(time.perf_counter() - started)
                    i += 1

        def gate(clients: int, seconds: float) -> dict[str, Any]:
            return {"ready": 0, "clients": clients, "seconds": seconds, "go": anyio.Event(), "deadline": 0.0}

        async def run(clients: int, seconds: float) -> list[str]:
            seen: list[str] = []
            g = gate(clients, seconds)
            async with anyio.create_task_group() as tg:
                for n in range(clients):
                    tg.start_soon(client_loop, n, g, seen)
            return seen

        anyio.run(run, 4, 1.0)  # warm-up: imports, first queries, caches
        latencies.clear()
        rss_before = _rss_kib(pid)
        samples: list[float] = []
        stop = threading.Event()

        def sample() -> None:  # resident memory over the run: growth that levels off is caches, not a leak
            while not stop.wait(max(1.0, duration / 10)):
                samples.append(round(_rss_kib(pid) / 1024, 1))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        written = anyio.run(run, CLIENTS, float(duration))
        stop.set()
        sampler.join()
        wall = float(duration)
        rss_after = _rss_kib(pid)
    # http_server has sent SIGTERM and asserted exit status 0 (clean shutdown) by now.
    assert errors == [], errors[:10]
    assert latencies, "no call completed"
    ordered = sorted(latencies)
    report(
        f"http_load[{backend_kind}]",
        clients=CLIENTS,
        seconds=duration,
        calls=len(latencies),
        errors=len(errors),
        writes=len(written),
        calls_per_s=round(len(latencies) / wall, 1),
        p50_ms=round(statistics.median(ordered) * 1000, 1),
        p95_ms=round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1),
        rss_before_mib=round(rss_before / 1024, 1),
        rss_after_mib=round(rss_after / 1024, 1),
        rss_growth_mib=round((rss_after - rss_before) / 1024, 1),
        rss_samples_mib=samples,
        clean_shutdown=True,
    )
