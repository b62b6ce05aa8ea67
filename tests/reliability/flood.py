"""A capture flood from one namespace while another searches (issue 37), for the test and the bench.

Namespace B fires ``captures`` web captures at once, each of a slow redirect chain served by a
loopback stub (``hops`` redirects, each answered after ``hop_delay_s``), while namespace A
searches back to back over its own MCP connection. A's search latencies are measured first
with no flood, then during it, against one ``memory-substrate serve --transport http`` process.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.helpers import ToolFailed, call, knowledge
from tests.loopback import send_page, send_redirect, serve_loopback

PAGE = b"<html><body><article><h1>Slow</h1><p>The end of a slow redirect chain.</p></article></body></html>"


def slow_chain_handler(hops: int, hop_delay_s: float) -> type[BaseHTTPRequestHandler]:
    """A handler for ``/hop/0`` .. ``/hop/{hops}``: each hop waits, then redirects to the next;
    the last one answers a page."""

    class SlowChain(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            n = int(self.path.rsplit("/", 1)[1]) if self.path.startswith("/hop/") else hops
            if n < hops:
                time.sleep(hop_delay_s)
                send_redirect(self, f"/hop/{n + 1}")
                return
            send_page(self, PAGE)

    return SlowChain


@contextmanager
def slow_chain(hops: int, hop_delay_s: float) -> Iterator[str]:
    """The URL of the first hop of a slow redirect chain on loopback."""
    with serve_loopback(slow_chain_handler(hops, hop_delay_s)) as base:
        yield f"{base}/hop/0"


def figures(latencies: list[float]) -> dict[str, Any]:
    """Count, p50, p95 and worst of ``latencies`` in seconds."""
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50_s": round(statistics.median(ordered), 4),
        "p95_s": round(p95, 4),
        "worst_s": round(ordered[-1], 4),
    }


async def _searches(client: Client, seconds: float, out: list[float]) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        await call(client, "memory_query", "search", {"query": "lighthouse keeper"})
        out.append(time.perf_counter() - started)


async def _capture(client: Client, url: str, outcomes: Counter[str | None], durations: list[float]) -> None:
    started = time.perf_counter()
    try:
        await call(client, "memory_ingest", "web", {"url": url})
        outcomes["completed"] += 1
    except ToolFailed as exc:
        outcomes[exc.code] += 1
    durations.append(time.perf_counter() - started)


async def flood(
    mcp_url: str,
    token_a: str,
    token_b: str,
    chain_url: str,
    *,
    captures: int = 45,
    before_s: float = 2.0,
    during_s: float = 3.0,
    settle_s: float = 0.5,
) -> dict[str, Any]:
    """Run the flood; A's search figures before and during it, and B's outcomes."""
    http_a = create_mcp_http_client(headers={"Authorization": f"Bearer {token_a}"})
    http_b = create_mcp_http_client(headers={"Authorization": f"Bearer {token_b}"})
    async with (
        http_a,
        http_b,
        Client(streamable_http_client(mcp_url, http_client=http_a)) as a,
        Client(streamable_http_client(mcp_url, http_client=http_b)) as b,
    ):
        for i in range(40):
            await call(
                a,
                "memory_remember",
                "knowledge",
                knowledge(title=f"lighthouse keeper note {i}", summary=f"The keeper logged night {i}."),
            )
        warm: list[float] = []
        await _searches(a, 0.5, warm)
        before: list[float] = []
        await _searches(a, before_s, before)
        outcomes: Counter[str | None] = Counter()
        durations: list[float] = []
        during: list[float] = []
        flood_started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(captures):
                tg.start_soon(_capture, b, chain_url, outcomes, durations)
            await anyio.sleep(settle_s)  # the captures are in flight
            await _searches(a, during_s, during)
        return {
            "before": figures(before),
            "during": figures(during),
            "b_outcomes": dict(outcomes),
            "b_longest_s": round(max(durations), 2),
            "flood_s": round(time.perf_counter() - flood_started, 2),
        }
