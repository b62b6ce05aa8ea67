"""The graph-health page reuses its last computed section only while the store is unchanged,
says so with its age, and recomputes on any write or on request (both backends)."""

from __future__ import annotations

import html
import re
from typing import Any

from starlette.testclient import TestClient

from memory_substrate import Memory
from memory_substrate.inspector import build_inspector
from tests.inspect.seed import seed

LOCAL = "http://127.0.0.1"  # the bound address: the inspector answers no other Host (hosts.py)


def _nodes(text: str) -> int:
    return int(re.search(r'"canonical": \{\s*"nodes": (\d+)', html.unescape(text)).group(1))  # type: ignore[union-attr]


def test_cached_until_a_write_then_recomputed(memory: Memory) -> None:
    seed(memory)
    client = TestClient(build_inspector(memory), base_url=LOCAL)
    url = f"/ns/{memory.namespace}/health"
    first = client.get(url).text
    assert "Computed just now" in first and "Recompute now" in first
    second = client.get(url).text
    assert "Served from the last computation" in second and _nodes(second) == _nodes(first)

    # A governed write (from this process or any other writer of the store) invalidates it.
    memory.remember(
        "knowledge",
        {
            "kind": "decision",
            "title": "Use Kuzu for the graph",
            "summary": "Chosen.",
            "reason": "test",
            "memory_source": "user_declared",
            "scope_refs": ["scope:test"],
        },
    )
    third = client.get(url).text
    assert "Computed just now" in third and _nodes(third) == _nodes(first) + 1
    assert "Served from the last computation" in client.get(url).text

    refreshed = client.get(url + "?refresh=1").text
    assert "Computed just now" in refreshed


def test_a_status_change_without_new_objects_recomputes(memory: Memory) -> None:
    seed(memory)
    made: dict[str, Any] = memory.remember(
        "knowledge",
        {
            "kind": "decision",
            "title": "Adopt CockroachDB",
            "summary": "Chosen.",
            "reason": "test",
            "memory_source": "user_declared",
            "scope_refs": ["scope:test"],
        },
    )
    client = TestClient(build_inspector(memory), base_url=LOCAL)
    url = f"/ns/{memory.namespace}/health"
    client.get(url)
    assert "Served from the last computation" in client.get(url).text
    with memory.store.write(memory.namespace) as s:  # a write that records no patch still shows
        s.delete_object(made["object_id"])
    assert "Computed just now" in client.get(url).text
