"""The caller's numbers win: an explicit ``max_items`` is honoured, shortfalls are stated, and a
cursor continues the same ranked list (pages concatenate to one large page's list).

Driven through the MCP tools (the SDK's in-process client) on both backends.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call
from tests.query.search_keys import ranked_keys

WORDS = [
    "deploy",
    "pipeline",
    "database",
    "migration",
    "release",
    "payment",
    "service",
    "login",
    "failure",
    "cache",
    "eviction",
    "search",
    "latency",
    "embedding",
    "model",
    "backup",
    "restore",
    "schema",
    "feature",
    "flag",
    "memory",
    "leak",
    "retry",
    "storm",
    "gateway",
    "worker",
]


def _turn(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 90))).capitalize() + "."


@pytest.fixture
def filled(make_settings: Any, namespace: str) -> Any:
    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    rng = random.Random(11)
    for n in range(4):
        msgs = [{"role": "user", "content": _turn(rng), "name": ["ana", "bo"][i % 2]} for i in range(30)]
        mem.ingest("conversation", {"title": f"incident review {n}", "messages": msgs})
    yield mem
    mem.close()


QUERY = {"query": "retry storm gateway worker latency"}


@pytest.mark.anyio
@pytest.mark.parametrize("unit", ["segment", "object"])
async def test_an_explicit_max_items_returns_that_many(filled: Memory, unit: str) -> None:
    async with Client(build_server(filled)) as c:
        want = {"segment": (10, 25), "object": (3,)}[unit]
        for n in want:
            out = await call(c, "memory_query", "search", QUERY, {"result_unit": unit, "max_items": n})
            assert out["count"] == n == len(ranked_keys(out)), (n, out.get("shortfall_reason"))
            assert "requested" not in out and "shortfall_reason" not in out
        # More than exist: the answer says so.
        out = await call(c, "memory_query", "search", QUERY, {"result_unit": "object", "max_items": 9})
        assert out["count"] == 4
        assert (out["requested"], out["returned"], out["shortfall_reason"]) == (9, 4, "no_more_results")


@pytest.mark.anyio
async def test_a_default_page_cut_by_the_budget_says_so(filled: Memory) -> None:
    async with Client(build_server(filled)) as c:
        out = await call(c, "memory_query", "search", QUERY, {"result_unit": "segment", "detail": "full"})
        assert out["count"] == 10
        # Full detail of long turns does not fit; a default compact page might not either.
        out = await call(c, "memory_query", "search", QUERY, {"result_unit": "segment"})
        if out["count"] < 10:
            assert (out["requested"], out["returned"], out["shortfall_reason"]) == (
                10,
                out["count"],
                "response_budget",
            )
            assert out["next_cursor"]


@pytest.mark.anyio
@pytest.mark.parametrize("unit", ["segment", "object"])
async def test_pages_concatenate_to_one_large_page(filled: Memory, unit: str) -> None:
    async with Client(build_server(filled)) as c:
        size = 4 if unit == "segment" else 1
        large = await call(c, "memory_query", "search", QUERY, {"result_unit": unit, "max_items": size * 3})
        got: list[Any] = []
        opts: dict[str, Any] = {"result_unit": unit, "max_items": size}
        for _ in range(3):
            page = await call(c, "memory_query", "search", QUERY, opts)
            got += ranked_keys(page)
            opts = {"result_unit": unit, "max_items": size, "cursor": page["next_cursor"]}
        assert got == ranked_keys(large) and len(got) == size * 3
