"""The package's index of what else memory holds near the task: what fell outside the budget is
one line away, what governance keeps out stays out of the index too, and an uncovered task gets
none."""

from __future__ import annotations

import json
import re

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call, knowledge

pytestmark = pytest.mark.anyio

TASK = "How does the invoice exporter handle currency rounding?"


@pytest.fixture
def memory(default_memory: Memory) -> Memory:
    return default_memory


async def _seed(c: Client) -> dict[str, str]:
    ids: dict[str, str] = {}
    for i in range(12):
        ids[f"fact{i}"] = (
            await call(
                c,
                "memory_remember",
                "knowledge",
                knowledge(
                    kind="fact",
                    title=f"Invoice exporter currency rounding rule {i}",
                    summary=f"The invoice exporter rounds currency amounts half-even at step {i}; "
                    "totals are summed before rounding so the exporter never drifts by a cent.",
                ),
            )
        )["object_id"]
    old = (
        await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(
                kind="decision",
                title="Invoice exporter rounds currency half-up",
                summary="The invoice exporter rounds currency amounts half-up.",
            ),
        )
    )["object_id"]
    new = (
        await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(
                kind="decision",
                title="Invoice exporter rounds currency half-even",
                summary="The invoice exporter rounds currency amounts half-even (banker's rounding).",
            ),
        )
    )["object_id"]
    await call(
        c,
        "memory_remember",
        "supersede",
        {"old_knowledge_id": old, "new_knowledge_id": new, "reason": "audit"},
    )
    ids["superseded"] = old
    ids["guess"] = (
        await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(
                kind="fact",
                title="Invoice exporter might truncate currency",
                summary="Perhaps the exporter truncates cents.",
                memory_source="agent_inferred",
            ),
        )
    )["object_id"]
    done = (
        await call(
            c,
            "memory_remember",
            "work_item",
            knowledge(
                kind="task",
                title="Reorder the invoice exporter CSV columns",
                summary="Currency column moved after the amount.",
            ),
        )
    )["object_id"]
    await call(c, "memory_remember", "work_item", {"work_item_id": done, "status": "done", "reason": "fixed"})
    ids["done"] = done
    return ids


def _short(full: str) -> str:
    return full.split(":")[0] + ":" + full[-6:]


async def test_what_the_budget_leaves_out_is_listed_and_what_governance_excludes_is_not(
    memory: Memory,
) -> None:
    async with Client(build_server(memory)) as c:
        ids = await _seed(c)
        for fmt in ("xml", "json"):
            out = await call(
                c, "memory_query", "context", {"task": TASK}, {"budget_tokens": 400, "format": fmt}
            )
            content = out["content"]
            assert out["token_count"] <= 400
            if fmt == "xml":
                index = re.search(r"<more expand=\"[^\"]*\">(.*?)</more>", content, re.S)
                assert index, content
                lines = [ln for ln in index.group(1).splitlines() if ln]
            else:
                more = json.loads(content)["memory_context"]["more"]
                assert "memory_query expand" in more["expand"]
                lines = more["items"]
            assert lines and all(re.match(r"^(know|work|src):[0-9a-f]+\S* [\w ]+: ", ln) for ln in lines), (
                lines
            )
            trace = (await call(c, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
            listed = {m["id"] for m in trace["more"]}
            selected = {s["id"] for s in trace["candidates"]["selected"]}
            assert listed and not listed & selected
            assert all(m["why"] for m in trace["more"])
            facts = {ids[f"fact{i}"] for i in range(12)}
            assert listed & facts  # the rounding facts the budget could not hold are one line away
            for forbidden in ("superseded", "guess"):
                assert ids[forbidden] not in listed | selected
                assert _short(ids[forbidden]) not in content


async def test_an_uncovered_task_gets_no_index(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        await _seed(c)
        out = await call(
            c,
            "memory_query",
            "context",
            {"task": "Explain what a Python dataclass __post_init__ is for"},
            {"budget_tokens": 1500, "format": "json"},
        )
        assert "more" not in json.loads(out["content"])["memory_context"]
        assert out["token_count"] <= 300
