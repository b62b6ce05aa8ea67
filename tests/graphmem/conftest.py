"""Fixtures of the graph toolset tests: a Memory with the offline embedder and a fixed clock."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory


class FixedClock:
    """A clock that stands still until a test moves it."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def gmem(make_settings: Any, namespace: str, clock: FixedClock) -> Iterator[Memory]:
    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    mem.runtime.clock = clock
    try:
        yield mem
    finally:
        mem.close()


async def tool(client: Client, name: str, **args: Any) -> dict[str, Any]:
    """Call a graph tool; it answers with the spec-002 envelope, an MCP error result (``isError``)
    exactly when the envelope says ``success: false``."""
    result = await client.call_tool(name, args)
    assert result.structured_content is not None, result.content
    out = dict(result.structured_content)
    assert result.is_error is (out.get("success") is False), (result.is_error, out)
    assert json.loads(result.content[0].text) == out  # type: ignore[union-attr]
    return out


async def ok(client: Client, name: str, **args: Any) -> dict[str, Any]:
    out = await tool(client, name, **args)
    assert out["success"] is True, out
    return out


async def err(client: Client, name: str, code: str, **args: Any) -> dict[str, Any]:
    out = await tool(client, name, **args)
    assert out["success"] is False, out
    assert out["error_code"] == code, out
    assert "Traceback" not in out["error"] and 'File "' not in out["error"]
    return out


async def refused(server: Any, name: str, **args: Any) -> str:
    """Call a graph tool at the server's own entry point (arguments as parsed, which the SDK's
    client could not send: a lone surrogate, a NaN) and return the error of its refusal."""
    result = await server.call_tool(name, args)
    out = result.structured_content
    assert result.is_error and out is not None and out["success"] is False, out
    assert out["error_code"] == "memory_validation_error", out
    return str(out["error"])
