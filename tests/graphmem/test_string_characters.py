"""NUL and lone surrogates: one validation error, with the field's path, in every field of every
mode and tool (the four tools, the graph toolset, the CLI), metadata and options included. Both
backends; nothing is written by a refused call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.errors import ValidationError
from memory_substrate.mcp.server import build_server
from tests.cli.test_cli import _run
from tests.graphmem.conftest import ok, refused
from tests.helpers import call, conversation, knowledge, text_of, tool_error, tool_result

pytestmark = pytest.mark.anyio

BAD = {"NUL": "a\x00b", "lone surrogate": "x\ud800y"}


@pytest.mark.parametrize("what", list(BAD))
async def test_four_tools_refuse_bad_characters_anywhere_with_the_path(memory: Memory, what: str) -> None:
    bad = BAD[what]
    cases = [
        (
            "memory_ingest",
            "conversation",
            {
                **conversation(["hello"]),
                "messages": [{"role": "user", "content": "hello", "metadata": {"k": bad}}],
            },
            {},
            "input_data.messages.0.metadata.k",
        ),
        ("memory_ingest", "conversation", conversation([bad]), {}, "input_data.messages.0.content"),
        (
            "memory_ingest",
            "conversation",
            {**conversation(["hi"]), "origin": {"host": bad}},
            {},
            "input_data.origin.host",
        ),
        (
            "memory_remember",
            "knowledge",
            knowledge(payload={"deep": [1, {"x": bad}]}),
            {},
            "input_data.payload.deep.1.x",
        ),
        ("memory_remember", "knowledge", knowledge(title=bad), {}, "input_data.title"),
        ("memory_query", "search", {"query": "ok"}, {"filters": {"kind": bad}}, "options.filters.kind"),
        ("memory_query", "search", {"query": bad}, {}, "input_data.query"),
        ("memory_maintain", "report", {"note": bad}, {}, "input_data.note"),
        ("memory_remember", "knowledge", knowledge(payload={f"k{bad}": 1}), {}, "input_data.payload.k"),
    ]
    server = build_server(memory)
    for tool, mode, data, options, path in cases:
        # The server's own entry point: a JSON "\\ud800" escape arrives as this, after parsing (the
        # SDK's client cannot encode a lone surrogate to send it).
        result = tool_result(
            await server.call_tool(tool, {"args": {"mode": mode, "input_data": data, "options": options}})
        )
        assert result.is_error, (tool, mode, path)
        error = tool_error(text_of(result.content[0]))
        assert error["code"] == "memory_validation_error", (tool, mode, error)
        assert (
            error["message"].startswith(path) and f"must not contain {what} characters" in error["message"]
        ), error
        assert error["details"]["errors"][0]["field"].startswith(path)
    async with Client(server) as c:
        recent = await call(c, "memory_query", "recent", {})
        assert recent["items"] == []  # nothing was written


def test_the_python_api_raises_validation_error(memory: Memory) -> None:
    with pytest.raises(
        ValidationError, match=r"input_data.messages.0.metadata.k: must not contain lone surrogate"
    ):
        memory.ingest(
            "conversation",
            {"title": "t", "messages": [{"role": "user", "content": "hi", "metadata": {"k": "\udc80"}}]},
        )


@pytest.mark.parametrize("what", list(BAD))
async def test_graph_toolset_refuses_bad_characters_in_its_envelope(gmem: Memory, what: str) -> None:
    bad = BAD[what]
    server = build_server(gmem, "graph")
    assert (await refused(server, "create_node", text="a fact", metadata={"note": bad})).startswith(
        f"metadata.note: must not contain {what} characters"
    )
    assert (
        f"must not contain {what}" in await refused(server, "create_node", text=bad)
        or what == "lone surrogate"
    )
    await refused(server, "create_triplet", subject="Alice", predicate="WORKS_AT", object_value=bad)
    await refused(server, "search", query=bad)
    async with Client(server) as c:
        assert (await ok(c, "get_stats"))["stats"]["facts"] == 0


def test_cli_refuses_bad_characters_in_one_line(tmp_path: Path) -> None:
    msg = {"title": "t", "messages": [{"role": "user", "content": "hi", "metadata": {"k": "\ud800"}}]}
    out = _run(tmp_path, "ingest", "conversation", json.dumps(msg))  # "\ud800" as a JSON escape
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith(
        "error [memory_validation_error]: input_data.messages.0.metadata.k: must not contain lone surrogate characters"
    ), out.stderr
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1
    nul = _run(tmp_path, "query", "search", json.dumps({"query": "a\x00b"}))
    assert nul.returncode == 2 and "input_data.query: must not contain NUL characters" in nul.stderr, (
        nul.stderr
    )
