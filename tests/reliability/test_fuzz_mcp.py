"""Fuzzing the MCP surface with Hypothesis, through the SDK's in-process client.

Every tool the server lists, every mode in its schema (plus made-up ones), the fields each mode
validates (plus made-up ones), filled with hostile values: wrong types, missing fields, huge and
deeply nested values, NUL and lone surrogates, full-text operator characters, SQL-looking strings.
The property: each call ends in a success or in a typed error document (never
``memory_internal_error``), and the server still answers afterwards. Both backends. The run is
deterministic (a fixed seed) in CI; under MEMORY_SUBSTRATE_SOAK=1 it draws fresh random examples.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import anyio.from_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from memory_substrate.mcp.server import build_server
from memory_substrate.modes_reference import collect
from tests.helpers import call, conversation, knowledge, tool_error
from tests.reliability.common import SOAK, report, scale
from tests.reliability.hostile import KEYS, field_values, typed, values


def _encodable(arguments: Any) -> bool:
    try:
        json.dumps(arguments, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _mode_enum(tool: Any) -> list[str]:
    schema = tool.input_schema
    args = schema["properties"]["args"]
    if "$ref" in args:
        args = schema["$defs"][args["$ref"].rsplit("/", 1)[-1]]
    return list(args["properties"]["mode"].get("enum", []))


def _fields() -> dict[tuple[str, str], dict[str, Any]]:
    """The model each (tool, mode) validates input_data and options with."""
    return {(e.tool, e.mode): {"input_data": e.input_model, "options": e.options_model} for e in collect()}


@st.composite
def calls(
    draw: st.DrawFn,
    tools: dict[str, list[str]],
    fields: dict[tuple[str, str], dict[str, Any]],
    tmp_files: list[str],
    ids: list[str],
) -> tuple[str, Any]:
    # Structure is chosen with a seeded Random (Hypothesis favours a few choices when it has only a
    # handful, and most of its distinct examples would then be unknown tools); values with Hypothesis.
    rnd = draw(st.randoms(use_true_random=False))
    roll = rnd.random()
    name = (
        rnd.choice(list(tools))
        if roll < 0.9
        else draw(st.sampled_from(["memory_nope", ""]) | st.text(max_size=20))
    )
    shape = rnd.randrange(12)
    if shape == 0:  # anything at all as the arguments
        return name, draw(st.dictionaries(KEYS, values(), max_size=3))
    modes = tools.get(name, [])
    mode = rnd.choice(modes) if modes and shape > 1 else draw(st.one_of(st.text(max_size=12), values()))
    known = fields.get((name, mode), {}) if isinstance(mode, str) else {}
    args: dict[str, Any] = {"mode": mode}
    for part in ("input_data", "options"):
        if part == "input_data" and shape == 1:
            continue  # a missing required field
        model = known.get(part)
        model_fields = model.model_fields if model is not None else {}
        body = {}
        for f, info in model_fields.items():
            if rnd.random() < (0.9 if info.is_required() else 0.4):
                well_typed = f not in ("path", "url") and rnd.random() < 0.85
                body[f] = draw(typed(info.annotation, ids) if well_typed else field_values(f, tmp_files))
        if "apply" in model_fields and rnd.random() < 0.7:
            body["apply"] = rnd.choice([True, True, True, "true", 1, None])
        if rnd.random() < 0.1:
            body.update(draw(st.dictionaries(KEYS, values(), max_size=2)))
        args[part] = body if rnd.random() < 0.95 else draw(values())
    if shape == 11:
        args[draw(KEYS)] = draw(values())
    return name, {"args": args}


def test_hostile_calls_get_typed_errors_and_the_server_keeps_answering(
    memory: Any, backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # relative paths resolve into an empty directory
    (tmp_path / "notes.md").write_text("# Notes\n\nplain text\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01binary")
    (tmp_path / "outside").symlink_to("/etc/hostname")
    tmp_files = [str(tmp_path / n) for n in ("notes.md", "blob.bin", "outside")]
    outcomes: collections.Counter[str] = collections.Counter()
    examples = scale(120, 1500) if backend == "sqlite" else scale(50, 500)

    server = build_server(memory)
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(server)) as client,
    ):
        # Something to find, so reads and lifecycle modes reach past "not found".
        src = portal.call(
            call, client, "memory_ingest", "conversation", conversation(["AND OR NOT near", "DROP TABLE"])
        )
        know = portal.call(call, client, "memory_remember", "knowledge", knowledge())
        ids = [src["source_id"], know["object_id"], "seg-1", "scope:project", "know:missing"]
        listed = portal.call(client.list_tools).tools
        tools = {t.name: _mode_enum(t) for t in listed}
        fields = _fields()

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=not SOAK,
            suppress_health_check=list(HealthCheck),
        )
        @given(calls(tools, fields, tmp_files, ids))
        def check(drawn: tuple[str, Any]) -> None:
            name, arguments = drawn
            if _encodable(arguments):
                result = portal.call(client.call_tool, name, arguments)
            else:
                # A lone surrogate cannot be encoded by the SDK's client; over the wire it arrives as a
                # JSON "\\ud800" escape, which the server parses into exactly these arguments.
                result = portal.call(server.call_tool, name, arguments)
            if result.is_error:
                error = tool_error(result.content[0].text)
                assert error["code"] != "memory_internal_error", (name, arguments, error)
                outcomes[error["code"]] += 1
            else:
                assert isinstance(result.structured_content, dict), (name, arguments)
                outcomes["ok"] += 1

        check()
        # Still answering, and still right.
        assert {t.name for t in portal.call(client.list_tools).tools} == set(tools)
        found = portal.call(call, client, "memory_query", "search", {"query": "DROP TABLE"})
        assert found["items"], "the store lost its data or its index during fuzzing"

    tried = sum(outcomes.values())
    report(
        f"fuzz_mcp[{backend}]",
        tried=tried,
        ok=outcomes["ok"],
        typed_errors=tried - outcomes["ok"],
        internal_errors=0,
        codes=dict(outcomes.most_common()),
    )
