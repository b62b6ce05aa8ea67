"""Extraction by a model: an OpenAI-compatible endpoint (a stub on loopback) and MCP sampling."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, types

from memory_substrate import Memory
from memory_substrate.graph import extraction_prompt as prompt
from memory_substrate.mcp.server import build_server
from tests.graph.stub_llm import Reply, StubLLM, stub_llm
from tests.helpers import ToolFailed, call, tool_error

pytestmark = pytest.mark.anyio

GOOD = json.dumps({
    "entities": [{"name": "Customer Portal", "type": "project", "aliases": ["portal"]},
                 {"name": "Semantic Kernel", "type": "technology", "aliases": []}],
    "facts": [{"subject": "Customer Portal", "predicate": "uses", "object": "Semantic Kernel", "segment_ids": ["seg-1"]}],
    "procedures": [],
})


@pytest.fixture
def llm() -> Iterator[StubLLM]:
    with stub_llm() as stub:
        yield stub


@pytest.fixture
def llm_memory(make_settings: Any, namespace: str, llm: StubLLM) -> Iterator[Memory]:
    settings = make_settings(llm_base_url=llm.url, llm_model="stub-model", llm_api_key="sk-test", llm_max_retries=2)
    mem = Memory(settings, namespace=namespace)
    try:
        yield mem
    finally:
        mem.close()


async def _failed_extract(c: Client, episode_id: str) -> dict[str, Any]:
    """A run that extracted nothing: an isError result, its code the first failure's, the whole
    result (status first) in its details."""
    with pytest.raises(ToolFailed) as info:
        await call(c, "memory_maintain", "extract", {"episode_ids": [episode_id]}, {"apply": True})
    error = tool_error(info.value.text)
    out: dict[str, Any] = error["details"]
    assert next(iter(out)) == "status" and out["status"] == "failed"
    assert error["code"] == out["error"]["code"] == out["runs"][0]["error"]["code"]
    assert "1 of 1 episodes" in error["message"]
    return out


async def _ingest(c: Client) -> str:
    out = await call(c, "memory_ingest", "conversation", {"title": "portal chat", "messages": [
        {"role": "user", "content": "Customer Portal uses Semantic Kernel.", "created_at": "2026-03-01T00:00:00Z"}]})
    return str(out["source_id"])


async def test_extract_drains_the_queue_through_the_model(llm, llm_memory):
    llm.script = [Reply(500, "overloaded"), Reply(content="```json\n" + GOOD + "\n```")]
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        dry = await call(c, "memory_maintain", "extract", {})
        assert dry["status"] == "dry_run" and dry["episodes"] == [ep] and llm.requests == []
        done = await call(c, "memory_maintain", "extract", {}, {"apply": True})
        assert done["counts"] == {"done": 1, "failed": 0, "retrying": 0} and done["queue"]["done"] == 1
        assert next(iter(done)) == "status" and done["status"] == "applied"
        sent = llm.requests[-1]
        assert sent["auth"] == "Bearer sk-test" and sent["body"]["model"] == "stub-model"
        assert sent["body"]["response_format"]["type"] == "json_schema"
        assert "seg-1" in sent["body"]["messages"][1]["content"] and len(llm.requests) == 2  # one retry after the 500
        facts = await call(c, "memory_query", "facts", {"subject": "portal"})
        assert facts["items"][0]["object"]["name"] == "Semantic Kernel"
        assert facts["items"][0]["evidence_status"] == "extracted"
        trace = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]
        assert trace["extractor"].startswith("llm:stub-model@127.0.0.1") and trace["prompt_version"] == prompt.VERSION
        assert (await call(c, "memory_maintain", "extract", {}, {"apply": True}))["episodes"] == []


async def test_output_that_fails_the_schema_is_traced_and_writes_nothing(llm, llm_memory):
    bad = json.dumps({"entities": [{"name": "X", "type": "galaxy"}], "facts": [], "procedures": []})
    llm.default = Reply(content=bad)
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        before = await call(c, "memory_maintain", "structure", {})
        for attempt in (1, 2, 3):
            out = await _failed_extract(c, ep)
            run = out["runs"][0]
            assert run["error"]["code"] == "memory_llm_output_invalid"
            assert run["status"] == ("failed" if attempt == 3 else "pending")
            # The counts say what the queue says: retried until the last attempt, then failed.
            assert out["counts"] == ({"done": 0, "failed": 1, "retrying": 0} if attempt == 3
                                     else {"done": 0, "failed": 0, "retrying": 1})
            assert out["queue"]["failed"] == out["counts"]["failed"]
        trace = await call(c, "memory_query", "trace", {"id": ep})
        assert trace["job"] == {"status": "failed", "attempts": 3, "error": trace["job"]["error"]}
        assert "schema" in trace["trace"]["errors"][0]["message"] and "galaxy" in trace["trace"]["errors"][0]["details"]["raw"]
        after = await call(c, "memory_maintain", "structure", {})
        assert after["counts"]["objects"] == before["counts"]["objects"]


async def test_citing_missing_segments_fails_cleanly(llm, llm_memory):
    wrong = json.loads(GOOD)
    wrong["facts"][0]["segment_ids"] = ["seg-42"]
    llm.default = Reply(content=json.dumps(wrong))
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        out = await _failed_extract(c, ep)
        assert out["runs"][0]["error"]["code"] == "memory_evidence_error"
        assert (await call(c, "memory_query", "entities", {"name": "Customer Portal"}))["count"] == 0


async def test_servers_without_json_schema_get_json_object(llm, llm_memory):
    llm.script = [Reply(400, "response_format json_schema is not supported"), Reply(content=GOOD)]
    async with Client(build_server(llm_memory)) as c:
        await _ingest(c)
        out = await call(c, "memory_maintain", "extract", {}, {"apply": True})
        assert out["counts"]["done"] == 1
        assert llm.requests[1]["body"]["response_format"] == {"type": "json_object"}


async def test_unreachable_model_is_a_typed_failure(llm, llm_memory):
    llm.default = Reply(503, "down")
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        out = await _failed_extract(c, ep)
        assert out["runs"][0]["error"]["code"] == "memory_llm_error" and len(llm.requests) == 3  # 1 + 2 retries
        assert out["queue"]["pending"] == 1 and out["counts"]["retrying"] == 1


async def test_no_model_configured_says_how_to_configure_one(client):
    await _ingest(client)
    with pytest.raises(ToolFailed) as info:
        await call(client, "memory_maintain", "extract", {}, {"apply": True})
    assert info.value.code == "memory_not_available" and "MEMORY_SUBSTRATE_LLM_BASE_URL" in info.value.text


async def test_sampling_uses_the_clients_model(memory):
    seen: list[str] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.append(params.system_prompt or "")
        return types.CreateMessageResult(role="assistant", model="client-model",
                                         content=types.TextContent(type="text", text=GOOD))

    # Sampling is a server-initiated request: it exists on handshake-era connections (mode="legacy").
    async with Client(build_server(memory), sampling_callback=sample, mode="legacy") as c:
        ep = await _ingest(c)
        out = await call(c, "memory_maintain", "extract", {}, {"apply": True, "extractor": "sampling"})
        assert out["counts"]["done"] == 1 and out["extractor"].startswith("sampling:")
        assert "canonical predicates" in seen[0]
        assert (await call(c, "memory_query", "trace", {"id": ep}))["trace"]["extractor"].startswith("sampling:")
    async with Client(build_server(memory), mode="legacy") as plain:
        with pytest.raises(ToolFailed) as info:
            await call(plain, "memory_maintain", "extract", {}, {"apply": True, "extractor": "sampling"})
        assert info.value.code == "memory_not_available"


def test_prompt_snapshot() -> None:
    lines = [prompt.EpisodeLine("seg-1", "alice", "2026-03-01T00:00:00Z", "Customer Portal uses Semantic Kernel.")]
    rendered = "\n---\n".join(m["role"] + ": " + m["content"] for m in prompt.messages("portal chat", lines))
    snapshot = Path(__file__).parent / "data" / "extraction_prompt.txt"
    assert rendered == snapshot.read_text(), "the extraction prompt changed: bump prompt.VERSION and refresh the snapshot"


async def test_a_run_where_some_episodes_fail_is_partial(llm, llm_memory):
    def answer(body: dict[str, Any]) -> Reply:
        good = "Customer Portal" in body["messages"][1]["content"]
        return Reply(content=GOOD if good else "not json at all")

    llm.respond = answer
    async with Client(build_server(llm_memory)) as c:
        ok = await _ingest(c)
        bad = (await call(c, "memory_ingest", "conversation", {"title": "other", "messages": [
            {"role": "user", "content": "Nothing to see here."}]}))["source_id"]
        out = await call(c, "memory_maintain", "extract", {"episode_ids": [ok, bad]}, {"apply": True})
        assert next(iter(out)) == "status" and out["status"] == "partial"
        assert out["error"]["code"] == "memory_llm_output_invalid" and out["error"]["details"]["episode_id"] == bad
        assert out["counts"] == {"done": 1, "failed": 0, "retrying": 1} and out["queue"]["pending"] == 1
