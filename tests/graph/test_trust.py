"""Trust order in spec 001's knowledge writes: a lower-trust claim never contests away,
supersedes or demotes a higher-trust one (the fix asked for in the knowledge-graph issue)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.helpers import ToolFailed, call, knowledge

pytestmark = pytest.mark.anyio


def claim(value: str, source: str, **extra: Any) -> dict[str, Any]:
    return knowledge(
        title=f"Deploy target is {value}",
        summary=f"We deploy to {value}.",
        memory_source=source,
        payload={"subject": "node:deploy", "predicate": "target", "value": value},
        **extra,
    )


async def _status(client: Client, object_id: str) -> Any:
    return (await call(client, "memory_query", "page", {"id": object_id}))["object"]["status"]


async def test_agent_inferred_conflict_cannot_contest_a_human_curated_claim(client: Client) -> None:
    human = await call(client, "memory_remember", "knowledge", claim("eu-west-1", "human_curated"))
    agent = await call(client, "memory_remember", "knowledge", claim("us-east-1", "agent_inferred"))
    assert await _status(client, human["object_id"]) == "active"  # was "contested" before the fix
    assert agent["knowledge_status"] == "contested"
    assert agent["conflicts"] == [
        {
            "object_id": human["object_id"],
            "title": "Deploy target is eu-west-1",
            "outcome": "kept_higher_trust_claim",
            "status": "active",
        }
    ]


async def test_equal_trust_conflict_contests_both_as_spec_001_says(client: Client) -> None:
    a = await call(client, "memory_remember", "knowledge", claim("eu-west-1", "agent_inferred"))
    b = await call(client, "memory_remember", "knowledge", claim("us-east-1", "agent_inferred"))
    assert await _status(client, a["object_id"]) == "contested" and b["knowledge_status"] == "contested"


async def test_a_higher_trust_claim_contests_the_lower_one_and_stays_active(client: Client) -> None:
    agent = await call(client, "memory_remember", "knowledge", claim("eu-west-1", "agent_inferred"))
    user = await call(client, "memory_remember", "knowledge", claim("us-east-1", "user_declared"))
    assert user["knowledge_status"] == "active"
    assert await _status(client, agent["object_id"]) == "contested"


async def test_a_claim_with_valid_from_supersedes_instead_of_contesting(client: Client) -> None:
    old = await call(
        client,
        "memory_remember",
        "knowledge",
        claim("eu-west-1", "user_declared", valid_from="2026-01-01T00:00:00Z"),
    )
    new = await call(
        client,
        "memory_remember",
        "knowledge",
        claim("us-east-1", "user_declared", valid_from="2026-06-01T00:00:00Z"),
    )
    assert new["knowledge_status"] == "active" and new["conflicts"][0]["outcome"] == "superseded"
    page = (await call(client, "memory_query", "page", {"id": old["object_id"]}, {"detail": "full"}))[
        "object"
    ]
    assert page["status"] == "superseded" and page["valid_until"].startswith("2026-06-01")


async def test_supersede_mode_refuses_a_lower_trust_replacement(client: Client) -> None:
    human = await call(client, "memory_remember", "knowledge", claim("eu-west-1", "human_curated"))
    other = await call(
        client,
        "memory_remember",
        "knowledge",
        knowledge(
            title="Deploy notes", summary="Agent thinks we deploy elsewhere.", memory_source="agent_inferred"
        ),
    )
    with pytest.raises(ToolFailed) as info:
        await call(
            client,
            "memory_remember",
            "supersede",
            {
                "old_knowledge_id": human["object_id"],
                "new_knowledge_id": other["object_id"],
                "reason": "agent guess",
            },
        )
    assert info.value.code == "memory_conflict" and "less trusted" in info.value.text
    assert await _status(client, human["object_id"]) == "active"
