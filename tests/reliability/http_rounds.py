"""Resident memory of the HTTP server over repeated rounds of load (run by hand; not a test).

    python -m tests.reliability.http_rounds --rounds 4 --seconds 40 [--database-url postgresql://...]

Starts ``serve --transport http`` on loopback over a fresh store in a temporary directory, then
runs ROUNDS rounds of 50 clients (half of the calls writes) and prints the server's RSS after
each; growth that levels off is caches, growth that does not is a leak. Errors end the run.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.helpers import call, knowledge
from tests.http.helpers import cli, http_server, server_env
from tests.reliability.test_http_load import _rss_kib, _server_pid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ms-http-rounds-") as tmp:
        env = server_env(Path(tmp) / "root", args.database_url)
        token = cli(env, "token", "create", "--namespace", f"rounds-{int(time.time())}").strip()
        with http_server(env, Path(tmp) / "server.log") as url:
            pid = _server_pid(int(url.split(":")[2].split("/")[0]))
            calls = 0

            async def client(n: int, deadline: float) -> None:
                nonlocal calls
                headers = {"Authorization": f"Bearer {token}"}
                async with (
                    create_mcp_http_client(headers=headers) as http,
                    Client(streamable_http_client(url, http_client=http)) as c,
                ):
                    i = 0
                    while time.monotonic() < deadline:
                        if i % 2:
                            await call(
                                c, "memory_remember", "knowledge", knowledge(title=f"t {n} {i} lighthouse")
                            )
                        else:
                            await call(c, "memory_query", "search", {"query": "lighthouse"})
                        i += 1
                        calls += 1

            async def one_round() -> None:
                deadline = time.monotonic() + args.seconds
                async with anyio.create_task_group() as tg:
                    for n in range(args.clients):
                        tg.start_soon(client, n, deadline)

            print(f"start: {_rss_kib(pid) // 1024} MiB", flush=True)
            for r in range(args.rounds):
                anyio.run(one_round)
                print(f"round {r + 1}: {_rss_kib(pid) // 1024} MiB after {calls} calls", flush=True)


if __name__ == "__main__":
    main()
