"""Retrieval outside chats (issue 22): a section's own terms dominate its lexical score, filters
inferred from query words only boost, and exact tokens kept as an episode's specific facts are
found by object search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call

pytestmark = pytest.mark.anyio

SECTIONS = [
    "We use SQLite in WAL mode",
    "The cat is named Tom",
    "Paris trip in May",
    "SQLite checkpoint every 1000 pages",
]


@pytest.fixture(params=["none", "static"])
def any_memory(request: pytest.FixtureRequest, make_settings: Any, namespace: str) -> Any:
    mem = Memory(make_settings(embedder=request.param), namespace=namespace)
    try:
        yield mem
    finally:
        mem.close()


async def test_a_sections_own_terms_outrank_its_neighbours(any_memory: Memory, tmp_path: Path) -> None:
    doc = tmp_path / "notes.md"
    doc.write_text("".join(f"## Note {i}\n\n{t}\n\n" for i, t in enumerate(SECTIONS)), encoding="utf-8")
    async with Client(build_server(any_memory)) as c:
        out = await call(c, "memory_ingest", "markdown", {"path": str(doc)})
        assert out["segment_count"] == 4
        found = await call(
            c,
            "memory_query",
            "search",
            {"query": "SQLite mode"},
            {"result_unit": "segment", "detail": "full", "max_items": 4},
        )
        top = " ".join(i["excerpt"] for i in found["items"][:2])
        assert SECTIONS[0] in top and SECTIONS[3] in top, [i["excerpt"] for i in found["items"]]


async def test_exact_tokens_find_their_episode_among_similar_ones(any_memory: Memory) -> None:
    async with Client(build_server(any_memory)) as c:
        chats = {}
        for i in range(12):
            text = (
                f"Ticket OPS-{1700 + i}: the worker on 10.0.{i % 3}.{17 + i} crashed after the upgrade to "
                f"version 2.{i % 4}.{11 + i}; the trace is in /var/log/svc-{i}/worker.log."
            )
            out = await call(
                c,
                "memory_ingest",
                "conversation",
                {"title": "ops", "messages": [{"role": "user", "content": text}]},
            )
            chats[i] = out["source_id"]
        for i in (0, 5, 11):
            for token in (
                f"10.0.{i % 3}.{17 + i}",
                f"2.{i % 4}.{11 + i}",
                f"OPS-{1700 + i}",
                f"/var/log/svc-{i}/worker.log",
            ):
                found = await call(
                    c, "memory_query", "search", {"query": token}, {"max_items": 5, "detail": "full"}
                )
                assert found["items"][0]["id"] == chats[i], (token, [x["title"] for x in found["items"]])
                assert "exact" in found["items"][0]["retrieval_sources"]


async def test_inferred_filters_boost_and_say_so(any_memory: Memory, tmp_path: Path) -> None:
    doc = tmp_path / "lifecycle.md"
    doc.write_text(
        "# Lifecycle\n\nSuperseded facts are kept with valid_until set; nothing is deleted.\n",
        encoding="utf-8",
    )
    async with Client(build_server(any_memory)) as c:
        source = (await call(c, "memory_ingest", "markdown", {"path": str(doc)}))["source_id"]
        await call(
            c,
            "memory_remember",
            "knowledge",
            {
                "kind": "fact",
                "title": "The cat is named Tom",
                "summary": "A fact about a cat.",
                "reason": "test",
                "memory_source": "user_declared",
                "scope_refs": ["scope:project"],
            },
        )
        out = await call(c, "memory_query", "search", {"query": "how are superseded facts handled"})
        assert out["inferred_filters"]["object_types"] == ["knowledge"]
        assert "excludes nothing" in out["inferred_filters"]["effect"]
        assert source in [i["id"] for i in out["items"]]  # the document that answers it is not filtered out
