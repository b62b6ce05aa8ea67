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

GOOD = json.dumps(
    {
        "entities": [
            {"name": "Customer Portal", "type": "project", "aliases": ["portal"]},
            {"name": "Semantic Kernel", "type": "technology", "aliases": []},
        ],
        "facts": [
            {
                "subject": "Customer Portal",
                "predicate": "uses",
                "object": "Semantic Kernel",
                "segment_ids": ["seg-1"],
            }
        ],
        "procedures": [],
    }
)


@pytest.fixture
def llm() -> Iterator[StubLLM]:
    with stub_llm() as stub:
        yield stub


@pytest.fixture
def llm_memory(make_settings: Any, namespace: str, llm: StubLLM) -> Iterator[Memory]:
    settings = make_settings(
        llm_base_url=llm.url,
        llm_model="stub-model",
        llm_api_key="sk-test",
        llm_max_retries=2,
        llm_backoff_s=0.01,
    )
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
    out = await call(
        c,
        "memory_ingest",
        "conversation",
        {
            "title": "portal chat",
            "messages": [
                {
                    "role": "user",
                    "content": "Customer Portal uses Semantic Kernel.",
                    "created_at": "2026-03-01T00:00:00Z",
                }
            ],
        },
    )
    return str(out["source_id"])


async def test_extract_drains_the_queue_through_the_model(llm: StubLLM, llm_memory: Memory) -> None:
    llm.script = [Reply(500, "overloaded"), Reply(content="```json\n" + GOOD + "\n```")]
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        dry = await call(c, "memory_maintain", "extract", {})
        assert dry["status"] == "dry_run" and dry["episodes"] == [ep] and llm.requests == []
        done = await call(c, "memory_maintain", "extract", {}, {"apply": True})
        assert (
            done["counts"] == {"done": 1, "partial": 0, "retrying": 0, "failed": 0}
            and done["queue"]["done"] == 1
        )
        sent = llm.requests[-1]
        assert sent["auth"] == "Bearer sk-test" and sent["body"]["model"] == "stub-model"
        assert sent["body"]["response_format"]["type"] == "json_schema" and sent["body"]["stream"] is True
        assert sent["body"]["max_tokens"] == 256 + 32  # sized to a one-turn window
        assert (
            "seg-1" in sent["body"]["messages"][1]["content"] and len(llm.requests) == 2
        )  # one retry after the 500
        facts = await call(c, "memory_query", "facts", {"subject": "portal"})
        assert facts["items"][0]["object"]["name"] == "Semantic Kernel"
        assert facts["items"][0]["evidence_status"] == "extracted"
        trace = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]
        assert (
            trace["extractor"].startswith("llm:stub-model@127.0.0.1")
            and trace["prompt_version"] == prompt.VERSION
        )
        assert (await call(c, "memory_maintain", "extract", {}, {"apply": True}))["episodes"] == []


async def test_output_that_fails_the_schema_is_traced_and_writes_nothing(
    llm: StubLLM, llm_memory: Memory
) -> None:
    bad = json.dumps({"entities": [{"name": "X", "type": "galaxy"}], "facts": [], "procedures": []})
    llm.default = Reply(content=bad)
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        before = await call(c, "memory_maintain", "structure", {})
        for attempt in (1, 2, 3):
            out = await _failed_extract(c, ep)
            run = out["runs"][0]
            assert run["error"]["code"] == "memory_llm_output_invalid"
            assert run["status"] == ("failed" if attempt == 3 else "retrying") and run["outcome"] == "failed"
        assert len(llm.requests) == 6  # each run: the answer and one repair request quoting what was wrong
        repair = llm.requests[1]["body"]["messages"]
        assert repair[2] == {"role": "assistant", "content": bad} and "galaxy" in repair[3]["content"]
        trace = await call(c, "memory_query", "trace", {"id": ep})
        assert trace["job"] == {"status": "failed", "attempts": 3, "error": trace["job"]["error"]}
        error = trace["trace"]["errors"][0]
        assert "no valid item" in error["message"] and "galaxy" in error["details"]["raw"]
        assert "entities[0]" in error["details"]["dropped"][0]["item"]
        after = await call(c, "memory_maintain", "structure", {})
        assert after["counts"]["objects"] == before["counts"]["objects"]


