"""Specific facts at the end of a sentence keep their value without the period, and custom
predicates are counted by how often they were stated, through the MCP client on both backends."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.graph.conftest import episode, extract
from tests.helpers import call

pytestmark = pytest.mark.anyio


async def test_an_address_or_a_version_ending_a_sentence_is_kept(client: Client) -> None:
    ep = await episode(
        client,
        "The db is at 10.0.3.17.",
        "We upgraded to version 15.4. The subnet is 10.0.0.0/16.",
        "Then 1.2.3-rc.1. Not an address: 10.0.3.17.5 or 1.2.3.4.5.",
    )
    page = await call(client, "memory_query", "page", {"id": ep}, {"detail": "full"})
    facts = {(f["kind"], f["value"]) for f in page["object"]["metadata"]["specific_facts"]}
    assert {
        ("ip", "10.0.3.17"),
        ("version", "15.4"),
        ("ip", "10.0.0.0/16"),
        ("version", "1.2.3-rc.1"),
    } <= facts, facts
    assert not {v for _, v in facts if v.endswith(".") or v in ("10.0.3.17.5", "1.2.3.4.5")}, facts
    hits = await call(client, "memory_query", "search", {"query": "10.0.3.17"})
    assert ep in [i["id"] for i in hits["items"]]


async def test_a_custom_fact_stated_in_two_episodes_counts_two_occurrences(client: Client) -> None:
    entities = [{"name": "Atlas", "type": "project"}]
    fact = {"subject": "Atlas", "predicate": "written_in", "value": "Go", "segment_ids": ["seg-1"]}
    first = await episode(client, "Atlas is written in Go.")
    second = await episode(client, "As I said, Atlas is written in Go.", title="later chat")
    await extract(client, first, entities=entities, facts=[fact])
    again = await extract(client, second, entities=entities, facts=[fact])
    assert again["facts"]["created"] == 0  # the same fact, stated again
    report = await call(client, "memory_maintain", "report", {})
    assert report["knowledge_graph"]["predicate_review"] == [
        {
            "predicate": "written_in",
            "occurrences": 2,
            "suggested_action": "promote_to_canonical_or_map_to_existing",
        }
    ]
    facts = await call(client, "memory_query", "facts", {"subject": "Atlas", "predicate": "written_in"})
    assert len(facts["items"]) == 1
