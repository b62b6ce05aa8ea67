"""Episode recall's two retrieval ideas (compiler/episodes.py), end to end through the MCP client
on both backends: turns near the best hits are ranked on their own (context expansion), and a turn
of an episode that holds several hits outranks an equally matching turn of an unrelated episode
(episode-level relevance); a task that asks when prefers the turn that says when (answer_type)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.compiler import episodes
from memory_substrate.compiler.answer_type import asks_when, says_when
from memory_substrate.mcp.server import build_server
from tests.helpers import call, json_episodes

pytestmark = pytest.mark.anyio


def _chat(title: str, texts: list[str]) -> dict[str, Any]:
    return {
        "title": title,
        "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "name": ["dana", "eli"][i % 2], "content": t}
            for i, t in enumerate(texts)
        ],
    }


def _turns(content: str) -> list[str]:
    body = json.loads(content)["memory_context"]
    return [line for _, _, lines in json_episodes(body) for line in lines]


async def test_a_reply_two_turns_after_the_hit_is_ranked_and_packed(memory: Memory) -> None:
    """The answer shares no word with the task and sits two turns after the turn that matches it:
    only context expansion (2 turns around the best hits) makes it a candidate."""
    async with Client(build_server(memory)) as c:
        await call(
            c,
            "memory_ingest",
            "conversation",
            _chat(
                "planning",
                [
                    "Morning! Coffee first.",
                    "Where will the zephyr audit take place this quarter?",
                    "Let me check the calendar.",
                    "Room 4B on Thursday at ten.",
                    "Great, thanks.",
                    "See you there.",
                ],
            ),
        )
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
        hot = (
            await call(
                c,
                "memory_ingest",
                "conversation",
                _chat(
                    "hot",
                    [
                        "The zephyr rollout starts Monday.",
                        "Zephyr canaries are green.",
                        "Zephyr docs are updated.",
                        *filler,
                        twin,
                        "Okay then.",
                    ],
                ),
            )
        )["source_id"]
        cold = (
            await call(
                c,
                "memory_ingest",
                "conversation",
                _chat("cold", ["Lunch at noon?", "Sure.", *filler, twin, "Okay then."]),
            )
        )["source_id"]
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


async def test_a_when_task_prefers_the_turn_that_says_when(memory: Memory) -> None:
    """One conversation tells the same move twice; only the later turn says when. Asked when,
    that turn ranks first; asked why, the plain one does (the bonus follows what the task asks),
    as it does for the when-task without the bonus."""
    async with Client(build_server(memory)) as c:
        sid = (
            await call(
                c,
                "memory_ingest",
                "conversation",
                _chat(
                    "move",
                    [
                        "Ana moved to Lisbon for the new job.",
                        "Nice.",
                        "Coffee?",
                        "Sure.",
                        "Lunch at noon?",
                        "Fine.",
                        "Ana moved to Lisbon for the new job last spring.",
                        "Nice.",
                    ],
                ),
            )
        )["source_id"]

        async def similarity(task: str) -> tuple[float, float]:
            out = await call(c, "memory_query", "context", {"task": task, "format": "json"})
            trace = (await call(c, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
            assert trace.get("answer_type") == (
                "when" if task.startswith("When") and episodes.WHEN_BONUS else None
            )
            by_id = {s["id"]: s["similarity"] for s in trace["candidates"]["selected"]}
            return by_id[f"{sid}#seg-7"], by_id[f"{sid}#seg-1"]

        dated, plain = await similarity("When did Ana move to Lisbon?")
        assert dated > plain
        dated, plain = await similarity("Why did Ana move to Lisbon?")
        assert dated < plain
        saved = episodes.WHEN_BONUS
        try:
            episodes.WHEN_BONUS = 0.0
            dated, plain = await similarity("When did Ana move to Lisbon?")
        finally:
            episodes.WHEN_BONUS = saved
        assert dated < plain


def test_answer_type_when() -> None:
    for task in (
        "When did Ana move to Lisbon?",
        "when's the review?",
        "What year did we drop Redis?",
        "How long ago was the outage?",
        "Which day is the audit?",
    ):
        assert asks_when(task), task
    for task in (
        "When the build fails, what should I check?",
        "Why did Ana move?",
        "What is the rollback plan?",
    ):
        assert not asks_when(task), task
    for text in (
        "I went yesterday",
        "back in 2021",
        "see you on Friday",
        "two weeks ago",
        "last spring",
        "in May we moved",
        "this weekend",
    ):
        assert says_when(text), text
    for text in ("Ana moved to Lisbon.", "We use SQLite in WAL mode.", "Version 2.3.11 crashed"):
        assert not says_when(text), text


async def test_a_turn_found_by_meaning_below_the_50th_vector_hit_is_packed(
    make_settings: Any, namespace: str
) -> None:
    """The answer shares no word with the task, sits in a conversation of its own among unrelated
    turns, and 70 turns of another conversation repeat the task's words: by meaning it ranks below
    them, past the 50th hit of the vector stream. With ``VECTOR_PER_POOL`` 1.0 (the default) the
    compiler's vector stream runs as deep as its pool of turns at 4,096 tokens (136, traced as
    ``streams``), so it is a candidate and fits a budget that holds every candidate; with the
    stream as deep as search's (0) it is not found."""
    answer = "The Prius gets an oil change and new tyres every spring."
    task = "How is the vehicle maintained?"
    with Memory(make_settings(embedder="static"), namespace=namespace) as memory:
        async with Client(build_server(memory)) as c:
            await call(
                c,
                "memory_ingest",
                "conversation",
                _chat(
                    "log",
                    [f"Vehicle maintenance log, entry {i}: the vehicle was maintained." for i in range(70)],
                ),
            )
            await call(
                c,
                "memory_ingest",
                "conversation",
                _chat(
                    "chat",
                    ["Lunch at noon?", "Sure.", "Did you see the match?", answer, "Okay then.", "Bye!"],
                ),
            )

            async def packed() -> tuple[bool, dict[str, Any]]:
                out = await call(
                    c, "memory_query", "context", {"task": task, "format": "json", "budget_tokens": 4096}
                )
                trace = (await call(c, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
                return any(t.endswith(answer) for t in _turns(out["content"])), trace

            assert episodes.VECTOR_PER_POOL == 1.0
            found, trace = await packed()
            assert found
            assert trace["streams"] == {"full_text": 51, "vector": 136}
            saved = episodes.VECTOR_PER_POOL
            try:
                episodes.VECTOR_PER_POOL = 0.0
                found, trace = await packed()
            finally:
                episodes.VECTOR_PER_POOL = saved
            assert trace["streams"] == {"full_text": 51, "vector": 51}
            assert not found
