"""One namespace's slow captures cannot stall another's reads (issue 37, item 1).

- The flood: token B fires 45 web captures of a slow redirect chain (loopback stub) at one
  ``serve --transport http`` process while token A searches. A's search p95 stays <= 250 ms and
  its worst <= 1 s; B's captures past its bulkhead answer ``memory_rate_limited``.
- One deadline: a capture whose redirect chain, or whose server trickling its headers, outlasts
  ``web_timeout_s`` fails by that deadline (``web_fetch_failed``), whatever the number of hops.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from memory_substrate import Memory
from memory_substrate.errors import MemorySubstrateError
from tests.http.helpers import cli, http_server, server_env
from tests.reliability.common import report
from tests.reliability.flood import flood, slow_chain


def test_a_capture_flood_leaves_other_namespaces_searching(tmp_path: Path) -> None:
    env = server_env(tmp_path / "root")
    env["MEMORY_SUBSTRATE_WEB_ALLOW_PRIVATE"] = "true"  # the slow chain is a loopback stub
    token_a = cli(env, "token", "create", "--namespace", "tenant-a").strip()
    token_b = cli(env, "token", "create", "--namespace", "tenant-b").strip()
    with slow_chain(hops=3, hop_delay_s=1.0) as chain, http_server(env, tmp_path / "server.log") as url:
        result = anyio.run(lambda: flood(url, token_a, token_b, chain, captures=45))
    report("capture_flood", **result)
    during = result["during"]
    assert during["n"] >= 5, result
    assert during["p95_s"] <= 0.25, result
    assert during["worst_s"] <= 1.0, result
    outcomes = result["b_outcomes"]
    assert set(outcomes) <= {"completed", "memory_rate_limited"}, result
    assert outcomes.get("memory_rate_limited", 0) >= 45 - 12, result  # 4 run, 8 wait (the defaults)
    assert outcomes.get("completed", 0) >= 1, result


def _timed_ingest(memory: Memory, url: str) -> tuple[float, str | None]:
    started = time.monotonic()
    try:
        memory.ingest("web", {"url": url})
        code = None
    except MemorySubstrateError as exc:
        code = exc.code
    return time.monotonic() - started, code


def test_one_deadline_covers_every_redirect(make_settings: Any, namespace: str) -> None:
    memory = Memory(make_settings(web_allow_private=True, web_timeout_s=1.5), namespace=namespace)
    try:
        with slow_chain(hops=4, hop_delay_s=1.0) as chain:  # each hop inside the timeout, the chain not
            took, code = _timed_ingest(memory, chain)
    finally:
        memory.close()
    assert code == "memory_capture_web_fetch_failed", (took, code)
    assert took < 1.5 + 0.5, took


@contextmanager
def _trickler(seconds: float) -> Iterator[str]:
    """A raw HTTP server that sends a status line, then one header byte every 0.2 s."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                end = time.monotonic() + seconds
                try:
                    while time.monotonic() < end and not stop.is_set():
                        conn.sendall(b"X")
                        time.sleep(0.2)
                    conn.sendall(b"-Slow: 1\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def test_one_deadline_covers_a_trickling_server(make_settings: Any, namespace: str) -> None:
    memory = Memory(make_settings(web_allow_private=True, web_timeout_s=1.0), namespace=namespace)
    try:
        with _trickler(seconds=4.0) as url:
            took, code = _timed_ingest(memory, url)
    finally:
        memory.close()
    assert code == "memory_capture_web_fetch_failed", (took, code)
    assert took < 1.0 + 0.5, took


@pytest.mark.parametrize("limits", [(1, 0), (2, 1)])
def test_the_bulkhead_refuses_past_its_bound(limits: tuple[int, int]) -> None:
    from memory_substrate.errors import RateLimitedError
    from memory_substrate.mcp.bulkhead import Bulkhead

    concurrency, queue = limits
    bulkhead = Bulkhead("b", concurrency=concurrency, queue=queue)
    release = threading.Event()
    results: list[str] = []

    async def one() -> None:
        try:
            await bulkhead.run("memory_ingest", "web", release.wait, 5)
            results.append("done")
        except RateLimitedError as exc:
            assert exc.code == "memory_rate_limited" and "retry" in exc.message
            results.append("refused")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(concurrency + queue + 3):
                tg.start_soon(one)
            await anyio.sleep(0.3)
            assert results == ["refused"] * 3
            release.set()

    anyio.run(main)
    assert results.count("done") == concurrency + queue


def test_heavy_reads_are_told_apart_by_their_input_and_budget() -> None:
    from memory_substrate.mcp.bulkhead import HEAVY_INPUT_CHARS, is_heavy_read

    assert not is_heavy_read("memory_query", {"query": "why did the nightly fail?"}, {})
    assert is_heavy_read("memory_query", {"query": "x" * HEAVY_INPUT_CHARS}, {})
    # Many short strings count together, keys included; a budget past the bound is heavy too.
    assert is_heavy_read("memory_query", {"ids": ["know:" + "a" * 20] * (HEAVY_INPUT_CHARS // 20)}, None)
    assert is_heavy_read("memory_query", {"task": "plan the release"}, {"budget_tokens": 32_000})
    assert not is_heavy_read("memory_query", {"task": "plan the release"}, {"budget_tokens": True})
    # Writes are never heavy reads (captures have the slow-work bulkhead).
    assert not is_heavy_read("memory_remember", {"summary": "x" * HEAVY_INPUT_CHARS}, {})


@pytest.mark.anyio
async def test_a_namespace_runs_its_heavy_reads_one_at_a_time_and_refuses_past_its_queue(
    make_settings: Any, namespace: str
) -> None:
    from mcp import Client

    from memory_substrate.mcp.server import build_server
    from tests.helpers import ToolFailed, call, conversation

    memory = Memory(make_settings(heavy_read_concurrency=1, heavy_read_queue=1), namespace=namespace)
    words = " ".join(f"deploy{i % 700} key rotation window" for i in range(6_000))[:99_000]
    try:
        async with Client(build_server(memory)) as c:
            await call(c, "memory_ingest", "conversation", conversation([words[:20_000], "rotation noted"]))
            ends: list[str] = []

            async def heavy() -> None:
                try:
                    await call(c, "memory_query", "search", {"query": words}, {"result_unit": "segment"})
                    ends.append("done")
                except ToolFailed as exc:
                    assert "memory_rate_limited" in str(exc) and "heavy reads" in str(exc), exc
                    ends.append("refused")

            async def small() -> None:
                await call(c, "memory_query", "search", {"query": "key rotation"})
                ends.append("small")

            async with anyio.create_task_group() as tg:
                for _ in range(4):
                    tg.start_soon(heavy)
                tg.start_soon(small)
        # One runs, one waits, two are refused at once; the small read is neither refused nor
        # counted against the heavy limit (its order among the ends depends on the machine's load).
        assert sorted(ends) == ["done", "done", "refused", "refused", "small"], ends
    finally:
        memory.close()