async def test_citing_missing_segments_is_grounded_by_the_rule(llm: StubLLM, llm_memory: Memory) -> None:
    """A model's citation of a segment the episode lacks is removed; the fact is grounded to the
    segment that shares its names and kept out of the trusted tiers (graph/grounding.py)."""
    wrong = json.loads(GOOD)
    wrong["facts"][0]["segment_ids"] = ["seg-42"]
    llm.default = Reply(content=json.dumps(wrong))
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        out = await call(c, "memory_maintain", "extract", {"episode_ids": [ep]}, {"apply": True})
        assert out["runs"][0]["outcome"] == "done"
        facts = await call(c, "memory_query", "facts", {"subject": "Customer Portal"}, {"detail": "full"})
        fact = facts["items"][0]
        assert [r["segment_id"] for r in fact["evidence_refs"]] == ["seg-1"]
        assert fact["evidence_status"] == "inferred" and fact["status"] == "candidate"
        trace = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]
        rule = trace["window_runs"][0]["grounding"][0]
        assert rule["rule"] == "cited_nothing" and rule["unknown_segments_removed"] == ["seg-42"]


async def test_servers_without_json_schema_get_json_object(llm: StubLLM, llm_memory: Memory) -> None:
    llm.script = [Reply(400, "response_format json_schema is not supported"), Reply(content=GOOD)]
    async with Client(build_server(llm_memory)) as c:
        await _ingest(c)
        out = await call(c, "memory_maintain", "extract", {}, {"apply": True})
        assert out["counts"]["done"] == 1
        assert llm.requests[1]["body"]["response_format"] == {"type": "json_object"}


async def test_unreachable_model_is_a_typed_failure(llm: StubLLM, llm_memory: Memory) -> None:
    llm.default = Reply(503, "down")
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        out = await _failed_extract(c, ep)
        assert (
            out["runs"][0]["error"]["code"] == "memory_llm_error" and len(llm.requests) == 3
        )  # 1 + 2 retries
        assert out["queue"]["retrying"] == 1 and out["counts"]["retrying"] == 1


async def test_no_model_configured_says_how_to_configure_one(client: Client) -> None:
    await _ingest(client)
    with pytest.raises(ToolFailed) as info:
        await call(client, "memory_maintain", "extract", {}, {"apply": True})
    assert info.value.code == "memory_not_available" and "MEMORY_SUBSTRATE_LLM_BASE_URL" in info.value.text


async def test_sampling_uses_the_clients_model(memory: Memory) -> None:
    seen: list[str] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.append(params.system_prompt or "")
        return types.CreateMessageResult(
            role="assistant", model="client-model", content=types.TextContent(type="text", text=GOOD)
        )

    # Sampling is a server-initiated request: it exists on handshake-era connections (mode="legacy").
    async with Client(build_server(memory), sampling_callback=sample, mode="legacy") as c:
        ep = await _ingest(c)
        out = await call(c, "memory_maintain", "extract", {}, {"apply": True, "extractor": "sampling"})
        assert out["counts"]["done"] == 1 and out["extractor"].startswith("sampling:")
        assert "canonical predicates" in seen[0]
        assert (await call(c, "memory_query", "trace", {"id": ep}))["trace"]["extractor"].startswith(
            "sampling:"
        )
    async with Client(build_server(memory), mode="legacy") as plain:
        with pytest.raises(ToolFailed) as info:
            await call(plain, "memory_maintain", "extract", {}, {"apply": True, "extractor": "sampling"})
        assert info.value.code == "memory_not_available"


def test_prompt_snapshot() -> None:
    lines = [
        prompt.EpisodeLine("seg-1", "alice", "2026-03-01T00:00:00Z", "Customer Portal uses Semantic Kernel.")
    ]
    rendered = "\n---\n".join(m["role"] + ": " + m["content"] for m in prompt.messages("portal chat", lines))
    snapshot = Path(__file__).parent / "data" / "extraction_prompt.txt"
    assert rendered == snapshot.read_text(), (
        "the extraction prompt changed: bump prompt.VERSION and refresh the snapshot"
    )


async def test_an_answer_cut_at_the_token_cap_is_named_truncated(llm: StubLLM, llm_memory: Memory) -> None:
    loop = '{"entities": [{"name": "Customer Portal", "type": "project", "summary": "' + "It uses it. " * 400
    llm.default = Reply(content=loop, finish_reason="length")
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        out = await _failed_extract(c, ep)
        run = out["runs"][0]
        assert run["outcome"] == "failed" and run["error"]["code"] == "memory_llm_output_truncated"
        assert (
            "max_tokens=288" in run["error"]["message"] and len(llm.requests) == 1
        )  # one turn: too short to halve
        window = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]["window_runs"][0]
        assert window["truncated"] and window["finish_reason"] == "length"
        assert "truncated at the token cap" in window["dropped"][0]["reason"]


