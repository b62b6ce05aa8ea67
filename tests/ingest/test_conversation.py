"""memory_ingest conversation: one source per call, one segment per message, metadata kept."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.errors import UnsupportedModeError, ValidationError
from memory_substrate.mcp.server import build_server
from tests.helpers import call

pytestmark = pytest.mark.anyio

SPEC_EXAMPLE: dict[str, Any] = {
    "title": "Memory design discussion",
    "messages": [
        {
            "role": "user",
            "content": "Remember that project X uses Kuzu.",
            "name": "optional-speaker",
            "created_at": "2026-04-28T00:00:00+00:00",
            "metadata": {},
        }
    ],
    "origin": {"host": "codex", "project": "memory-substrate"},
}


async def test_spec_example_creates_source_with_message_segments(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        out = await call(c, "memory_ingest", "conversation", SPEC_EXAMPLE)
        assert out["status"] == "completed" and out["segment_count"] == 1
        page = await call(c, "memory_query", "page", {"id": out["source_id"]}, {"include_segments": True})
        obj = page["object"]
        assert obj["kind"] == "conversation"
        seg = obj["segments"][0]
        assert seg["segment_id"] == "seg-1"
        assert seg["locator"] == {"kind": "message", "index": 0}
        assert seg["name"] == "optional-speaker" and seg["role"] == "user"
        assert seg["created_at"].startswith("2026-04-28T00:00:00")
        adapter = obj["metadata"]["adapter"]
        assert adapter["mode"] == "conversation" and "conversation" in adapter["supported_modes"]
        assert set(adapter) >= {
            "name",
            "version",
            "declared_transformations",
            "default_privacy_class",
            "origin_classification",
        }
        fresh = obj["metadata"]["freshness"]
        assert fresh["is_current"] is True and len(fresh["fingerprint"]) == 64
        suggestions = out["memory_suggestions"]
        assert suggestions["agent_extraction"]["protocol"] == "agent_extraction.v1"
        assert suggestions["agent_extraction"]["source_id"] == out["source_id"]


async def test_order_metadata_and_origin_kept_and_messages_searchable(memory: Memory) -> None:
    texts = [
        "first we chose PostgreSQL",
        "then we benchmarked pgvector recall",
        "finally the HNSW index shipped",
    ]
    data = {
        "title": "db chat",
        "messages": [
            {"role": r, "content": t, "name": n, "metadata": {"i": i}}
            for i, (r, t, n) in enumerate(
                zip(["user", "assistant", "user"], texts, ["ann", "bot", "ann"], strict=True)
            )
        ],
        "origin": {"host": "claude-code", "project": "p1"},
    }
    out = memory.ingest("conversation", data)
    full = memory.query("page", {"id": out["source_id"]}, {"detail": "full"})
    segs = full["segments"]
    assert [s["locator"]["index"] for s in segs] == [0, 1, 2]
    assert [s["text"] for s in segs] == texts
    assert full["object"]["payload"]["origin"] == {"host": "claude-code", "project": "p1"}
    found = memory.query("search", {"query": "pgvector recall"}, {"result_unit": "segment", "detail": "full"})
    assert found["items"][0]["source_id"] == out["source_id"]
    assert found["items"][0]["locator"] == {"kind": "message", "index": 1}
    objects = memory.query("search", {"query": "HNSW"}, {"detail": "full"})
    assert objects["items"][0]["id"] == out["source_id"]
    assert objects["items"][0]["matched_chunks"][0]["locator"] == {"kind": "message", "index": 2}


def test_a_different_conversation_under_the_same_title_is_its_own_source(memory: Memory) -> None:
    a = memory.ingest("conversation", SPEC_EXAMPLE)
    other = {
        **SPEC_EXAMPLE,
        "messages": [{**SPEC_EXAMPLE["messages"][0], "content": "Project Y uses LanceDB."}],
    }
    b = memory.ingest("conversation", other)
    assert a["source_id"] != b["source_id"] and b["status"] == "completed"


def test_bad_conversation_input_writes_nothing(memory: Memory) -> None:
    with pytest.raises(ValidationError, match="messages"):
        memory.ingest("conversation", {"title": "x", "messages": []})
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        memory.ingest(
            "conversation", {"title": "x", "messages": [{"role": "user", "content": "hi", "mood": "ok"}]}
        )
    with pytest.raises(UnsupportedModeError):
        memory.ingest("fax", {})
    assert memory.status()["counts"]["objects"] == 0
