"""Spec 002 conformance: all 18 tools through the SDK's in-process client, on both backends."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.graphmem.conftest import err, ok

pytestmark = pytest.mark.anyio

SPEC_PARAMS: dict[str, tuple[set[str], dict[str, Any], set[str]]] = {
    "create_node": (
        {"text"},
        {"node_type": "Fact", "source": "mcp", "auto_link": True},
        {
            "text",
            "node_type",
            "owner_id",
            "source",
            "metadata",
            "status",
            "ttl_days",
            "expires_at",
            "auto_link",
            "semantic_threshold",
            "links",
        },
    ),
    "get_node": ({"node_id"}, {}, {"node_id", "owner_id"}),
    "update_node": (
        {"node_id"},
        {"versioning": False},
        {
            "node_id",
            "owner_id",
            "text",
            "source",
            "metadata",
            "status",
            "ttl_days",
            "expires_at",
            "entity_type",
            "versioning",
        },
    ),
    "delete_node": ({"node_id"}, {}, {"node_id", "owner_id"}),
    "get_node_change_history": ({"node_id"}, {}, {"node_id", "owner_id"}),
    "search": (
        {"query"},
        {"include_outdated": False},
        {"query", "owner_id", "limit", "node_types", "status", "similarity_threshold", "include_outdated"},
    ),
    "find_similar": (
        {"fact_id"},
        {"limit": 10, "include_relations": True},
        {"fact_id", "owner_id", "threshold", "limit", "include_relations"},
    ),
    "mark_outdated": ({"fact_id"}, {}, {"fact_id", "owner_id", "reason"}),
    "create_triplet": (
        {"subject", "predicate", "object_value"},
        {},
        {"subject", "predicate", "object_value", "owner_id", "metadata", "fact_id"},
    ),
    "search_triplets": (set(), {"limit": 100}, {"subject", "predicate", "object_value", "owner_id", "limit"}),
    "create_relation": (
        {"from_id", "to_id", "relation_type"},
        {},
        {"from_id", "to_id", "relation_type", "owner_id", "properties"},
    ),
    "delete_relation": ({"from_id", "to_id"}, {}, {"from_id", "to_id", "owner_id", "relation_type"}),
    # spec 002 lists node_id under Required: a call without it is refused naming it (an empty
    # string, which the spec allows, is answered not found).
    "get_context": ({"node_id"}, {"depth": 1}, {"node_id", "owner_id", "depth", "max_nodes"}),
    "get_trace": ({"from_id", "to_id"}, {"max_paths": 5}, {"from_id", "to_id", "owner_id", "max_paths"}),
    "create_summary_fact": ({"fact_ids", "summary_text"}, {}, {"fact_ids", "summary_text", "owner_id"}),
    "test_connection": (set(), {}, set()),
    "get_stats": (set(), {}, {"owner_id"}),
    "health_check": (set(), {}, set()),
}


async def test_graph_toolset_lists_the_18_tools_with_the_spec_parameters(gmem: Memory) -> None:
    async with Client(build_server(gmem, "graph")) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == set(SPEC_PARAMS)
    for name, (required, defaults, params) in SPEC_PARAMS.items():
        schema = tools[name].input_schema
        assert set(schema.get("properties", {})) == params, name
        assert set(schema.get("required", [])) == required, name
        for key, value in defaults.items():
            assert schema["properties"][key]["default"] == value, (name, key)
    assert tools["get_node"].annotations is not None
    assert tools["get_node"].annotations.read_only_hint is True
    assert tools["delete_node"].annotations is not None
    assert tools["delete_node"].annotations.destructive_hint is True


async def test_all_toolset_serves_both_contracts(gmem: Memory) -> None:
    async with Client(build_server(gmem, "all")) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert names == set(SPEC_PARAMS) | {
            "memory_ingest",
            "memory_query",
            "memory_remember",
            "memory_maintain",
        }
        assert len((await c.list_resources()).resources) == 3
    with pytest.raises(ValueError, match="toolset"):
        build_server(gmem, "everything")


async def test_nodes_versions_history_and_delete(gmem: Memory) -> None:
    async with Client(build_server(gmem, "graph")) as c:
        fact = (
            await ok(
                c, "create_node", text="The billing service runs on Kafka", metadata={"team": "payments"}
            )
        )["node"]
        assert fact["node_type"] == "Fact" and fact["status"] == "active" and fact["source"] == "mcp"
        assert fact["metadata"] == {"team": "payments"} and isinstance(fact["created_at"], int)
        ent = (await ok(c, "create_node", text="Kafka", node_type="Entity", metadata={"type": "TECHNOLOGY"}))[
            "node"
        ]
        assert ent["node_type"] == "Entity" and ent["type"] == "TECHNOLOGY" and ent["kind"] == "technology"
        again = await ok(c, "create_node", text="kafka", node_type="Entity", metadata={"type": "TECHNOLOGY"})
        assert again["existing"] is True and again["node"]["id"] == ent["id"]
        linked = await ok(
            c,
            "create_node",
            text="Kafka retention is seven days",
            auto_link=False,
            links=[{"node_id": ent["id"], "node_type": "Entity", "relation_type": "MENTIONS_ENTITY"}],
        )
        assert [e["relation_type"] for e in linked["edges"]] == ["MENTIONS_ENTITY"]
        got = await ok(c, "get_node", node_id=fact["id"])
        assert got["node"]["text"] == "The billing service runs on Kafka"

        up = await ok(
            c, "update_node", node_id=fact["id"], text="The billing service runs on Pulsar", versioning=True
        )
        assert up["node"]["text"] == "The billing service runs on Pulsar" and up["node"]["version"] == 2
        await ok(c, "update_node", node_id=fact["id"], metadata={"team": "core"}, status="archived")
        hist = await ok(c, "get_node_change_history", node_id=fact["id"])
        actions = [v["action"] for v in hist["versions"]]
        assert actions == ["update", "version", "create"]
        assert hist["versions"][0]["changes"]["metadata"] == {
            "from": {"team": "payments"},
            "to": {"team": "core"},
        }
        assert hist["versions"][0]["changes"]["status"] == {"from": "active", "to": "archived"}
        assert hist["versions"][1]["previous"]["text"] == "The billing service runs on Kafka"
        renamed = await ok(c, "update_node", node_id=ent["id"], text="Apache Kafka", entity_type="SERVICE")
        assert renamed["node"]["aliases"] == ["Kafka"] and renamed["node"]["kind"] == "service"

        outdated = await ok(c, "mark_outdated", fact_id=linked["node"]["id"], reason="retention changed")
        assert outdated["node"]["status"] == "outdated" and outdated["node"]["lifecycle_status"] == "stale"

        gone = await ok(c, "delete_node", node_id=ent["id"])
        assert gone["deleted_ids"] == [ent["id"]]
        await err(c, "get_node", "memory_not_found", node_id=ent["id"])
        after = await ok(c, "get_node_change_history", node_id=ent["id"])
        assert after["deleted"] is True and after["versions"][0]["action"] == "delete"
        assert after["versions"][0]["previous"]["name"] == "Apache Kafka"
    with gmem.store.read(gmem.namespace) as s:  # derived rows went with it
        assert s.relations_of([ent["id"]]) == []
        assert s.find_keys([f"ent:any:{'apache kafka'}"]) == []
        assert ent["id"] not in dict(s.vector_owners("object"))


async def test_search_similar_summary_and_stats(gmem: Memory) -> None:
    async with Client(build_server(gmem, "graph")) as c:
        a = (await ok(c, "create_node", text="Kafka is our event bus for billing"))["node"]
        b = await ok(c, "create_node", text="Kafka is the event bus used by billing", semantic_threshold=0.8)
        assert [(e["relation_type"], e["to_id"]) for e in b["edges"]] == [("SIMILAR_TO", a["id"])]
        c_node = (await ok(c, "create_node", text="Lunch is served at noon in the cafeteria"))["node"]
        await ok(c, "create_node", text="Kafka", node_type="Entity")

        found = await ok(c, "search", query="event bus billing")
        assert {r["id"] for r in found["facts"][:2]} == {
            a["id"],
            b["node"]["id"],
        }  # the unrelated one ranks below
        assert c_node["id"] not in {r["id"] for r in found["results"][:2]}
        assert all(r["node_type"] == "Fact" for r in found["facts"])
        ents = await ok(c, "search", query="Kafka", node_types=["Entity"])
        assert [r["name"] for r in ents["entities"]] == ["Kafka"] and ents["facts"] == []
        strict = await ok(c, "search", query="event bus billing", similarity_threshold=0.99)
        assert strict["results"] == []
        assert (await ok(c, "search", query="event bus billing", limit=1))["count"] == 1

        sim = await ok(c, "find_similar", fact_id=a["id"], threshold=0.5)
        assert [r["id"] for r in sim["results"]] == [b["node"]["id"]]
        assert sim["results"][0]["relations"][0]["relation_type"] == "SIMILAR_TO"

        await ok(c, "mark_outdated", fact_id=a["id"], reason="moved to Pulsar")
        live = await ok(c, "search", query="event bus billing")
        assert a["id"] not in {r["id"] for r in live["results"]}
        both = await ok(c, "search", query="event bus billing", include_outdated=True)
        assert a["id"] in {r["id"] for r in both["results"]}
        only = await ok(c, "search", query="event bus billing", status="outdated")
        assert [r["id"] for r in only["results"]] == [a["id"]]

        summary = await ok(
            c,
            "create_summary_fact",
            fact_ids=[a["id"], b["node"]["id"]],
            summary_text="Billing events flow through Kafka",
        )
        assert sorted(e["to_id"] for e in summary["edges"]) == sorted([a["id"], b["node"]["id"]])
        assert {e["relation_type"] for e in summary["edges"]} == {"SUMMARIZES"}

        stats = (await ok(c, "get_stats"))["stats"]
        assert stats["facts"] == 4 and stats["entities"] == 1
        assert stats["relations_by_type"]["SUMMARIZES"] == 2 and stats["facts_by_status"]["outdated"] == 1
        conn = await ok(c, "test_connection")
        assert gmem.store.backend in conn["message"]
        health = await ok(c, "health_check")
        # No FalkorDB is configured here: the spec's key says so instead of echoing the store.
        assert health["falkordb"] is False and health["details"]["falkordb"].startswith("not configured")
        assert health["store"] is True and health["embeddings"] is True and health["vector_index"] is True
        assert health["cache"]["search"]["maxsize"] == 100 and health["cache"]["search"]["ttl"] == 60
        assert health["cache"]["embeddings"]["size"] > 0 and health["cache"]["embeddings"]["maxsize"] == 1000


async def test_triplets_supersede_and_edges_context_trace(gmem: Memory) -> None:
    async with Client(build_server(gmem, "graph")) as c:
        src = (await ok(c, "create_node", text="Alice joined Acme in 2024", auto_link=False))["node"]
        t1 = (
            await ok(
                c,
                "create_triplet",
                subject="Alice",
                predicate="WORKS_AT",
                object_value="Acme",
                fact_id=src["id"],
            )
        )["triplet"]
        # Validated and kept as create_relation keeps a relation_type; compared case-insensitively.
        assert (t1["subject"], t1["predicate"], t1["object_value"], t1["fact_id"]) == (
            "Alice",
            "WORKS_AT",
            "Acme",
            src["id"],
        )
        dup = await ok(c, "create_triplet", subject="Alice", predicate="works_at", object_value="Acme")
        assert dup["existing"] is True and dup["triplet"]["id"] == t1["id"]
        t2 = (await ok(c, "create_triplet", subject="Alice", predicate="works_at", object_value="Globex"))[
            "triplet"
        ]
        assert t2["superseded"] == [t1["id"]] and t2["subject_id"] == t1["subject_id"]
        current = await ok(c, "search_triplets", subject="Alice")
        assert [t["object_value"] for t in current["triplets"]] == ["Globex"]
        assert (await ok(c, "search_triplets", object_value="Acme"))["triplets"] == []
        assert [t["id"] for t in (await ok(c, "search_triplets", predicate="WORKS_AT"))["triplets"]] == [
            t2["id"]
        ]
        old = await ok(c, "get_node", node_id=t1["id"])
        assert old["node"]["status"] == "outdated" and old["node"]["lifecycle_status"] == "superseded"

        # A chain: fact -> Alice -(works_at)-> Globex; plus fact2 RELATED_TO fact.
        alice, globex = t2["subject_id"], t2["object_id"]
        f2 = (await ok(c, "create_node", text="Globex is based in Berlin", auto_link=False))["node"]
        rel = await ok(
            c,
            "create_relation",
            from_id=f2["id"],
            to_id=globex,
            relation_type="DESCRIBES",
            properties={"w": 1},
        )
        assert rel["relation_type"] == "DESCRIBES" and rel["relation"]["metadata"] == {"w": 1}
        ctx = await ok(c, "get_context", node_id=alice, depth=1)
        ids = {n["id"] for n in ctx["nodes"]}
        assert alice in ids and globex in ids and f2["id"] not in ids
        deep = await ok(c, "get_context", node_id=alice, depth=2)
        assert f2["id"] in {n["id"] for n in deep["nodes"]}
        assert any(e["relation_type"] == "DESCRIBES" for e in deep["edges"])
        small = await ok(c, "get_context", node_id=alice, depth=2, max_nodes=2)
        assert len(small["nodes"]) == 2 and small["truncated"] is True

        trace = await ok(c, "get_trace", from_id=src["id"], to_id=f2["id"])
        assert trace["paths"] and trace["paths"][0]["nodes"][0]["id"] == src["id"]
        assert trace["paths"][0]["nodes"][-1]["id"] == f2["id"]
        lengths = [p["length"] for p in trace["paths"]]
        assert lengths == sorted(lengths) and lengths[0] == 3
        assert len((await ok(c, "get_trace", from_id=src["id"], to_id=f2["id"], max_paths=1))["paths"]) == 1

        removed = await ok(c, "delete_relation", from_id=f2["id"], to_id=globex)
        assert removed["deleted"] == 1
        assert (await ok(c, "get_trace", from_id=src["id"], to_id=f2["id"]))["paths"] == []
        typed = await ok(c, "delete_relation", from_id=alice, to_id=globex, relation_type="works_at")
        assert typed["deleted"] == 0 and typed["kept_derived"][0]["derivation"] == "structured_payload"

        gone = await ok(c, "delete_node", node_id=alice)  # an entity takes its triplets with it
        assert set(gone["deleted_ids"]) == {alice, t1["id"], t2["id"]}
        assert (await ok(c, "search_triplets", subject="Globex"))["triplets"] == []


async def test_tools_list_of_all_toolsets_fits_the_budget(gmem: Memory) -> None:
    async with Client(build_server(gmem, "all")) as c:
        listing = await c.list_tools()
    assert len(listing.model_dump_json(by_alias=True, exclude_none=True)) <= 16_000


async def test_a_created_entity_and_an_extracted_one_of_the_same_name_are_one(gmem: Memory) -> None:
    """One entity model, one dedup rule: create_node and extraction resolve names through the
    knowledge graph's EntityResolver, in either order."""
    from tests.graph.conftest import episode, extract

    async with Client(build_server(gmem, "all")) as c:
        ada = (
            await ok(c, "create_node", text="Ada Lovelace", node_type="Entity", metadata={"type": "PERSON"})
        )["node"]
        ep = await episode(c, "Ada Lovelace wrote the first program.")
        out = await extract(
            c,
            ep,
            entities=[
                {"name": "Ada Lovelace", "type": "person"},
                {"name": "Analytical Engine", "type": "technology", "aliases": ["AE"]},
            ],
        )
        assert [e["entity_id"] for e in out["entities"]["resolved"]] == [ada["id"]]
        engine_id = out["entities"]["new"][0]["entity_id"]
        again = await ok(
            c, "create_node", text="analytical engine", node_type="Entity", metadata={"type": "technology"}
        )
        assert again["existing"] is True and again["node"]["id"] == engine_id
        # an alias the extraction recorded names the same entity here too
        by_alias = await ok(c, "create_node", text="AE", node_type="Entity", metadata={"type": "technology"})
        assert by_alias["existing"] is True and by_alias["node"]["id"] == engine_id


