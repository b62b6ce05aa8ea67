"""Default responses fit an agent's budget, and what does not fit is deferred, never lost.

The store is filled through the MCP tools the way a user would: several long conversations and
knowledge with long summaries citing them. Sizes are a property of the product (counted with
``memory_substrate.tokens``), not timings.
"""

from __future__ import annotations

import gc
import random
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from memory_substrate.tokens import count_tokens, wire_json
from tests.helpers import ToolFailed, call, knowledge, text_of
from tests.query.search_keys import ranked_keys

BUDGET = 1500
WORDS = [
    "deploy",
    "pipeline",
    "database",
    "migration",
    "release",
    "schedule",
    "payment",
    "service",
    "login",
    "failure",
    "cache",
    "eviction",
    "search",
    "latency",
    "embedding",
    "model",
    "backup",
    "restore",
    "rate",
    "limiter",
    "schema",
    "change",
    "feature",
    "flag",
    "memory",
    "leak",
    "we",
    "should",
    "probably",
    "check",
    "the",
    "dashboards",
    "again",
    "tomorrow",
    "because",
    "the",
    "alert",
    "fired",
    "twice",
    "last",
    "night",
    "and",
    "nobody",
    "on",
    "call",
    "could",
    "tell",
    "whether",
    "the",
    "retry",
    "storm",
    "came",
    "from",
    "the",
    "gateway",
    "or",
    "from",
    "the",
    "worker",
    "pool",
]


def _turn(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 90))).capitalize() + "."


@pytest.fixture
def big(make_settings: Any, namespace: str) -> Any:
    mem = Memory(make_settings(embedder="static"), namespace=namespace)
    yield mem
    mem.close()


async def _text(
    c: Client, tool: str, mode: str, data: dict[str, Any], opts: dict[str, Any] | None = None
) -> tuple[str, dict[str, Any]]:
    args: dict[str, Any] = {"mode": mode, "input_data": data}
    if opts is not None:
        args["options"] = opts
    r = await c.call_tool(tool, {"args": args})
    assert not r.is_error, r.content[0].text  # type: ignore[union-attr]
    text = "".join(b.text for b in r.content)  # type: ignore[union-attr]
    assert r.structured_content is not None
    if len(r.content) > 1:  # a context package travels as its own text block, after the JSON of the rest
        assert r.structured_content["result_type"] == "context_result"
        assert r.content[1].text == r.structured_content["content"]  # type: ignore[union-attr]
        assert text_of(r.content[0]) == wire_json(
            {k: v for k, v in r.structured_content.items() if k != "content"}
        )
        return text, r.structured_content
    return text, r.structured_content


@pytest.mark.anyio
async def test_every_default_response_fits_the_budget_and_is_compact_json(big: Memory) -> None:
    rng = random.Random(7)
    async with Client(build_server(big)) as c:
        sources = []
        for n in range(6):
            msgs = [{"role": "user", "content": _turn(rng), "name": ["ana", "bo"][i % 2]} for i in range(25)]
            text, out = await _text(
                c, "memory_ingest", "conversation", {"title": f"incident review {n}", "messages": msgs}
            )
            assert len(text) and count_tokens(text) <= BUDGET
            sources.append(out["source_id"])
        know_ids = []
        for n in range(30):
            data = knowledge(
                title=f"Finding {n}: " + " ".join(rng.choice(WORDS) for _ in range(8)),
                summary=" ".join(rng.choice(WORDS) for _ in range(120)),
                evidence_refs=[{"source_id": sources[n % 6], "segment_id": f"seg-{n % 20 + 1}"}],
                subject_refs=["node:gateway"],
            )
            text, out = await _text(c, "memory_remember", "knowledge", data)
            assert count_tokens(text) <= BUDGET
            know_ids.append(out["object_id"])
        calls = [
            (
                "memory_query",
                "search",
                {"query": "why did the deploy pipeline fail after the database migration"},
                None,
            ),
            (
                "memory_query",
                "search",
                {"query": "retry storm gateway worker pool"},
                {"result_unit": "segment"},
            ),
            ("memory_query", "context", {"task": "fix the login failure in the payment service"}, None),
            ("memory_query", "recent", {}, None),
            ("memory_query", "page", {"id": sources[0]}, None),
            ("memory_query", "page", {"id": know_ids[0]}, None),
            ("memory_query", "expand", {"id": sources[0]}, None),
            ("memory_query", "expand", {"id": "node:gateway"}, None),
            ("memory_query", "graph", {"id": "node:gateway"}, None),
            ("memory_maintain", "structure", {}, None),
            ("memory_maintain", "report", {}, None),
            ("memory_maintain", "audit", {}, None),
        ]
        for tool, mode, data, opts in calls:
            text, out = await _text(c, tool, mode, data, opts)
            if mode == "context":
                # The compiled package is sized by the namespace's token budget (spec 004, 4,096 by
                # default, `budget_tokens` to change it); the whole answer is the package and a short
                # envelope, within that budget + 10%, with no items or tiers repeating it.
                # The budget is in the compiler's (cl100k-like) count; the BERT count used for the
                # other answers runs about 10% higher on a package's punctuation.
                assert out["token_count"] <= 4096 and out["content"]
                assert count_tokens(text) <= 4096 * 1.1, (tool, mode, count_tokens(text))
                assert "items" not in out and "context_tiers" not in out
            else:
                assert count_tokens(text) <= BUDGET, (tool, mode, count_tokens(text))
                assert text == wire_json(out)  # compact JSON: no indentation, no spaces after separators
            assert "null" not in text or mode in ("structure",), (mode, text[:300])
            assert '"hash"' not in text and '"rank_score"' not in text and '"lexical_score"' not in text


