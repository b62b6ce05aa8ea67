"""The spec-001 MCP surface through the SDK's in-process client: listing, envelope, errors."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import ToolFailed, call, conversation, text_of, tool_error

pytestmark = pytest.mark.anyio


async def test_lists_exactly_four_tools_three_resources_two_prompts(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert set(tools) == {"memory_ingest", "memory_query", "memory_remember", "memory_maintain"}
        assert tools["memory_query"].annotations is not None
        assert tools["memory_query"].annotations.read_only_hint is True
        assert tools["memory_remember"].annotations is not None
        assert tools["memory_remember"].annotations.read_only_hint is False
        assert tools["memory_maintain"].annotations is not None
        assert tools["memory_maintain"].annotations.destructive_hint is True
        schema = tools["memory_query"].input_schema
        assert schema["required"] == ["args"]
        resources = {str(r.uri) for r in (await c.list_resources()).resources}
        assert resources == {"memory://policy", "memory://agent-playbook", "memory://mcp-api-summary"}
        prompts = {p.name for p in (await c.list_prompts()).prompts}
        assert prompts == {"memory_task_start", "memory_review"}


async def test_resources_and_prompts_have_actionable_content(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        policy = text_of((await c.read_resource("memory://policy")).contents[0])
        assert "memory_source" in policy and "scope_refs" in policy and "apply=true" in policy
        playbook = text_of((await c.read_resource("memory://agent-playbook")).contents[0])
        assert "agent_extraction.v1" in playbook and "memory_remember" in playbook
        summary = text_of((await c.read_resource("memory://mcp-api-summary")).contents[0])
        for tool in ("memory_ingest", "memory_query", "memory_remember", "memory_maintain"):
            assert tool in summary
        start = await c.get_prompt("memory_task_start", {"task": "fix the login bug"})
        assert "fix the login bug" in text_of(start.messages[0].content)
        assert "待办项" in text_of(start.messages[0].content)
        review = await c.get_prompt("memory_review", {"summary": "shipped v2"})
        assert "possible_duplicates" in text_of(review.messages[0].content)


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, ("args", "Field required")),
        ({"args": {"input_data": {"query": "x"}}}, ("args.mode", "Field required")),
        ({"args": {"mode": "search"}}, ("args.input_data", "Field required")),
        (
            {"args": {"mode": "search", "input_data": {"query": "x"}, "root": "/tmp"}},
            ("args.root", "Extra inputs are not permitted"),
        ),
        (
            {"args": {"mode": "search", "input_data": {"query": "x"}, "surprise": 1}},
            ("args.surprise", "Extra inputs are not permitted"),
        ),
        # Beside args, not in it: refused too (the root is configured outside the tool schema).
        (
            {"args": {"mode": "search", "input_data": {"query": "x"}}, "root": "/tmp"},
            ("root", "Extra inputs are not permitted"),
        ),
        ({"args": {"mode": "delete_everything", "input_data": {}}}, ("args.mode", "'search'")),
    ],
)
async def test_envelope_is_strict(
    memory: Memory, arguments: dict[str, Any], fragment: tuple[str, str]
) -> None:
    field, message = fragment
    async with Client(build_server(memory)) as c:
        result = await c.call_tool("memory_query", arguments)
        assert result.is_error
        error = tool_error(text_of(result.content[0]))
        assert error["code"] == "memory_validation_error"
        assert error["details"]["tool"] == "memory_query"
        assert any(e["field"] == field and message in e["message"] for e in error["details"]["errors"]), error
        assert f"{field}: " in error["message"]


async def test_unknown_tool_is_a_typed_error(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        result = await c.call_tool("memory_forget_everything", {"args": {}})
        assert result.is_error
        error = tool_error(text_of(result.content[0]))
        assert error["code"] == "memory_unknown_tool"
        assert "memory_query" in error["details"]["known"]


async def test_input_data_and_options_are_validated_per_mode(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        with pytest.raises(ToolFailed) as exc:
            await call(c, "memory_query", "search", {"query": "x", "extra": 1})
        assert exc.value.code == "memory_validation_error"
        assert "input_data.extra: Extra inputs are not permitted" in exc.value.error["message"]
        # `include_segments` belongs to page and expand only; snippet_chars too.
        with pytest.raises(ToolFailed) as exc:
            await call(c, "memory_query", "search", {"query": "x"}, {"include_segments": True})
        assert "options.include_segments" in exc.value.error["message"]
        with pytest.raises(ToolFailed) as exc:
            await call(c, "memory_query", "search", {"query": "x"}, {"detail": "everything"})
        assert "options.detail" in exc.value.error["message"]
        with pytest.raises(ToolFailed):
            await call(c, "memory_query", "recent", {}, {"snippet_chars": 10})
        with pytest.raises(ToolFailed):
            await call(c, "memory_query", "search", {"query": "x"}, {"filters": {"object_type": "planet"}})


async def test_missing_object_error_keeps_the_id(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        with pytest.raises(ToolFailed) as exc:
            await call(c, "memory_query", "page", {"id": "know:does-not-exist"})
        assert exc.value.code == "memory_not_found"
        assert "know:does-not-exist" in exc.value.error["message"]


async def test_a_backend_that_cannot_run_answers_with_a_typed_error_not_success(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        with pytest.raises(ToolFailed) as exc:  # FalkorDB without MEMORY_SUBSTRATE_FALKORDB_URL
            await call(c, "memory_maintain", "configure", {"graph_backend": "falkordb"}, {"apply": True})
        assert exc.value.code == "memory_not_available" and "MEMORY_SUBSTRATE_FALKORDB_URL" in exc.value.text
        config = await call(c, "memory_maintain", "structure", {})
        assert "graph_backend" not in config["config"]


async def test_structure_and_audit_are_read_only_and_count(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        ingest = await call(
            c, "memory_ingest", "conversation", conversation(["hello there", "general kenobi"])
        )
        structure = await call(c, "memory_maintain", "structure", {})
        assert structure["counts"]["by_object_type"] == {"source": 1}
        assert structure["counts"]["segments"] == 2
        assert structure["storage"]["schema_version"] >= 1
        audit = await call(c, "memory_maintain", "audit", {"object_id": ingest["source_id"]})
        assert [e["action"] for e in audit["events"]] == ["create"]
        assert audit["events"][0]["patch_id"] == ingest["patch_id"]
        again = await call(c, "memory_maintain", "structure", {})
        assert again["counts"] == structure["counts"]
