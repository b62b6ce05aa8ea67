"""Episode recall's two retrieval ideas (compiler/episodes.py), end to end through the MCP client
on both backends: turns near the best hits are ranked on their own (context expansion), and a turn
of an episode that holds several hits outranks an equally matching turn of an unrelated episode
(episode-level relevance)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.compiler import episodes
from memory_substrate.mcp.server import build_server
from tests.helpers import call, json_episodes

pytestmark = pytest.mark.anyio


def _chat(title: str, texts: list[str]) -> dict[str, Any]:
    return {"title": title, "messages": [
        {"role": "user" if i % 2 == 0 else "assistant", "name": ["dana", "eli"][i % 2], "content": t}
        for i, t in enumerate(texts)]}


def _turns(content: str) -> list[str]:
    body = json.loads(content)["memory_context"]
    return [line for _, _, lines in json_episodes(body) for line in lines]


async def test_a_reply_two_turns_after_the_hit_is_ranked_and_packed(memory: Memory) -> None:
    """The answer shares no word with the task and sits two turns after the turn that matches it:
    only context expansion (2 turns around the best hits) makes it a candidate."""
    async with Client(build_server(memory)) as c:
        await call(c, "memory_ingest", "conversation", _chat("planning", [
            "Morning! Coffee first.",
            "Where will the zephyr audit take place this quarter?",
            "Let me check the calendar.",
            "Room 4B on Thursday at ten.",
            "Great, thanks.",
            "See you there.",
        ]))
        task = "Where does the zephyr audit take place?"
        out = await call(c, "memory_query", "context", {"task": task, "format": "json"})
        assert any(t.endswith("Room 4B on Thursday at ten.") for t in _turns(out["content"]))
        trace = (await call(c, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
        ids = [s["id"] for s in trace["candidates"]["selected"]]
        assert any(i.endswith("#seg-4") for i in ids)

        # Without the expansion (one turn around the hits, the search default) it is not found.
        saved = episodes.CONFIG
        try:
            episodes.CONFIG = type(saved)(neighbour_candidates=1, neighbour_seeds=episodes.CONTEXT_SEEDS)
            out = await call(c, "memory_query", "context", {"task": task, "format": "json"})
        finally:
            episodes.CONFIG = saved
        assert not any(t.endswith("Room 4B on Thursday at ten.") for t in _turns(out["content"]))


async def test_a_turn_of_an_episode_with_several_hits_outranks_its_twin(memory: Memory) -> None:
    """The same sentence in two episodes, with the same neighbours: in the episode that holds
    other hits it gets the higher similarity (and relevance) in the trace."""
    filler = ["Sounds good to me.", "Sure thing.", "Okay then."]
    twin = "The zephyr budget looks fine."
    async with Client(build_server(memory)) as c:
        hot = (await call(c, "memory_ingest", "conversation", _chat("hot", [
            "The zephyr rollout starts Monday.", "Zephyr canaries are green.", "Zephyr docs are updated.",
            *filler, twin, "Okay then."])))["source_id"]
        cold = (await call(c, "memory_ingest", "conversation", _chat("cold", [
            "Lunch at noon?", "Sure.", *filler, twin, "Okay then."])))["source_id"]
        out = await call(c, "memory_query", "context", {"task": "how is the zephyr going?", "format": "xml"})
        trace = (await call(c, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
        by_id = {s["id"]: s for s in trace["candidates"]["selected"]}
        hot_twin, cold_twin = by_id[f"{hot}#seg-7"], by_id[f"{cold}#seg-6"]
        assert hot_twin["similarity"] > cold_twin["similarity"]
        assert hot_twin["scores"]["relevance"] > cold_twin["scores"]["relevance"]
        assert set(hot_twin["scores"]) == {"relevance", "recency", "stability", "provenance"}


def test_episode_scores_add_the_episodes_best_turns() -> None:
    # Two turns of equal score; "a" also holds two strong turns, "b" none.
    sources = ["a", "a", "a", "b", "b"]
    raw = np.array([3.0, 3.0, 1.0, 1.0, 0.0])
    plain = episodes.episode_scores(sources, raw, weight=0.0)
    mixed = episodes.episode_scores(sources, raw, weight=0.3)
    assert plain[2] == pytest.approx(plain[3])
    assert mixed[2] > mixed[3]
    assert list(np.argsort(-mixed, kind="stable")) == [0, 1, 2, 3, 4]
    assert episodes.similarities(np.array([2.0, 1.0, 0.0])) == [1.0, 0.5, 0.0]
    assert episodes.similarities(np.array([1.0, 1.0])) == [1.0, 1.0]
