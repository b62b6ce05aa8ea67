"""Isolation: namespace B, over every surface, can neither see nor change nor detect A's data.

In process (both backends), over the real stdio server, and over HTTP with B's token; A's token
is the positive control (it does see A's data), a wrong token and no token get 401. After B has
tried every route, A's objects, segments and audit trail are exactly as they were.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memory_substrate import Memory, Settings
from memory_substrate.mcp.server import build_server
from memory_substrate.modes_reference import tool_modes
from tests.helpers import call, entry_point, knowledge
from tests.http.helpers import cli, http_server, post_status, server_env
from tests.reliability.common import SRC, report
from tests.reliability.isolation_routes import run_routes, seed_a, snapshot

pytestmark = pytest.mark.anyio


def _modes() -> dict[str, list[str]]:
    return {tool: list(modes) for tool, (_, modes) in tool_modes().items()}


async def _check_b(client: Client, a: Memory, seeded: dict[str, Any]) -> dict[str, Any]:
    b_knowledge = (await call(client, "memory_remember", "knowledge", knowledge(title="B's own claim")))[
        "object_id"
    ]
    outcome = await run_routes(client, seeded, b_knowledge, _modes())
    assert outcome["leaks"] == [], outcome["leaks"]
    assert snapshot(a) == seeded["snapshot"], "B changed A's namespace"
    return outcome


async def test_isolation_in_process(memory: Memory, backend: str) -> None:
    seeded = seed_a(memory)
    b = memory.for_namespace(memory.namespace + "-b")
    async with Client(build_server(b)) as client:
        outcome = await _check_b(client, memory, seeded)
    report(f"isolation_in_process[{backend}]", routes=outcome["routes"], calls=outcome["calls"], leaks=0)


async def test_isolation_over_stdio(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with Memory(Settings(root=root, embedder="none"), namespace="alpha") as a:
        seeded = seed_a(a)
        exe = entry_point()
        command, args = (
            (exe, ["serve"]) if exe else (sys.executable, ["-m", "memory_substrate.cli.main", "serve"])
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
        env.update(
            MEMORY_SUBSTRATE_ROOT=str(root),
            MEMORY_SUBSTRATE_NAMESPACE="beta",
            MEMORY_SUBSTRATE_EMBEDDER="none",
            PYTHONPATH=SRC,
        )
        async with Client(stdio_client(StdioServerParameters(command=command, args=args, env=env))) as client:
            outcome = await _check_b(client, a, seeded)
    report("isolation_stdio", routes=outcome["routes"], calls=outcome["calls"], leaks=0)


def test_isolation_over_http(tmp_path: Path) -> None:
    root = tmp_path / "store"
    env = server_env(root)
    with Memory(Settings(root=root, embedder="none"), namespace="alpha") as a:
        seeded = seed_a(a)
    token_a = cli(env, "token", "create", "--namespace", "alpha").strip()
    token_b = cli(env, "token", "create", "--namespace", "beta").strip()
    with http_server(env, tmp_path / "server.log") as url:

        async def with_token(token: str, check_b: bool) -> dict[str, Any]:
            async with (
                create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                if not check_b:  # the control: A's own token sees A's data
                    page = await call(client, "memory_query", "page", {"id": seeded["ids"]["cited"]})
                    return {"title": page["object"]["title"]}
                with Memory(Settings(root=root, embedder="none"), namespace="alpha") as a:
                    return await _check_b(client, a, seeded)

        outcome = anyio.run(with_token, token_b, True)
        control = anyio.run(with_token, token_a, False)
        assert "alphasecretqx" in control["title"]
        refused = [
            post_status(url, headers)
            for headers in (
                {},
                {"Authorization": "Bearer wrong"},
                {"Authorization": f"Bearer {token_a}x"},
                {"Authorization": token_a},
                {"Authorization": f"Basic {token_a}"},
            )
        ]
        assert refused == [401] * 5, refused
    report(
        "isolation_http",
        routes=outcome["routes"],
        calls=outcome["calls"],
        leaks=0,
        refused_without_valid_token=len(refused),
        control_saw_own_data=True,
    )
