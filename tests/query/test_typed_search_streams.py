"""A search whose object types leave sources out runs no segment stream: segment hits stand for
their sources, which the filter would drop after they had taken places in the fused list."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from memory_substrate.storage.sqlite.fulltext import SessionFullText
from memory_substrate.storage.sqlite.store import SQLiteSession
from tests.helpers import call, conversation

pytestmark = pytest.mark.anyio


@pytest.fixture
def static_memory(make_settings: Any, namespace: str, backend: str) -> Any:
    if backend != "sqlite":
        pytest.skip("the spy is on the SQLite session; the search path above it is shared")
    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    try:
        yield mem
    finally:
        mem.close()


async def test_a_search_without_sources_reads_no_segments(
    static_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = SessionFullText.search_segments_text

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append("segment text")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SessionFullText, "search_segments_text", spy)
    real_vectors = SQLiteSession.vector_search

    def vector_spy(self: Any, model: str, query: Any, *, owner_type: str, limit: int) -> Any:
        if owner_type == "segment":
            calls.append("segment vectors")
        return real_vectors(self, model, query, owner_type=owner_type, limit=limit)

    monkeypatch.setattr(SQLiteSession, "vector_search", vector_spy)
    fact = {
        "kind": "decision",
        "title": "Refund keys",
        "summary": "Refund idempotency keys come from the charge id.",
        "reason": "agreed",
        "memory_source": "user_declared",
        "scope_refs": ["scope:payments"],
    }
    async with Client(build_server(static_memory)) as c:
        await call(
            c,
            "memory_ingest",
            "conversation",
            conversation(["Why do refund keys collide?", "The charge id repeats."]),
        )
        await call(c, "memory_remember", "knowledge", fact)

        calls.clear()
        typed = await call(
            c,
            "memory_query",
            "search",
            {"query": "refund keys charge id"},
            {"filters": {"object_types": ["knowledge"]}, "detail": "full"},
        )
        assert [i["object_type"] for i in typed["items"]] == ["knowledge"]
        assert calls == []

        both = await call(c, "memory_query", "search", {"query": "refund keys charge id"}, {"detail": "full"})
        assert {"segment text", "segment vectors"} <= set(calls), (
            "an untyped search runs both segment streams"
        )
        kinds = {i["object_type"] for i in both["items"]}
        assert kinds == {"knowledge", "source"}
        assert any(i.get("matched_chunks") for i in both["items"] if i["object_type"] == "source")
