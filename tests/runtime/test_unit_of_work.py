"""Runtime owns the unit of work (runtime.py): reads with and without expired rows, a write that
records its patch and audit events or nothing at all, and one read snapshot per request.
Both backends, real databases."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.models import MemoryObject
from memory_substrate.util import new_id


def _note(title: str, **metadata: object) -> MemoryObject:
    return MemoryObject(
        id=new_id("knowledge"),
        object_type="knowledge",
        kind="note",
        status="active",
        title=title,
        summary=title,
        memory_source="user_declared",
        reason="test",
        scope_refs=["scope:test"],
        metadata=dict(metadata),
    )


def test_a_write_records_its_patch_and_events_when_the_block_ends(memory: Memory) -> None:
    rt = memory.runtime
    with rt.write("memory_remember", "knowledge", "because") as (_session, patch):
        obj = patch.create(_note("kept"))
    with rt.read() as session:
        assert session.get_object(obj.id) is not None
        [record] = session.list_patches(limit=1)
        assert (record.id, record.tool, record.mode, record.summary) == (
            patch.id,
            "memory_remember",
            "knowledge",
            {"mode": "knowledge"},
        )
        assert [e.object_id for e in session.list_events(object_id=obj.id)] == [obj.id]


def test_a_failed_write_leaves_nothing_and_an_empty_one_records_no_patch(memory: Memory) -> None:
    rt = memory.runtime
    with (
        pytest.raises(RuntimeError),
        rt.write("memory_remember", "knowledge", "because") as (_session, patch),
    ):
        obj = patch.create(_note("lost"))
        raise RuntimeError("governance said no")
    with rt.write("memory_maintain", "reindex", None, embed=False):
        pass
    with rt.read() as session:
        assert session.get_object(obj.id) is None
        assert session.list_patches(limit=5) == []


def test_only_the_named_read_sees_expired_objects(memory: Memory) -> None:
    rt = memory.runtime
    past = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    with rt.write("memory_remember", "knowledge", "because") as (_session, patch):
        gone = patch.create(_note("expired", expires_at=past))
    with rt.read() as session:
        assert session.get_object(gone.id) is None
    with rt.read_with_expired() as session:
        assert session.get_object(gone.id) is not None


def test_a_snapshot_is_one_session_and_its_writes_wait_for_it_to_close(memory: Memory) -> None:
    rt = memory.runtime
    seen: list[str] = []
    with rt.snapshot() as outer:
        with rt.read() as inner:
            assert inner is outer
        with rt.snapshot() as nested:
            assert nested is outer
        # a snapshot belongs to its namespace (and its thread) only
        assert rt.for_namespace(rt.namespace + "-other")._pinned() is None
        rt.after_snapshot(lambda: seen.append("written"))
        assert seen == []
    assert seen == ["written"]
    rt.after_snapshot(lambda: seen.append("now"))  # outside a snapshot: at once
    assert seen == ["written", "now"]


def test_a_context_compile_reads_in_one_snapshot_and_its_trace_is_readable_after(memory: Memory) -> None:
    memory.remember(
        "knowledge",
        {
            "kind": "decision",
            "title": "Use Kafka for billing events",
            "summary": "Billing events go through Kafka.",
            "reason": "test",
            "memory_source": "user_declared",
            "scope_refs": ["scope:test"],
        },
    )
    out = memory.query("context", {"task": "how are billing events delivered?"})
    trace = memory.query("trace", {"id": out["trace_id"]})["trace"]
    assert trace["kind"] == "compile" and trace["task"] == out["task"]


def test_a_compile_opens_one_read_session_and_one_write_for_its_trace(
    make_settings: Any, namespace: str
) -> None:
    """With an embedder the searches' vector streams run too: inside the compile's snapshot they
    read in its session (search/streams.py), so the whole compile is one read transaction."""
    from memory_substrate import Memory

    with Memory(make_settings(embedder="static"), namespace=namespace) as memory:
        memory.ingest(
            "conversation",
            {
                "title": "billing",
                "messages": [
                    {"role": "user", "name": "ana", "content": "Billing events go through Kafka now."},
                    {
                        "role": "assistant",
                        "name": "ben",
                        "content": "Then the invoice job reads the billing topic.",
                    },
                ],
            },
        )
        memory.remember(
            "knowledge",
            {
                "kind": "decision",
                "title": "Use Kafka for billing events",
                "summary": "Billing events go through Kafka.",
                "reason": "test",
                "memory_source": "user_declared",
                "scope_refs": ["scope:test"],
            },
        )
        store = memory.runtime.store
        opened: list[str] = []
        read, write = store.read, store.write

        def counted(kind: str, inner: Callable[..., Any]) -> Callable[..., Any]:
            def open_session(*args: Any, **kwargs: Any) -> Any:
                opened.append(kind)
                return inner(*args, **kwargs)

            return open_session

        store.read, store.write = counted("read", read), counted("write", write)  # type: ignore[method-assign]
        try:
            out = memory.query("context", {"task": "how are billing events delivered?"})
        finally:
            store.read, store.write = read, write  # type: ignore[method-assign]
        assert out["token_count"] > 0 and "Kafka" in out["content"]
        assert opened == ["read", "write"]
