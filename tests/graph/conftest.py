"""Fixtures for the knowledge-graph tests: an MCP client over a fresh namespace, on both backends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call

GOV = {
    "reason": "captured in a design conversation",
    "memory_source": "agent_inferred",
    "scope_refs": ["scope:project"],
}


@pytest.fixture
def static_memory(make_settings: Any, namespace: str) -> Iterator[Memory]:
    """A memory with the bundled static embedder, for the semantic resolution pass."""
    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    try:
        yield mem
    finally:
        mem.close()


@pytest.fixture
async def client(memory: Memory) -> AsyncIterator[Client]:
    async with Client(build_server(memory)) as c:
        yield c


async def episode(c: Client, *texts: str, times: list[str] | None = None, title: str = "chat") -> str:
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": t,
            **({"created_at": times[i]} if times else {}),
        }
        for i, t in enumerate(texts)
    ]
    result = await call(c, "memory_ingest", "conversation", {"title": title, "messages": messages})
    return str(result["source_id"])


async def extract(
    c: Client,
    episode_id: str,
    *,
    entities: list[dict[str, Any]] | None = None,
    facts: list[dict[str, Any]] | None = None,
    procedures: list[dict[str, Any]] | None = None,
    **gov: Any,
) -> dict[str, Any]:
    data = {
        "episode_id": episode_id,
        **GOV,
        **gov,
        "entities": entities or [],
        "facts": facts or [],
        "procedures": procedures or [],
    }
    return await call(c, "memory_remember", "extraction", data)
