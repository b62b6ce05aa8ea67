"""Work items that live: ``memory_remember work_item`` with ``work_item_id`` updates an item as one
audited patch, its page shows the history, and a closed item leaves packages for current work."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate.app import Memory
from memory_substrate.errors import ConflictError, NotFoundError, ValidationError
from memory_substrate.mcp.server import build_server
from tests.helpers import ToolFailed, call, knowledge


def _item(memory: Memory, **kw: Any) -> str:
    data = knowledge(
        kind="task",
        title=kw.pop("title", "Add regression test for refund 409"),
        summary=kw.pop("summary", "Refunds retried by the client answer 409; cover it with a test."),
        **kw,
    )
    object_id: str = memory.remember("work_item", data)["object_id"]
    return object_id


def test_status_update_is_one_audited_patch(memory: Memory) -> None:
    wid = _item(memory, priority="high")
    out = memory.remember(
        "work_item", {"work_item_id": wid, "status": "in_progress", "reason": "started on it"}
    )
    assert out["status"] == "updated" and out["work_status"] == "in_progress" and out["changed"] == ["status"]
    assert out["applied_operations"] == 1 and len(out["audit_event_ids"]) == 1
    done = memory.remember(
        "work_item", {"work_item_id": wid, "status": "done", "priority": "low", "reason": "merged"}
    )
    assert done["changed"] == ["priority", "status"] and done["version"] == 3
    page = memory.query("page", {"id": wid})
    assert page["object"]["status"] == "done"
    history = page["history"]
    assert [h["action"] for h in history] == ["work_item_update", "work_item_update", "create"] and all(
        h["created_at"] for h in history
    )
    assert history[0]["changes"]["status"] == {"from": "in_progress", "to": "done"}
    assert history[0]["changes"]["priority"] == {"from": "high", "to": "low"}
    assert history[0]["reason"] == "merged"
    assert history[2]["changes"]["status"]["to"] == "open"
    full = memory.query("page", {"id": wid}, {"detail": "full"})
    assert full["object"]["payload"]["priority"] == "low" and len(full["history"]) == 3


def test_update_changes_only_what_it_names(memory: Memory) -> None:
    wid = _item(memory)
    before = memory.query("page", {"id": wid}, {"detail": "full"})["object"]
    memory.remember(
        "work_item", {"work_item_id": wid, "summary": "Also cover partial refunds.", "reason": "scope grew"}
    )
    after = memory.query("page", {"id": wid}, {"detail": "full"})["object"]
    assert after["summary"] == "Also cover partial refunds."
    for field in ("title", "kind", "status", "scope_refs", "memory_source", "created_at", "reason"):
        assert after[field] == before[field], field
    # the new summary is searchable
    hits = memory.query("search", {"query": "partial refunds"})["items"]
    assert hits and hits[0]["id"] == wid
    # a compact page cuts each changed text; the full page has it whole
    long = ("x " * 5000).strip()
    memory.remember("work_item", {"work_item_id": wid, "summary": long, "reason": "long"})
    compact_change = memory.query("page", {"id": wid})["history"][0]["changes"]["summary"]
    assert len(compact_change["to"]) < 300 and len(compact_change["from"]) < 300
    assert (
        memory.query("page", {"id": wid}, {"detail": "full"})["history"][0]["changes"]["summary"]["to"]
        == long
    )


def test_short_id_and_bad_updates(memory: Memory) -> None:
    wid = _item(memory)
    prefix, digits = wid.split(":", 1)
    short = f"{prefix}:{digits[-8:]}"  # a git-style short form, as packages print them
    assert (
        memory.remember("work_item", {"work_item_id": short, "status": "blocked", "reason": "waiting"})[
            "object_id"
        ]
        == wid
    )
    with pytest.raises(ConflictError, match="nothing to change"):
        memory.remember("work_item", {"work_item_id": wid, "status": "blocked", "reason": "again"})
    with pytest.raises(ValidationError, match="at least one of status"):
        memory.remember("work_item", {"work_item_id": wid, "reason": "no change"})
    with pytest.raises(ValidationError, match="status"):
        memory.remember("work_item", {"work_item_id": wid, "status": "finished", "reason": "x"})
    with pytest.raises(ValidationError, match="reason"):
        memory.remember("work_item", {"work_item_id": wid, "status": "done"})
    with pytest.raises(ValidationError, match="kind"):  # an update cannot change what the item is
        memory.remember("work_item", {"work_item_id": wid, "kind": "bug", "reason": "x"})
    kid = memory.remember("knowledge", knowledge(title="A fact"))["object_id"]
    with pytest.raises(NotFoundError):
        memory.remember("work_item", {"work_item_id": kid, "status": "done", "reason": "not a work item"})
    assert memory.query("page", {"id": wid})["object"]["status"] == "blocked"


def test_an_expired_item_is_not_there_to_update(make_settings: Any, namespace: str) -> None:
    from datetime import UTC, datetime, timedelta

    now = [datetime.now(UTC)]
    mem = Memory(make_settings(), namespace=namespace)
    mem.runtime.clock = lambda: now[0]
    try:
        expires = (now[0] + timedelta(minutes=1)).isoformat()
        wid = mem.remember(
            "work_item",
            knowledge(
                kind="task", title="Short-lived", summary="gone soon", metadata={"expires_at": expires}
            ),
        )["object_id"]
        now[0] += timedelta(minutes=5)
        with pytest.raises(NotFoundError):
            mem.query("page", {"id": wid})
        with pytest.raises(NotFoundError):
            mem.remember("work_item", {"work_item_id": wid, "status": "open", "reason": "reopen"})
    finally:
        mem.close()


def test_batch_updates_roll_back_together(memory: Memory) -> None:
    wid = _item(memory)
    with pytest.raises(Exception, match="batch entry 1"):
        memory.remember(
            "batch",
            {
                "entries": [
                    {
                        "mode": "work_item",
                        "input_data": {"work_item_id": wid, "status": "done", "reason": "closing"},
                    },
                    {
                        "mode": "work_item",
                        "input_data": {"work_item_id": "work_item:nope", "status": "done", "reason": "x"},
                    },
                ]
            },
        )
    assert memory.query("page", {"id": wid})["object"]["status"] == "open"


async def packaged(c: Client, task: dict[str, Any]) -> set[str]:
    """Ids the compile selected into the package, read back from its trace (spec 004)."""
    result = await call(c, "memory_query", "context", task)
    trace = await call(c, "memory_query", "trace", {"id": result["trace_id"]})
    return {entry["id"] for entry in trace["trace"]["candidates"]["selected"]}


@pytest.mark.anyio
async def test_closed_work_with_the_default_embedder(default_memory: Memory) -> None:
    """With the default embedder a closed item's similarity to a task naming it is near 1.0: it
    answers a task about past work, never one about work still to do."""
    wid = _item(default_memory)
    async with Client(build_server(default_memory)) as c:
        await call(
            c, "memory_remember", "work_item", {"work_item_id": wid, "status": "done", "reason": "merged"}
        )
        for task in (
            "What is still open on refunds?",
            "I'm picking up the refund 409 work, where are we?",
            "Fix the refund 409 errors and add a regression test",
        ):
            assert wid not in await packaged(c, {"task": task, "budget_tokens": 1500}), task
        assert wid in await packaged(
            c, {"task": "Didn't we already add the refund 409 regression test?", "budget_tokens": 1500}
        )


@pytest.mark.anyio
async def test_closed_item_leaves_current_work_packages_through_mcp(memory: Memory) -> None:
    wid = _item(memory)
    async with Client(build_server(memory)) as c:
        task = {"task": "Fix the refund 409 errors and add a regression test", "budget_tokens": 1500}
        assert wid in await packaged(c, task)
        updated = await call(
            c, "memory_remember", "work_item", {"work_item_id": wid, "status": "done", "reason": "merged"}
        )
        assert updated["work_status"] == "done"
        with pytest.raises(ToolFailed) as err:
            await call(c, "memory_remember", "work_item", {"work_item_id": wid, "reason": "nothing"})
        assert err.value.code == "memory_validation_error"
        assert wid not in await packaged(c, task)