async def test_names_copied_from_the_prompt_are_dropped(llm: StubLLM, llm_memory: Memory) -> None:
    copied = json.loads(GOOD)
    copied["facts"].append(
        {
            "subject": "Customer Portal",
            "predicate": "uses",
            "value": "<literal text or number>",
            "segment_ids": ["seg-1"],
        }
    )
    copied["facts"].append(
        {
            "subject": "Customer Portal",
            "predicate": "uses",
            "object": "snake_case verb",
            "segment_ids": ["seg-1"],
        }
    )
    llm.default = Reply(content=json.dumps(copied))
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        out = await call(c, "memory_maintain", "extract", {"episode_ids": [ep]}, {"apply": True})
        assert out["runs"][0]["outcome"] == "done" and out["runs"][0]["facts"] == 1
        trace = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]
        leaks = [d for d in trace["dropped"] if "from the prompt, not the episode" in d["reason"]]
        assert len(leaks) == 2
        facts = await call(c, "memory_query", "facts", {"subject": "Customer Portal"})
        assert [f["object"]["name"] for f in facts["items"]] == ["Semantic Kernel"]


async def test_a_crashing_validator_is_a_dropped_item_not_a_dead_run(
    llm: StubLLM, llm_memory: Memory
) -> None:
    both = json.loads(GOOD)
    both["facts"][0]["value"] = "also a value"  # object and value: the model validator raises ValueError
    llm.default = Reply(content=json.dumps(both))
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        out = await call(c, "memory_maintain", "extract", {"episode_ids": [ep]}, {"apply": True})
        run = out["runs"][0]
        assert run["outcome"] == "done" and run["entities"] == 2 and run["facts"] == 0 and run["dropped"] == 1
        trace = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]
        assert "exactly one of object" in trace["dropped"][0]["reason"]


async def test_a_running_job_is_left_alone_until_it_is_stale(llm: StubLLM, llm_memory: Memory) -> None:
    from memory_substrate.graph import jobs

    llm.default = Reply(content=GOOD)
    async with Client(build_server(llm_memory)) as c:
        ep = await _ingest(c)
        with llm_memory.runtime.write("test", "extract", "a run in another process") as (session, _patch):
            jobs.start(session, ep, extractor="elsewhere")
        assert (await call(c, "memory_maintain", "extract", {}))["episodes"] == []  # someone is at work on it
        overview = await call(c, "memory_maintain", "report", {})
        assert overview["knowledge_graph"]["extraction_queue"] == {"running": 1}
        with llm_memory.runtime.write("test", "extract", "that process died long ago") as (session, _patch):
            job = session.get_job(jobs.EXTRACT, ep)
            assert job is not None
            job.updated_at = "2020-01-01T00:00:00.000000+00:00"
            session.put_job(job)
        assert (await call(c, "memory_maintain", "extract", {}))["episodes"] == [ep]


async def test_citing_every_segment_is_grounded_to_the_segments_that_name_the_fact(
    llm: StubLLM, llm_memory: Memory
) -> None:
    turns = [
        "Morning all.",
        "Customer Portal now uses Semantic Kernel for its agents.",
        "Lunch at noon?",
        "Sure.",
        "The portal team likes it.",
        "Weather is nice.",
    ]
    enumerating = json.loads(GOOD)
    enumerating["facts"][0]["segment_ids"] = [f"seg-{i}" for i in range(1, 7)]  # everything: proves nothing
    enumerating["facts"].append(
        {
            "subject": "Customer Portal",
            "predicate": "hosts",
            "object": "Semantic Kernel",
            "segment_ids": ["seg-3"],
        }
    )  # a segment that shares nothing with it
    enumerating["facts"].append(
        {
            "subject": "Customer Portal",
            "predicate": "owned_by",
            "value": "Atlantis Guild",
            "segment_ids": ["seg-2"],
        }
    )  # nothing in the episode names it
    llm.default = Reply(content=json.dumps(enumerating))
    async with Client(build_server(llm_memory)) as c:
        ep = (
            await call(
                c,
                "memory_ingest",
                "conversation",
                {"title": "portal chat", "messages": [{"role": "user", "content": t} for t in turns]},
            )
        )["source_id"]
        out = await call(c, "memory_maintain", "extract", {"episode_ids": [ep]}, {"apply": True})
        assert out["runs"][0]["facts"] == 2
        facts = await call(c, "memory_query", "facts", {"subject": "Customer Portal"}, {"detail": "full"})
        by_pred = {f["predicate"]: f for f in facts["items"]}
        assert set(by_pred) == {"uses", "hosts"}
        for fact in by_pred.values():  # both grounded by the rule to the one segment naming Semantic Kernel
            assert [r["segment_id"] for r in fact["evidence_refs"]] == ["seg-2"]
            assert fact["evidence_status"] == "inferred" and fact["status"] == "candidate"
        trace = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]
        rules = {g["item"]: g["rule"] for g in trace["window_runs"][0]["grounding"]}
        assert rules == {
            "fact Customer Portal uses Semantic Kernel": "cited_everything",
            "fact Customer Portal hosts Semantic Kernel": "cited_nothing_related",
        }
        assert {
            "item": "fact Customer Portal owned_by Atlantis Guild",
            "reason": "no segment of the window shares a name with it",
        } in trace["dropped"]
