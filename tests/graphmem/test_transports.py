"""``serve --toolset`` over stdio and HTTP, as real processes."""

from __future__ import annotations

import json
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

from tests.http.helpers import cli, http_server, server_env

GRAPH_TOOLS = 18
SUBSTRATE = {"memory_ingest", "memory_query", "memory_remember", "memory_maintain"}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("args", "env_value", "expected"),
    [
        (["--toolset", "graph"], None, GRAPH_TOOLS),
        ([], "all", GRAPH_TOOLS + 4),
        ([], None, 4),
    ],
)
async def test_stdio_serves_the_chosen_toolset(
    tmp_path: Path, args: list[str], env_value: str | None, expected: int
) -> None:
    env = {**os.environ, "MEMORY_SUBSTRATE_ROOT": str(tmp_path), "MEMORY_SUBSTRATE_EMBEDDER": "none"}
    env.pop("MEMORY_SUBSTRATE_TOOLSETS", None)
    if env_value:
        env["MEMORY_SUBSTRATE_TOOLSETS"] = env_value
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_substrate.cli.main", "serve", *args], env=env
    )
    async with Client(stdio_client(params)) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert len(names) == expected
        if expected == 4:
            assert names == SUBSTRATE
        else:
            made = (
                await c.call_tool("create_node", {"text": "stdio fact", "auto_link": False})
            ).structured_content
            assert made["success"] is True
            got = (await c.call_tool("get_node", {"node_id": made["node"]["id"]})).structured_content
            assert got["node"]["text"] == "stdio fact"


def _graph_calls(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        out = []
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            for name, args in calls:
                result = await client.call_tool(name, args)
                got = dict(result.structured_content or {})
                assert result.is_error is (got.get("success") is False), result.content
                out.append(got)
        return out

    return anyio.run(run)


def test_http_token_reaches_only_its_namespace_whatever_owner_id_says(tmp_path: Path, namespace: str) -> None:
    env = server_env(tmp_path / "root")
    env["MEMORY_SUBSTRATE_TOOLSETS"] = "all"
    token_a = cli(env, "token", "create", "--namespace", namespace).strip()
    token_b = cli(env, "token", "create", "--namespace", namespace + "-b").strip()
    with http_server(env, tmp_path / "server.log") as url:
        (made,) = _graph_calls(url, token_a, [("create_node", {"text": "secret of A", "auto_link": False})])
        node_id = made["node"]["id"]
        assert made["node"]["owner_id"] == namespace
        own, refused, smuggle = _graph_calls(
            url,
            token_b,
            [
                ("get_node", {"node_id": node_id}),
                ("get_node", {"node_id": node_id, "owner_id": namespace}),
                ("create_node", {"text": "planted", "owner_id": namespace, "auto_link": False}),
            ],
        )
        assert own["error_code"] == "memory_not_found"
        assert refused["error_code"] == "memory_validation_error" and "not reachable" in refused["error"]
        assert smuggle["success"] is False
        (mine,) = _graph_calls(url, token_a, [("search", {"query": "secret planted"})])
        assert [r["text"] for r in mine["results"]] == ["secret of A"]
    status = json.loads(cli(env, "--namespace", namespace, "status"))
    assert status["counts"]["objects"] == 1
