"""Imported claims sit side by side: an import never supersedes or contests its own claims, while
a claim from anyone else still settles against them as usual."""

from __future__ import annotations

from typing import Any

from memory_substrate import Memory


def _episode(memory: Memory, text: str) -> str:
    res = memory.ingest("conversation", {"title": "t", "messages": [{"role": "user", "content": text}]})
    return str(res["source_id"])


def _extract(
    memory: Memory, episode: str, source: str, target: str, valid_from: str | None = None
) -> dict[str, Any]:
    fact: dict[str, Any] = {
        "subject": "Alice Johnson",
        "predicate": "knows",
        "object": target,
        "segment_ids": ["seg-1"],
    }
    if valid_from:
        fact["valid_from"] = valid_from
    return memory.remember(
        "extraction",
        {
            "episode_id": episode,
            "reason": "test",
            "memory_source": source,
            "scope_refs": ["scope:t"],
            "entities": [{"name": "Alice Johnson", "type": "person"}, {"name": target, "type": "person"}],
            "facts": [fact],
        },
    )


def _live(memory: Memory) -> set[str]:
    items = memory.query("facts", {"subject": "Alice Johnson", "predicate": "knows"}, {"max_items": 50})[
        "items"
    ]
    return {f["object"]["name"] for f in items if f["status"] == "active"}


def test_imported_claims_do_not_supersede_each_other(memory: Memory) -> None:
    ep = _episode(memory, "Alice knows Bob Stone and Carol Reyes")
    _extract(memory, ep, "imported", "Bob Stone")
    second = _extract(memory, ep, "imported", "Carol Reyes")
    assert second["superseded_fact_ids"] == [] and second["facts"]["contested"] == 0
    assert _live(memory) == {"Bob Stone", "Carol Reyes"}


def test_other_claims_still_settle_against_imported_ones(memory: Memory) -> None:
    ep = _episode(memory, "Alice knows Bob Stone")
    _extract(memory, ep, "imported", "Bob Stone", "2025-01-01T00:00:00+00:00")
    later = _extract(
        memory,
        _episode(memory, "Alice now knows Dan Li"),
        "user_declared",
        "Dan Li",
        "2026-01-01T00:00:00+00:00",
    )
    assert len(later["superseded_fact_ids"]) == 1
    assert _live(memory) == {"Dan Li"}
