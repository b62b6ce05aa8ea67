"""NaN, Infinity and -Infinity: one validation error naming the field, on every input path (the
four tools, the graph toolset, the CLI, the HTTP transport's wire, the Python API), and nothing
written. Both backends: on SQLite such a number used to be stored and then broke every search
and context of the namespace; on PostgreSQL the write itself was an internal error.

The SDK's client writes a non-finite float as ``null`` when it serialises a request, so the
tool calls here enter at the server's own ``call_tool`` (the arguments as the SDK hands them
over after parsing) or as raw JSON text over HTTP and stdio, where ``Infinity`` is what arrives.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from memory_substrate import Memory
from memory_substrate.errors import ValidationError
from memory_substrate.mcp.server import build_server
from memory_substrate.modes_reference import declared
from tests.cli.test_cli import _run
from tests.helpers import call, conversation, knowledge, text_of, tool_error, tool_result
from tests.http.helpers import cli, http_server, server_env

pytestmark = pytest.mark.anyio

NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def work_item(**extra: Any) -> dict[str, Any]:
    return knowledge(kind="task", title="Ship the release", **extra)


def message_with(metadata: dict[str, Any]) -> dict[str, Any]:
    data = conversation(["the deploy finished"])
    data["messages"][0]["metadata"] = metadata
    return data


def cases(bad: float) -> list[tuple[str, str, dict[str, Any], dict[str, Any], str]]:
    """(tool, mode, input_data, options, the field the error must name)."""
    return [
        ("memory_remember", "knowledge", knowledge(metadata={"score": bad}), {}, "input_data.metadata.score"),
        (
            "memory_remember",
            "work_item",
            work_item(metadata={"effort": {"days": [1, bad]}}),
            {},
            "input_data.metadata.effort.days.1",
        ),
        (
            "memory_remember",
            "activity",
            knowledge(kind="deploy", metadata={"took_s": bad}),
            {},
            "input_data.metadata.took_s",
        ),
        (
            "memory_ingest",
            "conversation",
            message_with({"score": bad}),
            {},
            "input_data.messages.0.metadata.score",
        ),
        (
            "memory_remember",
            "knowledge",
            knowledge(payload={"subject": "api", "predicate": "latency", "value": bad}),
            {},
            "input_data.payload.value",
        ),
        (
            "memory_remember",
            "batch",
            {"entries": [{"mode": "knowledge", "input_data": knowledge(metadata={"x": bad})}]},
            {},
            "input_data.entries.0.input_data.metadata.x",
        ),
        ("memory_query", "search", {"query": "deploy"}, {"min_score": bad}, "options.min_score"),
    ]


def nothing_written(memory: Any) -> None:
    counts = memory.status()["counts"]
    assert counts["objects"] == 0 and counts["segments"] == 0, counts
    with memory.runtime.read_with_expired() as session:
        assert session.list_patches(limit=1) == []


@pytest.mark.parametrize("name", list(NON_FINITE))
async def test_the_four_tools_refuse_a_non_finite_number_naming_the_field(memory: Memory, name: str) -> None:
    server = build_server(memory)
    for tool, mode, data, options, field in cases(NON_FINITE[name]):
        result = tool_result(
            await server.call_tool(tool, {"args": {"mode": mode, "input_data": data, "options": options}})
        )
        assert result.is_error, (tool, mode, field)
        error = tool_error(text_of(result.content[0]))
        assert error["code"] == "memory_validation_error", (tool, mode, error)
        assert error["message"] == f"{field}: must be a finite number", error
        assert error["details"]["errors"] == [
            {"field": field, "message": "must be a finite number", "type": "finite_number"}
        ]
    nothing_written(memory)
    async with Client(server) as c:  # the namespace still reads
        assert (await call(c, "memory_query", "context", {"task": "deploy"}))["result_type"]


def test_the_python_api_refuses_them_and_keeps_other_problems_in_the_same_answer(memory: Memory) -> None:
    with pytest.raises(ValidationError) as exc:
        memory.remember("knowledge", knowledge(metadata={"a": math.nan, "b": "x\x00y", "c": [math.inf]}))
    errors = exc.value.details["errors"]
    assert isinstance(errors, list)
    fields = [(e["field"], e["type"]) for e in errors]
    assert fields == [
        ("input_data.metadata.a", "finite_number"),
        ("input_data.metadata.b", "string_characters"),
        ("input_data.metadata.c.0", "finite_number"),
    ]
    nothing_written(memory)


def test_depth_does_not_hide_one(memory: Memory) -> None:
    deep: Any = math.inf
    for _ in range(5000):  # deeper than any recursion limit
        deep = [deep]
    with pytest.raises(
        ValidationError, match=r"input_data\.metadata\.deep(\.0){5000}: must be a finite number"
    ):
        memory.remember("knowledge", knowledge(metadata={"deep": deep}))


@pytest.mark.parametrize("token", ["Infinity", "-Infinity", "NaN", "1e999"])
def test_the_cli_refuses_them_in_one_line(tmp_path: Path, token: str) -> None:
    data = json.dumps(knowledge(title="Score board")).replace(
        '"kind"', f'"metadata": {{"score": {token}}}, "kind"'
    )
    out = _run(tmp_path, "remember", "knowledge", data)
    assert out.returncode == 2, out.stderr
    assert (
        out.stderr == "error [memory_validation_error]: input_data.metadata.score: must be a finite number\n"
    ), out.stderr
    found = _run(tmp_path, "query", "search", '{"query": "score board"}')
    assert found.returncode == 0 and json.loads(found.stdout)["items"] == [], found.stderr


def _rpc(url: str, token: str, body: str) -> dict[str, Any]:
    """One raw JSON-RPC POST to the stateless HTTP endpoint: the text exactly as written."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    reply = httpx2.post(url, headers=headers, content=body.encode(), timeout=60)
    assert reply.status_code == 200, (reply.status_code, reply.text)
    return dict(reply.json())


