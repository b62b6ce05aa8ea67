"""The graph toolset refuses NaN and Infinity in any argument, in its envelope, naming the
argument's path, and writes nothing (both backends). The other input paths:
tests/reliability/test_non_finite_inputs.py."""

from __future__ import annotations

import math

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.graphmem.conftest import ok, refused
from tests.helpers import tool_result

pytestmark = pytest.mark.anyio


async def test_the_graph_toolset_refuses_them_in_its_envelope(gmem: Memory) -> None:
    server = build_server(gmem, "graph")
    assert (
        await refused(server, "create_node", text="a fact", metadata={"score": math.nan})
        == "metadata.score: must be a finite number"
    )
    node = tool_result(await server.call_tool("create_node", {"text": "the api is fast"})).structured_content
    assert node is not None and node["success"] is True, node
    node_id = node["node"]["id"]
    assert "metadata.p99: must be a finite number" in await refused(
        server, "update_node", node_id=node_id, metadata={"p99": math.inf}
    )
    assert "properties.weight" in await refused(
        server,
        "create_relation",
        from_id=node_id,
        to_id=node_id,
        relation_type="RELATED_TO",
        properties={"weight": -math.inf},
    )
    assert "semantic_threshold: must be a finite number" in await refused(
        server, "create_node", text="another fact", auto_link=True, semantic_threshold=math.nan
    )
    async with Client(server) as c:
        stats = (await ok(c, "get_stats"))["stats"]
        assert stats["facts"] == 1 and stats["relations"] == 0, stats
