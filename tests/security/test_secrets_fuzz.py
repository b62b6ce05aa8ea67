"""Fuzzing the secret scan across the product: Hypothesis places fresh secrets of every shape, amid
random words and separators, in every write mode (a conversation's messages, title and metadata; a
file capture; knowledge, a work item and its update, an activity and an extraction through
memory_remember; the graph toolset's nodes and triplets), then reads the namespace back through
every read mode and both export formats, and looks in the database itself: no secret anywhere.
Both backends, through the MCP server and the official SDK client. Deterministic in CI; under
MEMORY_SUBSTRATE_SOAK=1 it draws fresh examples, more of them."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import anyio.from_thread
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call
from tests.reliability.common import SOAK, scale
from tests.security.shapes import Shape, capture_shapes, conversation_shapes
from tests.security.stored import exports, leaked, stored_text

WORDS = [
    "deploy",
    "the",
    "bot",
    "rotate",
    "Friday",
    "café",
    "日本",
    "prod",
    "key",
    "token",
    "password",
    "is",
    "db",
    "staging",
    "x",
    "42",
    "note",
    "—",
    "ok",
]
SEPARATORS = [" ", "\n", "\t", ", ", "; ", " (", ") ", ": ", ' "', '" ', "\n\n", " — "]
GOV = {"reason": "fuzzed", "memory_source": "user_declared", "scope_refs": ["scope:project"]}


@st.composite
def placed(draw: st.DrawFn) -> tuple[list[str], list[Shape]]:
    """Nine texts, each holding one or two secrets of random shapes amid random words."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    pool = conversation_shapes(rnd) + capture_shapes(rnd)
    texts, used = [], []
    for _ in range(9):
        chosen = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2))
        parts: list[str] = []
        for shape in chosen:
            parts.extend(draw(st.lists(st.sampled_from(WORDS), max_size=4)))
            parts.append(shape.text)
        parts.extend(draw(st.lists(st.sampled_from(WORDS), max_size=3)))
        seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(parts), max_size=len(parts)))
        texts.append("".join(p + s for p, s in zip(parts, seps, strict=True)).strip() or "x")
        used.extend(chosen)
    return texts, used


async def _write_everything(c: Client, texts: list[str], path: Path) -> list[str]:
    """Each text through another write mode; the ids to read back."""
    t = texts
    conv = await call(
        c,
        "memory_ingest",
        "conversation",
        {
            "title": t[0][:400],
            "messages": [
                {"role": "user", "content": t[1], "metadata": {"note": t[2]}},
                {"role": "assistant", "content": t[3], "name": "claude-code"},
            ],
        },
    )
    episode = conv["source_id"]
    path.write_text(f"# Notes\n\n{t[4]}\n")
    doc = await call(c, "memory_ingest", "markdown", {"path": str(path)})
    know = await call(
        c,
        "memory_remember",
        "knowledge",
        {"kind": "fact", "title": t[5][:400], "summary": t[6], "metadata": {"from": t[7]}, **GOV},
    )
    work = await call(
        c, "memory_remember", "work_item", {"kind": "task", "title": "Fix it", "summary": t[8], **GOV}
    )
    await call(
        c,
        "memory_remember",
        "work_item",
        {"work_item_id": work["object_id"], "summary": f"update: {t[0]}", "reason": t[2]},
    )
    act = await call(
        c,
        "memory_remember",
        "activity",
        {"kind": "session", "title": "Did it", "summary": t[3], "source_refs": [episode], **GOV},
    )
    await call(
        c,
        "memory_remember",
        "extraction",
        {
            "episode_id": episode,
            **GOV,
            "entities": [{"name": "Deploy Bot", "type": "service", "summary": t[5][:1900]}],
            "facts": [
                {"subject": "Deploy Bot", "predicate": "noted", "value": t[6][:190], "segment_ids": ["seg-1"]}
            ],
            "procedures": [{"kind": "workflow", "title": "Rotate", "text": t[7], "segment_ids": ["seg-2"]}],
        },
    )
    node = (await c.call_tool("create_node", {"text": t[8], "metadata": {"note": t[1]}})).structured_content
    await c.call_tool(
        "create_triplet", {"subject": "Deploy Bot", "predicate": "uses", "object_value": t[4][:190]}
    )
    assert node and node["success"], node
    return [episode, doc["source_id"], know["object_id"], work["object_id"], act["object_id"]]


async def _read_everything(c: Client, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for query in ("deploy bot rotate", "password key token", "notes fix"):
        out[f"search {query}"] = await call(
            c, "memory_query", "search", {"query": query}, {"detail": "full", "max_items": 50}
        )
    for i in ids:
        out[f"page {i}"] = await call(c, "memory_query", "page", {"id": i}, {"detail": "full"})
        out[f"expand {i}"] = await call(c, "memory_query", "expand", {"id": i})
    out["context"] = await call(c, "memory_query", "context", {"task": "deploy bot password rotate notes"})
    out["recent"] = await call(c, "memory_query", "recent", {}, {"detail": "full", "max_items": 50})
    out["facts"] = await call(c, "memory_query", "facts", {"subject": "Deploy Bot"}, {"detail": "full"})
    out["entities"] = await call(c, "memory_query", "entities", {"name": "Deploy Bot"}, {"detail": "full"})
    out["graph search"] = (await c.call_tool("search", {"query": "deploy password key"})).structured_content
    return out


def test_no_secret_survives_any_write_mode_on_any_read(
    memory: Memory, backend: str, tmp_path: Path, request: Any
) -> None:
    pg_url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    examples = scale(4, 60)
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(build_server(memory, "all"))) as client,
    ):

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=not SOAK,
            suppress_health_check=list(HealthCheck),
        )
        @given(placed())
        def check(drawn: tuple[list[str], list[Shape]]) -> None:
            texts, shapes = drawn
            ids = portal.call(
                _write_everything, client, texts, tmp_path / f"notes-{len(list(tmp_path.iterdir()))}.md"
            )
            reads = portal.call(_read_everything, client, ids)
            reads["exports"] = exports(memory)
            reads["database"] = stored_text(memory, backend, pg_url)
            probes = [p for s in shapes for p in s.probes]
            assert leaked(reads, probes) == []

        check()
