"""A long episode is extracted whole, in overlapping windows, against a stub model on loopback:
a 3,000-turn conversation with facts at turns 50 and 2,900 yields both. Both backends."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.graph import extraction_prompt as prompt
from memory_substrate.mcp.server import build_server
from tests.graph.stub_llm import Reply, StubLLM
from tests.graph.test_model_extraction import llm, llm_memory  # noqa: F401  (fixtures)
from tests.helpers import call

pytestmark = pytest.mark.anyio

FACTS = {50: ("Zephyr Ledger", "Falcon Cluster"), 2900: ("Orion Gateway", "Vega Store")}


def _turns(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        if i in FACTS:
            subject, obj = FACTS[i]
            text = f"For the record: {subject} runs on {obj} since the migration."
        else:
            text = f"Turn {i}: we talked about the weather and the lunch menu again, nothing durable here."
        out.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": text,
                "name": "alice" if i % 2 == 0 else "bob",
            }
        )
    return out


def _answer(body: dict[str, Any]) -> Reply:
    """A model that extracts exactly the 'X runs on Y' sentences of the window it is shown."""
    text = body["messages"][1]["content"]
    entities: dict[str, dict[str, Any]] = {}
    facts = []
    for seg, subject, obj in re.findall(
        r"^(seg-\d+) \w+: For the record: (.+?) runs on (.+?) since", text, re.M
    ):
        entities[subject] = {"name": subject, "type": "service", "aliases": []}
        entities[obj] = {"name": obj, "type": "technology", "aliases": []}
        facts.append({"subject": subject, "predicate": "runs_on", "object": obj, "segment_ids": [seg]})
    return Reply(content=json.dumps({"entities": list(entities.values()), "facts": facts, "procedures": []}))


async def test_a_3000_turn_episode_is_extracted_in_overlapping_windows(
    llm: StubLLM,  # noqa: F811
    llm_memory: Memory,  # noqa: F811
) -> None:
    llm.respond = _answer
    async with Client(build_server(llm_memory)) as c:
        ep = await call(
            c, "memory_ingest", "conversation", {"title": "a very long chat", "messages": _turns(3000)}
        )
        done = await call(
            c, "memory_maintain", "extract", {"episode_ids": [ep["source_id"]]}, {"apply": True}
        )
        assert done["counts"] == {"done": 1, "partial": 0, "retrying": 0, "failed": 0}, done
        windows = done["runs"][0]["windows"]
        assert windows == len(llm.requests) and windows >= 5, windows
        prompts = [r["body"]["messages"][1]["content"] for r in llm.requests]
        assert all(len(p) <= prompt.MAX_EPISODE_CHARS for p in prompts)
        assert "seg-3000 " in prompts[-1] and "seg-1 " in prompts[0]  # the whole episode was read
        first, second = (set(re.findall(r"^(seg-\d+) ", p, re.M)) for p in prompts[:2])
        assert len(first & second) == prompt.OVERLAP_TURNS  # consecutive windows overlap
        for subject, obj in FACTS.values():
            found = await call(c, "memory_query", "facts", {"subject": subject})
            assert [f["object"]["name"] for f in found["items"]] == [obj], found
        trace = (await call(c, "memory_query", "trace", {"id": ep["source_id"]}))["trace"]
        assert trace["windowing"]["windows"] == windows and trace["windowing"]["turns"] == 3000
        assert (
            trace["windowing"]["overlap_turns"] == prompt.OVERLAP_TURNS
            and trace["windowing"]["clipped_segments"] == []
        )
        assert trace["facts"]["extracted"] == 2 and len(trace["facts"]["created"]) == 2


async def test_the_entity_limit_holds_per_window_of_a_long_episode(llm: StubLLM, llm_memory: Memory) -> None:  # noqa: F811
    # 8 facts, 16 entities over the windows of one long episode: spec 004's 10 entities per
    # episode hold per window (what one request sees), so the episode is extracted whole.
    many = {t: (f"Ledger {t}", f"Cluster {t}") for t in (50, 60, 700, 710, 1400, 1410, 2100, 2900)}
    turns = _turns(3000)
    for t, (subject, obj) in many.items():
        turns[t]["content"] = f"For the record: {subject} runs on {obj} since the migration."
    llm.respond = _answer
    async with Client(build_server(llm_memory)) as c:
        ep = await call(c, "memory_ingest", "conversation", {"title": "a very long chat", "messages": turns})
        done = await call(
            c, "memory_maintain", "extract", {"episode_ids": [ep["source_id"]]}, {"apply": True}
        )
        assert done["counts"] == {"done": 1, "partial": 0, "retrying": 0, "failed": 0}, done
        for subject, obj in many.values():
            found = await call(c, "memory_query", "facts", {"subject": subject})
            assert [f["object"]["name"] for f in found["items"]] == [obj], found


async def test_a_grown_conversation_is_extracted_again_whole(llm: StubLLM, llm_memory: Memory) -> None:  # noqa: F811
    # The model re-reads the whole episode after it grows, so its answer replaces the episode's
    # entity list: 8 entities, then 10 of which 6 are new, is 10 (not 14) against the limit.
    def fact(i: int) -> str:
        return f"For the record: Ledger {i} runs on Cluster {i} since the migration."

    first = [{"role": "user", "name": "alice", "content": fact(i)} for i in range(4)]
    grown = first + [{"role": "user", "name": "alice", "content": fact(i)} for i in range(4, 7)]

    def answer(body: dict[str, Any]) -> Reply:
        text = body["messages"][1]["content"]
        seen = [int(i) for i in re.findall(r"Ledger (\d+) runs on", text)]
        keep = seen if len(seen) <= 4 else seen[2:]  # the second read names only 5 of its 7 facts
        entities = [
            e
            for i in keep
            for e in (
                {"name": f"Ledger {i}", "type": "service", "aliases": []},
                {"name": f"Cluster {i}", "type": "technology", "aliases": []},
            )
        ]
        facts = [
            {"subject": f"Ledger {i}", "predicate": "runs_on", "object": f"Cluster {i}", "segment_ids": []}
            for i in keep
        ]
        return Reply(content=json.dumps({"entities": entities, "facts": facts, "procedures": []}))

    llm.respond = answer
    async with Client(build_server(llm_memory)) as c:
        ep = await call(
            c, "memory_ingest", "conversation", {"title": "infra", "thread_id": "t-1", "messages": first}
        )
        done = await call(
            c, "memory_maintain", "extract", {"episode_ids": [ep["source_id"]]}, {"apply": True}
        )
        assert done["counts"] == {"done": 1, "partial": 0, "retrying": 0, "failed": 0}, done
        again = await call(
            c, "memory_ingest", "conversation", {"title": "infra", "thread_id": "t-1", "messages": grown}
        )
        assert again["source_id"] == ep["source_id"]
        done = await call(
            c, "memory_maintain", "extract", {"episode_ids": [ep["source_id"]]}, {"apply": True}
        )
        assert done["counts"] == {"done": 1, "partial": 0, "retrying": 0, "failed": 0}, done
        found = await call(c, "memory_query", "facts", {"subject": "Ledger 6"})
        assert [f["object"]["name"] for f in found["items"]] == ["Cluster 6"], found


async def test_a_failed_window_keeps_the_others_and_the_job_is_retried(
    llm: StubLLM,  # noqa: F811
    llm_memory: Memory,  # noqa: F811
) -> None:
    def answer(body: dict[str, Any]) -> Reply:
        if "seg-2900 " in body["messages"][1]["content"]:
            return Reply(503, "overloaded")  # the window with the second fact never answers
        return _answer(body)

    llm.respond = answer
    async with Client(build_server(llm_memory)) as c:
        ep = (
            await call(
                c, "memory_ingest", "conversation", {"title": "a very long chat", "messages": _turns(3000)}
            )
        )["source_id"]
        out = await call(c, "memory_maintain", "extract", {"episode_ids": [ep]}, {"apply": True})
        run = out["runs"][0]
        assert out["status"] == "partial" and run["outcome"] == "partial" and run["status"] == "retrying"
        assert run["error"]["code"] == "memory_llm_error" and run["error"]["window"] == run["windows"]
        kept = await call(c, "memory_query", "facts", {"subject": "Zephyr Ledger"})
        assert [f["object"]["name"] for f in kept["items"]] == ["Falcon Cluster"]
        assert (await call(c, "memory_query", "facts", {"subject": "Orion Gateway"}))["items"] == []
        report = await call(c, "memory_maintain", "report", {})
        assert report["knowledge_graph"]["extraction_queue"] == {"retrying": 1}
        assert report["knowledge_graph"]["extraction_failures"][0]["attempts"] == 1