def test_the_http_transport_refuses_them_as_sent_on_the_wire(tmp_path: Path, namespace: str) -> None:
    env = server_env(tmp_path / "root")
    token = cli(env, "token", "create", "--namespace", namespace).strip()
    data = json.dumps(knowledge(title="Latency budget"))[:-1] + ', "metadata": {"p99": Infinity}}'
    body = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "memory_remember", '
        f'"arguments": {{"args": {{"mode": "knowledge", "input_data": {data}}}}}}}}}'
    )
    with http_server(env, tmp_path / "server.log") as url:
        reply = _rpc(url, token, body)
        assert reply["result"]["isError"] is True, reply
        error = tool_error(reply["result"]["content"][0]["text"])
        assert error["code"] == "memory_validation_error"
        assert error["message"] == "input_data.metadata.p99: must be a finite number", error
        search = (
            '{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "memory_query", '
            '"arguments": {"args": {"mode": "search", "input_data": {"query": "latency budget"}}}}}'
        )
        found = _rpc(url, token, search)["result"]
        assert found.get("isError") is not True and found["structuredContent"]["items"] == [], found
    assert "Traceback" not in (tmp_path / "server.log").read_text()


# --- every mode, a non-finite number at a random depth ----------------------------------------

BASES: dict[str, dict[str, Any]] = {
    "knowledge": knowledge(),
    "work_item": work_item(),
    "activity": knowledge(kind="deploy"),
    "conversation": conversation(["one", "two"]),
    "search": {"query": "deploy"},
    "context": {"task": "deploy"},
}
KEY = st.sampled_from(["metadata", "payload", "value", "deep", "x", "0"])


@st.composite
def poisoned(
    draw: st.DrawFn, modes: list[tuple[str, str]]
) -> tuple[str, str, dict[str, Any], dict[str, Any], str]:
    tool, mode = draw(st.sampled_from(modes))
    where = draw(st.sampled_from(["input_data", "input_data", "options"]))
    doc: dict[str, Any] = json.loads(json.dumps(BASES.get(mode, {})))
    options: dict[str, Any] = {}
    target = doc if where == "input_data" else options
    path = [where]
    node: Any = target
    for _ in range(draw(st.integers(0, 6))):
        key = draw(KEY)
        if draw(st.booleans()):
            child: Any = {}
            node[key] = child
            path.append(key)
        else:
            child = {}
            node[key] = [0, child]
            path += [key, "1"]
        node = child
    leaf = draw(st.sampled_from(["score", "value", "n"]))
    node[leaf] = draw(st.sampled_from(list(NON_FINITE.values())))
    return tool, mode, doc, options, ".".join([*path, leaf])


def test_fuzz_every_mode_refuses_a_non_finite_number_at_any_depth(memory: Memory) -> None:
    server = build_server(memory)
    modes = [(tool, m.name) for tool, declared_modes in declared().items() for m in declared_modes]
    seen: set[tuple[str, str]] = set()

    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(poisoned(modes))
    def refused(drawn: tuple[str, str, dict[str, Any], dict[str, Any], str]) -> None:
        tool, mode, data, options, field = drawn
        seen.add((tool, mode))
        result = tool_result(
            anyio.run(
                server.call_tool, tool, {"args": {"mode": mode, "input_data": data, "options": options}}
            )
        )
        assert result.is_error, (tool, mode, field)
        error = tool_error(text_of(result.content[0]))
        assert error["code"] == "memory_validation_error", (tool, mode, error)
        assert error["details"]["errors"][0]["field"] == field, (error, field)

    refused()
    assert len(seen) > len(modes) // 2, sorted(set(modes) - seen)
    nothing_written(memory)
