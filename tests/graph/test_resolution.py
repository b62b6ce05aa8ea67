"""Three-pass entity resolution through the MCP surface, and the explicit merge."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.graph.conftest import episode, extract
from tests.helpers import ToolFailed, call

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sclient(static_memory: Memory) -> AsyncIterator[Client]:
    async with Client(build_server(static_memory)) as c:
        yield c


async def _mention(c: Client, name: str, etype: str, aliases: list[str] | None = None) -> dict[str, Any]:
    ep = await episode(c, f"A note about {name}.")
    out = await extract(c, ep, entities=[{"name": name, "type": etype, "aliases": aliases or []}])
    if out["entities"]["resolved"]:
        return {
            "how": out["entities"]["resolved"][0]["pass"],
            "id": out["entities"]["resolved"][0]["entity_id"],
            "confidence": out["entities"]["resolved"][0]["confidence"],
            "conflicts": out["entities"]["conflicts"],
        }
    return {
        "how": "new",
        "id": out["entities"]["new"][0]["entity_id"],
        "conflicts": out["entities"]["conflicts"],
    }


async def test_exact_then_alias_then_semantic(sclient: Client) -> None:
    first = await _mention(sclient, "Webhook Gateway", "service", ["WHG"])
    assert first["how"] == "new"
    exact = await _mention(sclient, "webhook-gateway", "service")
    assert (exact["how"], exact["id"], exact["confidence"]) == ("exact", first["id"], 1.0)
    alias = await _mention(sclient, "whg", "service")
    assert (alias["how"], alias["id"], alias["confidence"]) == ("alias", first["id"], 0.95)
    semantic = await _mention(sclient, "Webhooks Gateway", "service")
    assert (semantic["how"], semantic["id"]) == ("semantic", first["id"]) and semantic["confidence"] > 0.92
    # the learned name is an alias from now on
    ents = await call(sclient, "memory_query", "entities", {"name": "Webhooks Gateway"})
    assert ents["matched_by"] == "name_or_alias" and ents["items"][0]["id"] == first["id"]


async def test_near_misses_fragment_instead_of_colliding(sclient: Client) -> None:
    v1 = await _mention(sclient, "Auth Service v1", "service")
    v2 = await _mention(sclient, "Auth Service v2", "service")  # cosine ~0.97, but different numbers
    assert v2["how"] == "new" and v2["id"] != v1["id"]
    assert v2["conflicts"] and v2["conflicts"][0]["reason"] == "names carry different numbers"
    billing = await _mention(sclient, "Billing API", "service")
    ui = await _mention(sclient, "Billing UI", "service")
    assert ui["how"] == "new" and ui["id"] != billing["id"]
    # same name, different type: two entities
    tech = await _mention(sclient, "Mercury", "technology")
    person = await _mention(sclient, "Mercury", "person")
    assert person["how"] == "new" and person["id"] != tech["id"]


async def test_an_alias_shared_by_two_entities_is_a_recorded_conflict(sclient: Client) -> None:
    a = await _mention(sclient, "Atlas Search", "service", ["atlas"])
    b = await _mention(sclient, "Atlas Billing", "service", ["atlas"])
    assert b["how"] == "new" and b["id"] != a["id"]  # a shared alias alone is no evidence
    third = await _mention(sclient, "atlas", "service")
    assert third["how"] == "new" and third["conflicts"][0]["pass"] == "alias"
    assert set(third["conflicts"][0]["entity_ids"]) >= {a["id"]}


async def test_merge_entities_moves_facts_and_aliases_with_an_audit_trail(client: Client) -> None:
    ep = await episode(client, "PG hosts the ledger. Postgres is version 16.")
    out = await extract(
        client,
        ep,
        entities=[{"name": "PostgreSQL", "type": "technology"}, {"name": "Ledger", "type": "project"}],
    )
    pg = out["entities"]["new"][0]["entity_id"]
    ep2 = await episode(client, "pgsql stores the ledger.")
    out2 = await extract(
        client,
        ep2,
        entities=[
            {"name": "pgsql", "type": "technology", "aliases": ["PG"]},
            {"name": "Ledger", "type": "project"},
        ],
        facts=[{"subject": "pgsql", "predicate": "hosts", "object": "Ledger", "segment_ids": ["seg-1"]}],
    )
    dup = out2["entities"]["new"][0]["entity_id"]
    assert dup != pg
    dry = await call(
        client,
        "memory_maintain",
        "merge_entities",
        {"source_entity_id": dup, "target_entity_id": pg, "reason": "same database"},
    )
    assert dry["status"] == "dry_run" and dry["counts"]["facts_moved"] == 1
    done = await call(
        client,
        "memory_maintain",
        "merge_entities",
        {"source_entity_id": dup, "target_entity_id": pg, "reason": "same database"},
        {"apply": True},
    )
    assert done["status"] == "applied" and set(done["aliases_added"]) == {"pgsql", "PG"}
    facts = await call(client, "memory_query", "facts", {"subject": pg, "predicate": "hosts"})
    assert facts["count"] == 1 and facts["items"][0]["subject"]["name"] == "PostgreSQL"
    merged = await call(client, "memory_query", "entities", {"id": dup})
    assert merged["items"][0]["status"] == "merged" and merged["items"][0]["merged_into"] == pg
    # the absorbed name now resolves to the survivor
    ep3 = await episode(client, "pgsql again.")
    again = await extract(client, ep3, entities=[{"name": "pgsql", "type": "technology"}])
    assert again["entities"]["resolved"][0]["entity_id"] == pg
    audit = await call(client, "memory_maintain", "audit", {"object_id": pg})
    assert "merge_entities" in [e["action"] for e in audit["events"]]
    with pytest.raises(ToolFailed) as info:
        await call(
            client,
            "memory_maintain",
            "merge_entities",
            {"source_entity_id": dup, "target_entity_id": pg, "reason": "again"},
            {"apply": True},
        )
    assert info.value.code == "memory_conflict"
