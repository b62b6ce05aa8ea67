"""Cases an audit through the server found, each as a user meets it: the open work asked for in
plain words, a superseded decision's own turns, spec 001's own context example, and a model's
alias that the episode never writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.graph.stub_llm import Reply, StubLLM, stub_llm
from tests.helpers import call, conversation, knowledge

pytestmark = pytest.mark.anyio

OPEN_QUESTIONS = (
    "What is still open before the 3.0 release?",
    "What's still open?",
    "What work remains?",
    "Which tickets are unresolved?",
)


@pytest.fixture
def memory(default_memory: Memory) -> Memory:
    """A new user's: the default embedder."""
    return default_memory


async def _package(c: Client, task: str, fmt: str = "json", **input_data: Any) -> str:
    out = await call(
        c, "memory_query", "context", {"task": task, **input_data}, {"budget_tokens": 1500, "format": fmt}
    )
    return str(out["content"])


async def _work(c: Client, title: str, summary: str, status: str | None = None) -> str:
    wid = str(
        (await call(c, "memory_remember", "work_item", knowledge(kind="task", title=title, summary=summary)))[
            "object_id"
        ]
    )
    if status:
        await call(
            c, "memory_remember", "work_item", {"work_item_id": wid, "status": status, "reason": "moved on"}
        )
    return wid


@pytest.mark.parametrize("question", OPEN_QUESTIONS)
async def test_what_is_still_open_lists_the_open_work_and_nothing_closed(
    memory: Memory, question: str
) -> None:
    async with Client(build_server(memory)) as c:
        await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(
                kind="fact",
                title="Repository layout",
                summary="The service lives in src/app and its tests in tests/.",
            ),
        )
        await _work(c, "Write the 3.0 release notes", "Notes for the 3.0 release.", "in_progress")
        await _work(c, "Rotate the staging certificates", "The staging certificates expire in March.")
        await _work(c, "Migrate the CI runners", "Move the pipelines to the new cluster.", "done")
        await _work(c, "Fix the flaky login test", "It timed out on CI.", "cancelled")
        body = json.loads(await _package(c, question))["memory_context"]
        texts = " ".join(k["text"] for k in body.get("knowledge", []))
        assert "3.0 release notes" in texts and "staging certificates" in texts, body
        assert "CI runners" not in texts and "flaky login" not in texts


async def test_a_superseded_decisions_turns_never_read_as_current(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        first = (
            await call(
                c,
                "memory_ingest",
                "conversation",
                conversation(
                    [
                        "Which Postgres should the orders database run?",
                        "We decided to use PostgreSQL 16 for the orders database, it's what ops supports.",
                    ],
                    title="Orders DB choice",
                ),
            )
        )["source_id"]
        old = (
            await call(
                c,
                "memory_remember",
                "knowledge",
                knowledge(
                    kind="decision",
                    title="Orders database runs PostgreSQL 16",
                    summary="The orders database uses PostgreSQL 16.",
                    evidence_refs=[{"source_id": first, "segment_id": "seg-2"}],
                ),
            )
        )["object_id"]
        second = (
            await call(
                c,
                "memory_ingest",
                "conversation",
                conversation(
                    [
                        "Ops now supports PostgreSQL 17 and 16 goes out of support.",
                        "Then we move the orders database to PostgreSQL 17.",
                    ],
                    title="Orders DB upgrade",
                ),
            )
        )["source_id"]
        new = (
            await call(
                c,
                "memory_remember",
                "knowledge",
                knowledge(
                    kind="decision",
                    title="Orders database runs PostgreSQL 17",
                    summary="The orders database moves to PostgreSQL 17.",
                    evidence_refs=[{"source_id": second, "segment_id": "seg-2"}],
                ),
            )
        )["object_id"]
        await call(
            c,
            "memory_remember",
            "supersede",
            {"old_knowledge_id": old, "new_knowledge_id": new, "reason": "upgrade"},
        )
        for fmt in ("xml", "json"):
            content = await _package(c, "Which PostgreSQL version does the orders database use?", fmt)
            assert (
                "PostgreSQL 16 for the orders database" in content
            )  # what was decided, and when, is still there
            lines = content.replace("\\n", "\n").replace('",', '"\n').splitlines()
            old_turns = [ln for ln in lines if "We decided to use PostgreSQL 16" in ln]
            assert old_turns and all("superseded by" in ln and "PostgreSQL 17" in ln for ln in old_turns), (
                content
            )
            assert "Orders database runs PostgreSQL 16" not in content


async def test_spec_001s_context_example_is_answered_from_what_memory_holds(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(
                kind="fact",
                title="Repository layout",
                summary="The repository keeps the service in src/app, the tests in tests/ and the manifests in deploy/.",
            ),
        )
        out = await call(
            c,
            "memory_query",
            "context",
            {
                "task": "inspect repository structure",
                "scope": {"object_types": ["knowledge", "activity", "work_item"]},
            },
            {"max_items": 12},
        )
        assert out["classification"]["primary"]["class"] == "architecture"
        assert "src/app" in out["content"]


@pytest.fixture
def llm() -> Iterator[StubLLM]:
    with stub_llm() as stub:
        yield stub


async def test_a_model_alias_the_episode_never_writes_bridges_a_task_to_the_entity(
    make_settings: Any, namespace: str, llm: StubLLM
) -> None:
    answer = json.dumps(
        {
            "entities": [
                {
                    "name": "Zanzibar Billing",
                    "type": "project",
                    "aliases": ["ZB"],
                    "summary": "The billing service",
                },
                {"name": "Stripe", "type": "technology", "aliases": []},
            ],
            "facts": [
                {
                    "subject": "Zanzibar Billing",
                    "predicate": "uses",
                    "object": "Stripe",
                    "segment_ids": ["seg-1"],
                }
            ],
            "procedures": [],
        }
    )
    llm.script = [Reply(content=answer)]
    mem = Memory(
        make_settings(llm_base_url=llm.url, llm_model="stub-model", llm_api_key="sk-test"),
        namespace=namespace,
    )
    try:
        async with Client(build_server(mem)) as c:
            await call(
                c,
                "memory_ingest",
                "conversation",
                {
                    "title": "billing",
                    "messages": [
                        {"role": "user", "content": "Zanzibar Billing charges cards through Stripe."}
                    ],
                },
            )
            await call(c, "memory_maintain", "extract", {}, {"apply": True})
            ents = await call(c, "memory_query", "entities", {"name": "ZB"})
            assert ents["matched_by"] == "name_or_alias" and ents["items"][0]["name"] == "Zanzibar Billing"
            assert ents["items"][0]["model_aliases"] == ["ZB"]
            out = await call(
                c,
                "memory_query",
                "context",
                {"task": "Which payment provider does ZB use?"},
                {"budget_tokens": 1500, "format": "json"},
            )
            assert "Stripe" in out["content"] and "Zanzibar Billing" in out["content"], out["content"]
    finally:
        mem.close()
