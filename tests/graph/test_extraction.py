"""memory_remember mode extraction and the graph read modes, through the MCP client, both backends."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from tests.graph.conftest import episode, extract
from tests.helpers import ToolFailed, call

pytestmark = pytest.mark.anyio

PORTAL = {"name": "Customer Portal", "type": "project", "aliases": ["portal", "CP"]}
SK = {"name": "Semantic Kernel", "type": "technology"}


async def test_extraction_writes_entities_facts_and_a_trace(client: Client) -> None:
    ep = await episode(
        client,
        "Customer Portal uses Semantic Kernel since March.",
        "It listens on port 8443.",
        times=["2026-03-01T10:00:00+00:00", "2026-03-01T10:05:00+00:00"],
    )
    out = await extract(
        client,
        ep,
        entities=[PORTAL, SK],
        facts=[
            {
                "subject": "Customer Portal",
                "predicate": "uses",
                "object": "Semantic Kernel",
                "segment_ids": ["seg-1"],
            },
            {
                "subject": "CP",
                "predicate": "Listens On",
                "value": 8443,
                "segment_ids": ["seg-2"],
                "salience": 0.9,
            },
        ],
    )
    assert out["status"] == "applied" and len(out["entities"]["new"]) == 2
    assert out["facts"]["created"] == 2 and out["custom_predicates"] == ["listens_on"]
    ents = await call(client, "memory_query", "entities", {"name": "portal"})
    assert ents["matched_by"] == "name_or_alias" and ents["count"] == 1
    portal = ents["items"][0]
    assert (
        portal["name"] == "Customer Portal"
        and portal["type"] == "project"
        and set(portal["aliases"]) == {"portal", "CP"}
    )
    by_pred = {f["predicate"]: f for f in portal["facts"]}
    assert by_pred["uses"]["object"]["name"] == "Semantic Kernel"
    # valid_from defaults to when the cited message was said, not when it was ingested
    assert (
        by_pred["uses"]["valid_from"] == "2026-03-01T10:00:00+00:00" and "valid_until" not in by_pred["uses"]
    )  # open: compact detail leaves nulls out
    assert by_pred["listens_on"]["value"] == 8443 and by_pred["listens_on"]["salience"] == 0.9
    assert by_pred["uses"]["evidence_status"] == "extracted" and by_pred["uses"]["status"] == "active"
    trace = (await call(client, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
    assert trace["kind"] == "extraction" and trace["episode_id"] == ep and trace["extractor"] == "agent"
    assert {e["name"] for e in trace["entities"]["new"]} == {"Customer Portal", "Semantic Kernel"}
    assert trace["evidence_strengths"] == {"extracted": 2} and trace["custom_predicates"] == ["listens_on"]
    assert "latency_ms" in trace and trace["errors"] == []
    # the episode id finds its latest trace too, with the job's state
    by_episode = await call(client, "memory_query", "trace", {"id": ep})
    assert by_episode["trace"]["id"] == out["trace_id"] and by_episode["job"]["status"] == "done"


async def test_ingest_queues_the_episode_and_keeps_specific_facts(client: Client) -> None:
    ep = await episode(
        client,
        "Moved the db to 10.0.3.17 port 5432 with Postgres 16.2; run `kubectl rollout restart deploy/api -n prod`.",
    )
    report = await call(client, "memory_maintain", "report", {}, {"detail": "full"})
    assert report["knowledge_graph"]["extraction_queue"] == {
        "pending": 1,
        "running": 0,
        "retrying": 0,
        "failed": 0,
        "done": 0,
    }
    compact = await call(client, "memory_maintain", "report", {})  # zero counts left out
    assert compact["knowledge_graph"]["extraction_queue"] == {"pending": 1}
    page = await call(client, "memory_query", "page", {"id": ep}, {"detail": "full"})
    facts = {(f["kind"], f["value"]) for f in page["object"]["metadata"]["specific_facts"]}
    assert {
        ("ip", "10.0.3.17"),
        ("port", "5432"),
        ("version", "16.2"),
        ("cli", "kubectl rollout restart deploy/api -n prod"),
    } <= facts
    hits = await call(client, "memory_query", "search", {"query": "10.0.3.17"})
    assert ep in [i["id"] for i in hits["items"]]


async def test_a_new_object_supersedes_and_history_survives(client: Client) -> None:
    ep1 = await episode(client, "Customer Portal uses Semantic Kernel.", times=["2026-03-01T00:00:00+00:00"])
    await extract(
        client,
        ep1,
        entities=[PORTAL, SK],
        facts=[
            {
                "subject": "Customer Portal",
                "predicate": "uses",
                "object": "Semantic Kernel",
                "segment_ids": ["seg-1"],
            }
        ],
    )
    ep2 = await episode(
        client, "We moved the customer portal to LangChain.", times=["2026-03-10T00:00:00+00:00"]
    )
    out = await extract(
        client,
        ep2,
        entities=[
            {"name": "customer-portal", "type": "project"},
            {"name": "LangChain", "type": "technology"},
        ],
        facts=[
            {
                "subject": "customer-portal",
                "predicate": "uses",
                "object": "LangChain",
                "segment_ids": ["seg-1"],
            }
        ],
    )
    assert out["entities"]["resolved"][0]["pass"] == "exact" and len(out["superseded_fact_ids"]) == 1
    current = await call(client, "memory_query", "facts", {"subject": "Customer Portal", "predicate": "uses"})
    assert [f["object"]["name"] for f in current["items"]] == ["LangChain"]
    history = await call(
        client,
        "memory_query",
        "facts",
        {"subject": "Customer Portal", "predicate": "uses", "include_superseded": True},
    )
    old = next(f for f in history["items"] if f["object"]["name"] == "Semantic Kernel")
    assert old["status"] == "superseded" and old["valid_until"] == "2026-03-10T00:00:00+00:00"
    assert old["superseded_by"] == current["items"][0]["id"]
    then = await call(
        client,
        "memory_query",
        "facts",
        {"subject": "Customer Portal", "predicate": "uses", "as_of": "2026-03-05T00:00:00Z"},
    )
    assert [f["object"]["name"] for f in then["items"]] == ["Semantic Kernel"]
    audit = await call(client, "memory_maintain", "audit", {"object_id": old["id"]})
    assert "status_change" in [e["action"] for e in audit["events"]]


async def test_many_valued_predicates_add_instead_of_superseding(client: Client) -> None:
    ep = await episode(client, "Billing Service depends on Ledger DB and on Kafka.")
    out = await extract(
        client,
        ep,
        entities=[
            {"name": "Billing Service", "type": "service"},
            {"name": "Ledger DB", "type": "service"},
            {"name": "Kafka", "type": "technology"},
        ],
        facts=[
            {
                "subject": "Billing Service",
                "predicate": "depends_on",
                "object": "Ledger DB",
                "segment_ids": ["seg-1"],
            },
            {
                "subject": "Billing Service",
                "predicate": "depends_on",
                "object": "Kafka",
                "segment_ids": ["seg-1"],
            },
        ],
    )
    assert out["facts"]["created"] == 2 and out["superseded_fact_ids"] == []
    facts = await call(
        client, "memory_query", "facts", {"subject": "Billing Service", "predicate": "depends_on"}
    )
    assert {f["object"]["name"] for f in facts["items"]} == {"Ledger DB", "Kafka"}


async def test_an_older_statement_arriving_late_is_history(client: Client) -> None:
    ep_new = await episode(
        client, "Orders API is deployed to Frankfurt.", times=["2026-05-01T00:00:00+00:00"]
    )
    ents = [
        {"name": "Orders API", "type": "service"},
        {"name": "Frankfurt", "type": "environment"},
        {"name": "Dublin", "type": "environment"},
    ]
    await extract(
        client,
        ep_new,
        entities=ents[:2],
        facts=[
            {
                "subject": "Orders API",
                "predicate": "deployed_to",
                "object": "Frankfurt",
                "segment_ids": ["seg-1"],
            }
        ],
    )
    ep_old = await episode(client, "Orders API is deployed to Dublin.", times=["2026-01-01T00:00:00+00:00"])
    out = await extract(
        client,
        ep_old,
        entities=[ents[0], ents[2]],
        facts=[
            {
                "subject": "Orders API",
                "predicate": "deployed_to",
                "object": "Dublin",
                "segment_ids": ["seg-1"],
            }
        ],
    )
    assert out["facts"]["history"] == 1 and out["superseded_fact_ids"] == []
    current = await call(
        client, "memory_query", "facts", {"subject": "Orders API", "predicate": "deployed_to"}
    )
    assert [f["object"]["name"] for f in current["items"]] == ["Frankfurt"]
    then = await call(
        client,
        "memory_query",
        "facts",
        {"subject": "Orders API", "predicate": "deployed_to", "as_of": "2026-02-01T00:00:00Z"},
    )
    assert [f["object"]["name"] for f in then["items"]] == ["Dublin"]
    assert then["items"][0]["valid_until"] == "2026-05-01T00:00:00+00:00"


async def test_the_same_fact_again_is_reinforced_not_duplicated(client: Client) -> None:
    ents = [{"name": "Search Service", "type": "service"}, {"name": "OpenSearch", "type": "technology"}]
    fact = {
        "subject": "Search Service",
        "predicate": "uses",
        "object": "OpenSearch",
        "segment_ids": ["seg-1"],
    }
    ep1 = await episode(client, "Search Service uses OpenSearch.")
    first = await extract(client, ep1, entities=ents, facts=[fact])
    ep2 = await episode(client, "Reminder: Search Service uses OpenSearch.")
    second = await extract(client, ep2, entities=ents, facts=[fact])
    assert second["facts"]["reinforced"] == 1 and second["facts"]["created"] == 0
    facts = await call(client, "memory_query", "facts", {"subject": "Search Service"})
    assert facts["count"] == 1 and facts["items"][0]["id"] == first["fact_ids"][0]
    assert {r["source_id"] for r in facts["items"][0]["evidence_refs"]} == {ep1, ep2}


async def test_lower_trust_extraction_never_supersedes_a_user_assertion(client: Client) -> None:
    ents = [
        {"name": "Payments Gateway", "type": "service"},
        {"name": "Stripe", "type": "organization"},
        {"name": "Adyen", "type": "organization"},
    ]
    ep1 = await episode(client, "The Payments Gateway uses Stripe.", times=["2026-01-01T00:00:00+00:00"])
    user = await extract(
        client,
        ep1,
        entities=ents[:2],
        memory_source="user_declared",
        facts=[
            {"subject": "Payments Gateway", "predicate": "uses", "object": "Stripe", "segment_ids": ["seg-1"]}
        ],
    )
    ep2 = await episode(
        client, "I think Payments Gateway uses Adyen now.", times=["2026-02-01T00:00:00+00:00"]
    )
    agent = await extract(
        client,
        ep2,
        entities=[ents[0], ents[2]],
        facts=[
            {"subject": "Payments Gateway", "predicate": "uses", "object": "Adyen", "segment_ids": ["seg-1"]}
        ],
    )
    assert agent["facts"]["contested"] == 1 and agent["superseded_fact_ids"] == []
    facts = await call(client, "memory_query", "facts", {"subject": "Payments Gateway", "predicate": "uses"})
    by_obj = {f["object"]["name"]: f for f in facts["items"]}
    assert by_obj["Stripe"]["status"] == "active" and by_obj["Stripe"]["evidence_status"] == "user_asserted"
    assert by_obj["Stripe"]["id"] == user["fact_ids"][0]
    assert by_obj["Adyen"]["status"] == "contested" and by_obj["Adyen"]["blocked_by"] == [user["fact_ids"][0]]
    # the user changing it supersedes as usual
    ep3 = await episode(client, "We switched Payments Gateway to Adyen.", times=["2026-03-01T00:00:00+00:00"])
    again = await extract(
        client,
        ep3,
        entities=[ents[0], ents[2]],
        memory_source="user_declared",
        facts=[
            {"subject": "Payments Gateway", "predicate": "uses", "object": "Adyen", "segment_ids": ["seg-1"]}
        ],
    )
    assert user["fact_ids"][0] in again["superseded_fact_ids"]


async def test_bad_extractions_write_nothing(client: Client) -> None:
    ep = await episode(client, "Atlas uses Redis.")
    before = await call(client, "memory_maintain", "structure", {})
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {"entities": [{"name": f"Service {i}", "type": "service"} for i in range(11)]},
            "memory_validation_error",
        ),
        ({"entities": [{"name": "Atlas", "type": "planet"}]}, "memory_validation_error"),
        (
            {
                "entities": [{"name": "Atlas", "type": "project"}],
                "facts": [
                    {"subject": "Nobody Known", "predicate": "uses", "value": "x", "segment_ids": ["seg-1"]}
                ],
            },
            "memory_validation_error",
        ),
        (
            {
                "entities": [{"name": "Atlas", "type": "project"}],
                "facts": [
                    {"subject": "Atlas", "predicate": "uses", "value": "Redis", "segment_ids": ["seg-99"]}
                ],
            },
            "memory_evidence_error",
        ),
        (
            {
                "entities": [{"name": "Atlas", "type": "project"}],
                "facts": [{"subject": "Atlas", "predicate": "uses", "segment_ids": ["seg-1"]}],
            },
            "memory_validation_error",
        ),
    ]
    for body, code in cases:
        with pytest.raises(ToolFailed) as info:
            await extract(client, ep, **body)
        assert info.value.code == code, (body, info.value.text)
    with pytest.raises(ToolFailed) as missing:
        await extract(client, "src:nope", entities=[{"name": "Atlas", "type": "project"}])
    assert missing.value.code == "memory_not_found"
    after = await call(client, "memory_maintain", "structure", {})
    assert after["counts"]["objects"] == before["counts"]["objects"]
    assert after["last_patch_at"] == before["last_patch_at"]


async def test_generic_concepts_are_refused_and_reported(client: Client) -> None:
    ep = await episode(
        client, "Authentication for the Webhook Gateway uses the Webhook Signature Validation Pattern."
    )
    out = await extract(
        client,
        ep,
        entities=[
            {"name": "authentication", "type": "pattern"},
            {"name": "Database", "type": "technology"},
            {"name": "event delivery system", "type": "service"},
            {"name": "Webhook Gateway", "type": "service"},
            {"name": "Webhook Signature Validation Pattern", "type": "pattern"},
            {"name": "auth service v2", "type": "service"},
        ],
    )
    assert {r["name"] for r in out["entities"]["refused"]} == {
        "authentication",
        "Database",
        "event delivery system",
    }
    assert all(r["reason"] == "generic_concept" for r in out["entities"]["refused"])
    assert {n["name"] for n in out["entities"]["new"]} == {
        "Webhook Gateway",
        "Webhook Signature Validation Pattern",
        "auth service v2",
    }


async def test_custom_predicates_are_counted_for_review(client: Client) -> None:
    ep = await episode(client, "Atlas is written in Go. Orion is written in Rust.")
    await extract(
        client,
        ep,
        entities=[{"name": "Atlas", "type": "project"}, {"name": "Orion", "type": "project"}],
        facts=[
            {"subject": "Atlas", "predicate": "written_in", "value": "Go", "segment_ids": ["seg-1"]},
            {"subject": "Orion", "predicate": "written in", "value": "Rust", "segment_ids": ["seg-1"]},
            {"subject": "Orion", "predicate": "uses", "value": "Tokio", "segment_ids": ["seg-1"]},
        ],
    )
    report = await call(client, "memory_maintain", "report", {})
    review = report["knowledge_graph"]["predicate_review"]
    assert review == [
        {
            "predicate": "written_in",
            "occurrences": 2,
            "suggested_action": "promote_to_canonical_or_map_to_existing",
        }
    ]
    assert report["counts"]["custom_predicates"] == 1 and report["counts"]["entities"] == 2


async def test_namespaces_do_not_share_entities(memory: Memory, make_settings: Any) -> None:
    from mcp import Client

    from memory_substrate.mcp.server import build_server

    other = memory.for_namespace(memory.namespace + "-b")
    async with Client(build_server(memory)) as a, Client(build_server(other)) as b:
        ep = await episode(a, "APIM fronts the Orders API.")
        made = await extract(a, ep, entities=[{"name": "APIM", "type": "service"}])
        ent_id = made["entities"]["new"][0]["entity_id"]
        assert (await call(b, "memory_query", "entities", {"name": "APIM"}))["count"] == 0
        with pytest.raises(ToolFailed) as info:
            await call(b, "memory_query", "entities", {"id": ent_id})
        assert info.value.code == "memory_not_found"
        ep_b = await episode(b, "APIM is our gateway.")
        with pytest.raises(ToolFailed):  # A's entity id is unknown in B
            await extract(
                b,
                ep_b,
                facts=[{"subject": ent_id, "predicate": "uses", "value": "x", "segment_ids": ["seg-1"]}],
            )
        mine = await extract(b, ep_b, entities=[{"name": "APIM", "type": "service"}])
        assert mine["entities"]["new"][0]["entity_id"] != ent_id  # two rows, one per namespace
