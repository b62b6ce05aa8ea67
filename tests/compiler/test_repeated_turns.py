"""A turn captured twice (a re-import, a pasted message) takes one place in the package: the
better-ranked copy is shown and the other is left out, naming the turn it repeats."""

from __future__ import annotations

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call, conversation

pytestmark = pytest.mark.anyio

SAID = "The staging deploy fails because the bucket policy denies PutObject for the deploy role."


async def test_a_turn_said_word_for_word_twice_enters_once(default_memory: Memory) -> None:
    async with Client(build_server(default_memory)) as c:
        for n in range(3):
            await call(
                c,
                "memory_ingest",
                "conversation",
                conversation(
                    ["Why does the staging deploy fail?", SAID, f"Noted, copy {n}."], title=f"deploy copy {n}"
                ),
            )
        await call(
            c,
            "memory_ingest",
            "conversation",
            conversation(["Why does the staging deploy fail?", SAID.lower()], title="same words, other case"),
        )
        out = await call(
            c,
            "memory_query",
            "context",
            {"task": "Why does the staging deploy fail?"},
            {"budget_tokens": 1500, "format": "json"},
        )
        # The three copies enter once (the full part or the index, never both); the turn written
        # otherwise is not a repeat.
        assert out["content"].count(SAID[:60]) == 1, out["content"]
        assert SAID.lower()[:60] in out["content"]
        trace = (await call(c, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
        repeats = [
            r for r in trace["candidates"]["rejected"] if str(r.get("reason", "")).startswith("repeats ")
        ]
        assert len(repeats) >= 2, trace["candidates"]["rejected_by_reason"]
        assert all("#seg-" in r["reason"] for r in repeats)
