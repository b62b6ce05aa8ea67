"""The tool lists an agent loads on every session stay small without losing what it needs to
call the tools right: modes as an enum, required fields, and where the per-mode reference is."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from memory_substrate.mcp.server import build_server

pytestmark = pytest.mark.anyio

LIMITS = {"substrate": 6000, "all": 16000}  # characters of the tools/list result as JSON


async def test_tool_lists_fit_their_limits_and_keep_the_modes(memory):
    for toolset, limit in LIMITS.items():
        async with Client(build_server(memory, toolset)) as c:
            tools = (await c.list_tools()).tools
            size = len(json.dumps({"tools": [t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in tools]}))
            assert size <= limit, (toolset, size)
            for t in tools:
                if t.name.startswith("memory_"):
                    args = t.input_schema["$defs"]["Args"]
                    assert args["required"] == ["mode", "input_data"] and args["properties"]["mode"]["enum"]
                    assert args["additionalProperties"] is False
            if toolset == "substrate":
                summary = (await c.read_resource("memory://mcp-api-summary")).contents[0].text
                assert "SOURCE_ID#seg-N" in summary and "include_items" in summary
