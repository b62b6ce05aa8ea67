"""The tool lists an agent loads on every session stay small without losing what it needs to
call the tools right: modes as an enum, required fields, and where the per-mode reference is."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import text_of

pytestmark = pytest.mark.anyio

LIMITS = {"substrate": 6000, "all": 16000}  # characters of the tools/list result as JSON


async def test_tool_lists_fit_their_limits_and_keep_the_modes(memory: Memory) -> None:
    for toolset, limit in LIMITS.items():
        async with Client(build_server(memory, toolset)) as c:
            tools = (await c.list_tools()).tools
            size = len(
                json.dumps(
                    {"tools": [t.model_dump(mode="json", exclude_none=True, by_alias=True) for t in tools]}
                )
            )
            assert size <= limit, (toolset, size)
            for t in tools:
                if t.name.startswith("memory_"):
                    args = t.input_schema["$defs"]["Args"]
                    assert args["required"] == ["mode", "input_data"] and args["properties"]["mode"]["enum"]
                    assert args["additionalProperties"] is False
                    assert t.input_schema["additionalProperties"] is False  # nothing beside args either
            if toolset == "substrate":
                summary = text_of((await c.read_resource("memory://mcp-api-summary")).contents[0])
                assert "SOURCE_ID#seg-N" in summary and "include_items" in summary


def _required_listed(description: str) -> dict[str, set[str]]:
    """``Required by mode: a/b: x, y; c: z.`` as {mode: fields}."""
    listed: dict[str, set[str]] = {}
    body = description.split("Required by mode: ", 1)[1].rstrip(".")
    for entry in body.split("; "):
        modes, fields = entry.split(": ", 1)
        for mode in modes.split("/"):
            listed[mode] = set(fields.split(", "))
    return listed


async def test_tool_list_names_each_modes_required_fields(memory: Memory) -> None:
    # What the schema says each mode requires is read from the mode's own input model (the
    # registry), so tools/list and the validation cannot disagree; modes requiring none are left out.
    from memory_substrate.modes_reference import declared

    async with Client(build_server(memory, "substrate")) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    for tool, modes in declared().items():
        args = tools[tool].input_schema["$defs"]["Args"]
        assert args["properties"]["mode"]["enum"] == [m.name for m in modes]
        listed = _required_listed(args["properties"]["input_data"]["description"])
        for mode in modes:
            required = set(mode.input_model.model_json_schema().get("required", []))
            assert listed.get(mode.name, set()) == required, (tool, mode.name)
        assert set(listed) <= {m.name for m in modes}
        # input_data stays an open object: each mode's model validates it in the service
        assert args["properties"]["input_data"]["type"] == "object"
        assert "title" not in tools[tool].input_schema and "title" not in (tools[tool].output_schema or {})
