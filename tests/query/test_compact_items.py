"""Compact search items are cheap by design: content first, shared fields once, every id usable.

Through the MCP tools (the SDK's in-process client), on both backends.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from memory_substrate.tokens import count_tokens, wire_json
from tests.helpers import ToolFailed, call, knowledge
from tests.query.search_keys import ranked_keys

NAMES = ["Caroline", "Melanie"]
TOPICS = [
    "pottery class",
    "camping trip",
    "adoption agency",
    "charity race",
    "support group",
    "violin lesson",
    "beach sunset",
    "school event",
    "painting",
    "counseling job",
]


def _turn(rng: random.Random) -> str:
    a, b = rng.sample(TOPICS, 2)
    feel = rng.choice(["great", "hard", "fun", "a lot to take in"])
    return (
        f"I went to the {a} last week and then we talked for hours about the {b}; honestly it was {feel}, "
        f"and I keep thinking about what the others said afterwards."
    )


@pytest.fixture
def chats(make_settings: Any, namespace: str) -> Any:
    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    rng = random.Random(5)
    for n in range(5):
        msgs = [
            {
                "role": "user",
                "content": _turn(rng),
                "name": NAMES[i % 2],
                "created_at": f"2023-05-0{n + 1}T13:56:00+00:00",
            }
            for i in range(20)
        ]
        mem.ingest("conversation", {"title": f"session {n + 1}", "messages": msgs})
    yield mem
    mem.close()


def _share(part: list[dict[str, Any]]) -> float:
    """Content tokens (titles, summaries, lines: top-level fields of each entry) over all tokens."""
    content = sum(
        count_tokens(s)
        for e in part
        for k in ("title", "summary", "lines")
        for s in ([e[k]] if isinstance(e.get(k), str) else e.get(k) or [])
    )
    return content / count_tokens(wire_json(part))


@pytest.mark.anyio
async def test_compact_segment_search_states_each_source_once(chats: Memory) -> None:
    async with Client(build_server(chats)) as c:
        out = await call(
            c,
            "memory_query",
            "search",
            {"query": "when did Caroline go to the pottery class"},
            {"result_unit": "segment"},
        )
        assert "items" not in out and out["count"] == 10 and out["cite"]
        ids = [s["id"] for s in out["sources"]]
        assert len(ids) == len(set(ids))  # each source once
        for s in out["sources"]:
            assert set(s) <= {"id", "kind", "title", "date", "ranks", "lines"}
            assert s["date"].endswith("T13:56Z") and s["title"].startswith("session")
            for line in s["lines"]:
                assert re.match(r"\d+ (Caroline|Melanie): ", line), line
                assert "T13:56" not in line  # the turn's time is its source's: stated once
        assert _share(out["sources"]) >= 0.5, _share(out["sources"])
        obj = await call(c, "memory_query", "search", {"query": "pottery class camping trip"})
        for item in obj["items"]:
            assert "object_type" not in item and "retrieval_sources" not in item and "uri" not in item
            assert "status" not in item  # active is the default
        assert _share(obj["items"]) >= 0.5, _share(obj["items"])


@pytest.mark.anyio
async def test_compact_and_full_rank_the_same_list(chats: Memory) -> None:
    async with Client(build_server(chats)) as c:
        for q in ["pottery class", "who talked about the adoption agency", "charity race and violin lesson"]:
            compact = await call(
                c, "memory_query", "search", {"query": q}, {"result_unit": "segment", "max_items": 10}
            )
            full = await call(
                c,
                "memory_query",
                "search",
                {"query": q},
                {"result_unit": "segment", "max_items": 10, "detail": "full"},
            )
            assert ranked_keys(compact) == ranked_keys(full) and len(ranked_keys(full)) == 10


@pytest.mark.anyio
async def test_every_id_in_a_compact_answer_goes_back_into_the_id_modes(chats: Memory) -> None:
    async with Client(build_server(chats)) as c:
        fact = await call(
            c, "memory_remember", "knowledge", knowledge(title="Caroline's pottery class", summary="Weekly.")
        )
        out = await call(
            c,
            "memory_query",
            "search",
            {"query": "pottery class"},
            {"result_unit": "segment", "max_items": 3},
        )
        ids = [f"{src}#{seg}" for src, seg in ranked_keys(out)]
        obj = await call(c, "memory_query", "search", {"query": "pottery class"}, {"max_items": 3})
        ids += [i["id"] for i in obj["items"]] + [fact["object_id"]]
        for ref in ids:
            page = await call(c, "memory_query", "page", {"id": ref})
            expand = await call(c, "memory_query", "expand", {"id": ref})
            graph = await call(c, "memory_query", "graph", {"id": ref})
            assert graph["nodes"], ref
            if "#" in ref:
                traces: list[Any] = []
                for one in (ref, ref.split("#")[0]):  # a segment's trace is its episode's
                    try:
                        traces.append(await call(c, "memory_query", "trace", {"id": one}))
                    except ToolFailed as exc:
                        traces.append(exc.code)
                assert traces[0] == traces[1]
                assert page["segment"]["segment_id"] == ref.split("#")[1] and page["segment"]["text"]
                assert page["source"]["id"] == ref.split("#")[0]
                number = ref.split("#seg-")[1]
                assert any(line.startswith(number + " ") for line in expand["lines"])
            else:
                assert page["object"]["id"] == ref and expand["object"]["id"] == ref


@pytest.mark.anyio
async def test_context_answers_once(chats: Memory) -> None:
    async with Client(build_server(chats)) as c:
        task = {"task": "when did Caroline go to the pottery class"}
        r = await c.call_tool("memory_query", {"args": {"mode": "context", "input_data": task}})
        out = r.structured_content
        assert out is not None and not r.is_error
        assert "items" not in out and "context_tiers" not in out and out["content"]
        # The package is its own text block, unescaped; the first block is the rest, as JSON.
        assert [b.text for b in r.content][1] == out["content"]  # type: ignore[union-attr]
        assert "content" not in json.loads(r.content[0].text)  # type: ignore[union-attr]
        assert set(out["context_budget"]) >= {"budget_tokens", "package_entries"} and out["trace_id"]
        for opts in ({"include_items": True}, {"detail": "full"}):
            more = await call(c, "memory_query", "context", task, opts)
            assert "items" in more and "context_tiers" in more and more["content"] == out["content"]
