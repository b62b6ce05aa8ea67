"""The compiler adds, never displaces (issue 22): what the graph finds joins one pool with the turns,
and the four-dimension ranking decides. The new-user case through MCP: a long chat, a short chat
holding the answer, then a small Markdown vault whose notes mention the task's words."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.importers.markdown_notes import import_markdown
from memory_substrate.mcp.server import build_server
from tests.helpers import call

pytestmark = pytest.mark.anyio

TASK = "What is the rollback plan for svc-3?"
ANSWER = "Rollback plan for svc-3: redeploy the previous image tag and restore the config from last night's snapshot."
WORDS = [
    "deploy",
    "build",
    "cache",
    "queue",
    "worker",
    "lunch",
    "weekend",
    "meeting",
    "review",
    "docs",
    "budget",
    "hiring",
    "laptop",
    "coffee",
    "release",
    "dashboard",
    "alert",
    "metric",
    "holiday",
    "standup",
    "ticket",
    "design",
    "sprint",
    "backlog",
    "roadmap",
]


def _long_chat(n: int) -> dict[str, Any]:
    rng = random.Random(3)
    return {
        "title": "team chat",
        "messages": [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "name": ["ana", "ben"][i % 2],
                "content": " ".join(rng.choices(WORDS, k=12)) + f" ({i})",
            }
            for i in range(n)
        ],
    }


async def _package(c: Client) -> tuple[dict[str, Any], dict[str, Any]]:
    out = await call(c, "memory_query", "context", {"task": TASK}, {"budget_tokens": 1500, "format": "xml"})
    trace = (await call(c, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
    return out, trace


@pytest.fixture
def static_memory(make_settings: Any, namespace: str) -> Any:
    """The default embedder (static vectors), as a new user has it."""
    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    try:
        yield mem
    finally:
        mem.close()


async def test_the_answer_turn_stays_in_the_package_after_a_vault_import(
    static_memory: Memory, tmp_path: Path
) -> None:
    memory = static_memory
    async with Client(build_server(memory)) as c:
        await call(c, "memory_ingest", "conversation", _long_chat(3000))
        await call(
            c,
            "memory_ingest",
            "conversation",
            {
                "title": "svc-3 incident",
                "messages": [
                    {"role": "user", "name": "ana", "content": TASK},
                    {"role": "assistant", "name": "ben", "content": ANSWER},
                ],
            },
        )
        before, _ = await _package(c)
        assert ANSWER.split(":")[1].strip()[:40] in before["content"]

        vault = tmp_path / "vault"
        vault.mkdir()
        (vault / "Project Atlas.md").write_text(
            "# Project Atlas\n\nAtlas moves svc-3 and the billing data to [[PostgreSQL]]. #project\n",
            encoding="utf-8",
        )
        (vault / "PostgreSQL.md").write_text(
            "# PostgreSQL\n\nThe main database; see [[Project Atlas]].\n", encoding="utf-8"
        )
        (vault / "notes.md").write_text(
            "# Notes\n\nIdeas, a reading list and [[Missing Page]].\n", encoding="utf-8"
        )
        import_markdown(memory, vault)

        after, trace = await _package(c)
        assert ANSWER.split(":")[1].strip()[:40] in after["content"]  # still there
        # episode recall ran whatever else was found, and no entity was linked by a fuzzy match:
        # the task names none of the notes
        strategies = {p["strategy"] for p in trace["profiles"] if "skipped" not in p}
        assert "episode_recall" in strategies
        assert trace["entities"] == []
        assert "links to" not in after["content"]  # the notes' link facts say nothing about the task


async def test_a_named_entity_adds_its_facts_beside_the_turns(memory: Memory, tmp_path: Path) -> None:
    async with Client(build_server(memory)) as c:
        ep = (
            await call(
                c,
                "memory_ingest",
                "conversation",
                {
                    "title": "atlas",
                    "messages": [
                        {
                            "role": "user",
                            "name": "ana",
                            "content": "Why is the Project Atlas migration to PostgreSQL slow?",
                        },
                        {
                            "role": "assistant",
                            "name": "ben",
                            "content": "The Atlas copy job holds a table lock on billing.",
                        },
                    ],
                },
            )
        )["source_id"]
        await call(
            c,
            "memory_remember",
            "extraction",
            {
                "episode_id": ep,
                "reason": "test",
                "memory_source": "agent_inferred",
                "scope_refs": ["scope:project"],
                "entities": [
                    {"name": "Project Atlas", "type": "project"},
                    {"name": "PostgreSQL", "type": "technology"},
                ],
                "facts": [
                    {
                        "subject": "Project Atlas",
                        "predicate": "depends_on",
                        "object": "PostgreSQL",
                        "segment_ids": ["seg-1"],
                    }
                ],
            },
        )
        out = await call(
            c,
            "memory_query",
            "context",
            {"task": "Debug the slow Project Atlas migration"},
            {"budget_tokens": 1500, "format": "xml", "task_class": "debug"},
        )
        trace = (await call(c, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
        assert len(trace["entities"]) == 1 and trace["entities"][0]["match"] == 1.0  # exact name only
        kinds = {s["kind"] for s in trace["candidates"]["selected"]}
        assert {"fact", "turn"} <= kinds  # the graph added its fact, the turns stayed
        assert "holds a table lock" in out["content"]