@pytest.mark.anyio
async def test_search_pages_lose_nothing(big: Memory) -> None:
    rng = random.Random(3)
    for n in range(4):
        msgs = [{"role": "user", "content": _turn(rng)} for _ in range(30)]
        big.ingest("conversation", {"title": f"call {n}", "messages": msgs})
    query = {"query": "cache eviction search latency"}
    for unit in ("segment", "object"):
        want = ranked_keys(
            big.query("search", query, {"result_unit": unit, "max_items": 200, "detail": "full"})
        )
        got: list[Any] = []
        # Segments page by the default size and the token budget; objects (four sources) by three.
        size: dict[str, Any] = {} if unit == "segment" else {"max_items": 3}
        opts: dict[str, Any] = {"result_unit": unit, **size}
        pages = 0
        while True:
            page = big.query("search", query, opts)
            keys = ranked_keys(page)
            assert page["count"] == len(keys) >= 1
            got += keys
            pages += 1
            if not page.get("next_cursor"):
                break
            opts = {"result_unit": unit, "cursor": page["next_cursor"], **size}
        assert got == want and pages > 1


def test_a_cursor_from_another_request_is_refused(memory: Memory) -> None:
    for n in range(5):
        memory.remember("knowledge", knowledge(title=f"Kuzu note {n}", summary="kuzu graph"))
    page = memory.query("search", {"query": "kuzu"}, {"max_items": 2})
    assert page["next_cursor"]
    with pytest.raises(Exception) as exc:
        memory.query("search", {"query": "graph"}, {"max_items": 2, "cursor": page["next_cursor"]})
    assert getattr(exc.value, "code", None) == "memory_validation_error"
    with pytest.raises(Exception) as exc:
        memory.query("search", {"query": "kuzu"}, {"cursor": "not-a-cursor"})
    assert getattr(exc.value, "code", None) == "memory_validation_error"


def test_recent_with_reference_filters_finds_older_matches(memory: Memory) -> None:
    """The match is older than ten pages of newer objects; recent must still return it."""
    target = memory.remember(
        "knowledge", knowledge(title="About the gateway", subject_refs=["node:gateway"])
    )["object_id"]
    for n in range(45):
        memory.remember("knowledge", knowledge(title=f"Unrelated note {n}", summary=f"Nothing about it {n}."))
    out = memory.query("recent", {}, {"max_items": 3, "filters": {"node_ids": ["node:gateway"]}})
    assert [i["id"] for i in out["items"]] == ["node:gateway", target]  # the node itself, then what cites it
    assert out.get("next_cursor") is None


def test_recent_pages_through_everything(memory: Memory) -> None:
    ids = [
        memory.remember("knowledge", knowledge(title=f"Note {n}", summary="s"))["object_id"] for n in range(7)
    ]
    seen: list[str] = []
    opts: dict[str, Any] = {"max_items": 3}
    while True:
        out = memory.query("recent", {}, opts)
        seen += [i["id"] for i in out["items"]]
        if not out.get("next_cursor"):
            break
        opts = {"max_items": 3, "cursor": out["next_cursor"]}
    assert sorted(seen) == sorted(ids) and len(seen) == 7


def test_report_leaves_the_garbage_collector_alone(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """gc.disable is process-wide: a report in one thread must not pause collection in others."""
    calls: list[str] = []
    monkeypatch.setattr(gc, "disable", lambda: calls.append("disable"))
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    memory.remember("knowledge", knowledge())
    memory.maintain("report", {})
    assert calls == [] and gc.isenabled()


@pytest.mark.anyio
async def test_detail_full_still_returns_everything(memory: Memory) -> None:
    src = memory.ingest(
        "conversation", {"title": "t", "messages": [{"role": "user", "content": "kuzu is our graph store"}]}
    )
    async with Client(build_server(memory)) as c:
        full = await call(
            c, "memory_query", "search", {"query": "kuzu graph"}, {"result_unit": "segment", "detail": "full"}
        )
        item = full["items"][0]
        assert item["source_id"] == src["source_id"] and len(item["hash"]) == 64
        assert "rank_score" in item and "retrieval_ranks" in item
        with pytest.raises(ToolFailed):
            await call(c, "memory_query", "search", {"query": "kuzu"}, {"detail": "verbose"})