async def test_triplets_and_extraction_name_entities_by_one_rule(gmem: Memory) -> None:
    """create_triplet and an extraction's facts refer to an entity by a bare name through one rule
    (graph/resolve.py ``EntityResolver.named``): a name one of them wrote is the same entity in the
    other, and a name several entities answer to means the one named exactly so."""
    from tests.graph.conftest import episode, extract
    from tests.helpers import call

    async with Client(build_server(gmem, "all")) as c:
        grace = (
            await ok(c, "create_triplet", subject="Grace Hopper", predicate="works_at", object_value="Navy")
        )["triplet"]
        ep = await episode(c, "Grace Hopper wrote the FLOW-MATIC compiler.")
        out = await extract(
            c,
            ep,
            entities=[
                {"name": "FLOW-MATIC", "type": "technology", "aliases": ["Business Language version 0"]}
            ],
            facts=[
                {
                    "subject": "Grace Hopper",
                    "predicate": "created",
                    "object": "FLOW-MATIC",
                    "segment_ids": ["seg-1"],
                }
            ],
        )
        a0 = out["entities"]["new"][0]["entity_id"]
        about = (await ok(c, "search_triplets", subject=grace["subject_id"]))["triplets"]
        assert {(t["predicate"], t["object_id"]) for t in about} == {
            ("works_at", grace["object_id"]),
            ("created", a0),
        }
        runs = (
            await ok(
                c,
                "create_triplet",
                subject="Business Language version 0",
                predicate="runs_on",
                object_value="UNIVAC",
            )
        )["triplet"]
        assert runs["subject_id"] == a0  # the alias the extraction recorded

        # "Mercury" names a project and is an alias of a service: the exact name wins, in both.
        ep2 = await episode(
            c, "Project Mercury ships next month. The Quicksilver service was once called Mercury."
        )
        out = await extract(
            c,
            ep2,
            entities=[
                {"name": "Mercury", "type": "project"},
                {"name": "Quicksilver", "type": "service", "aliases": ["Mercury"]},
            ],
        )
        project = next(e["entity_id"] for e in out["entities"]["new"] if e["name"] == "Mercury")
        owner = (
            await ok(
                c, "create_triplet", subject="Mercury", predicate="owned_by", object_value="Platform team"
            )
        )["triplet"]
        assert owner["subject_id"] == project
        ep3 = await episode(c, "Mercury has two milestones left.")
        await extract(
            c,
            ep3,
            facts=[
                {"subject": "Mercury", "predicate": "milestones_left", "value": 2, "segment_ids": ["seg-1"]}
            ],
        )
        facts = await call(c, "memory_query", "facts", {"subject": project, "predicate": "milestones_left"})
        assert len(facts["items"]) == 1
