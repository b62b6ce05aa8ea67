"""TTL with a fixed clock, one model behind both toolsets, owner_id and namespaces, caches."""

from __future__ import annotations

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.errors import NotFoundError
from memory_substrate.mcp.server import build_server
from tests.graphmem.conftest import FixedClock, err, ok
from tests.helpers import call, knowledge

pytestmark = pytest.mark.anyio


async def test_expired_nodes_disappear_from_every_read_and_are_swept(gmem: Memory, clock: FixedClock) -> None:
    async with Client(build_server(gmem, "all")) as c:
        keep = (await ok(c, "create_node", text="Rotating the signing keys is weekly", auto_link=False))[
            "node"
        ]
        day = (
            await ok(
                c, "create_node", text="Temporary signing key rotation window", ttl_days=1, auto_link=False
            )
        )["node"]
        assert day["ttl_days"] == 1 and day["expires_at"] == int(clock.now.timestamp() * 1000) + 86_400_000
        absolute = int(clock.now.timestamp() * 1000) + 3 * 86_400_000
        both = (
            await ok(
                c,
                "create_node",
                text="Signing key escrow note",
                ttl_days=1,
                expires_at=absolute,
                auto_link=False,
            )
        )["node"]
        assert both["expires_at"] == absolute and both["ttl_days"] is None  # absolute wins
        await ok(c, "create_relation", from_id=keep["id"], to_id=day["id"], relation_type="RELATED_TO")

        cached = await ok(c, "search", query="signing key", include_outdated=True)
        assert day["id"] in {r["id"] for r in cached["results"]}
        clock.advance(days=1, seconds=1)
        await err(c, "get_node", "memory_not_found", node_id=day["id"])
        assert (await ok(c, "get_node", node_id=both["id"]))["node"]["id"] == both["id"]
        found = await ok(c, "search", query="signing key", include_outdated=True)
        assert day["id"] not in {r["id"] for r in found["results"]} and keep["id"] in {
            r["id"] for r in found["results"]
        }
        ctx = await ok(c, "get_context", node_id=keep["id"], depth=2)
        assert [n["id"] for n in ctx["nodes"]] == [keep["id"]] and ctx["edges"] == []
        stats = (await ok(c, "get_stats"))["stats"]
        assert stats["expired_hidden"] == 1 and stats["facts"] == 2 and stats["relations"] == 0
        # spec-001 reads hide it too.
        hits = await call(c, "memory_query", "search", {"query": "signing key rotation window"})
        assert day["id"] not in [i["id"] for i in hits["items"]]
        recent = await call(c, "memory_query", "recent", {}, {"max_items": 50})
        assert day["id"] not in [i["id"] for i in recent["items"]]
        graph = await call(c, "memory_query", "graph", {"id": keep["id"]})
        assert [n["id"] for n in graph["nodes"]] == [keep["id"]]
        with pytest.raises(NotFoundError):
            gmem.query("page", {"id": day["id"]})

        plan = await call(c, "memory_maintain", "expire", {})
        assert plan["status"] == "dry_run" and plan["counts"]["expired"] == 1
        assert [i["id"] for i in plan["items"]] == [day["id"]]
        done = await call(c, "memory_maintain", "expire", {}, {"apply": True})
        assert done["status"] == "applied" and done["patch_id"]
        again = await call(c, "memory_maintain", "expire", {}, {"apply": True})
        assert again["status"] == "noop"
        history = await ok(c, "get_node_change_history", node_id=day["id"])
        assert history["versions"][0]["changes"]["status"] == {"from": "active", "to": "expired"}
        clock.advance(days=2)
        await err(c, "get_node", "memory_not_found", node_id=both["id"])
        # An expired node answers memory_not_found to every tool that takes it, delete included...
        await err(c, "update_node", "memory_not_found", node_id=both["id"], text="new text")
        await err(c, "delete_node", "memory_not_found", node_id=both["id"])
        # ...except an update that moves its expiry later: that revives it, swept or not.
        revive = int(clock.now.timestamp() * 1000) + 3_600_000
        assert (await ok(c, "update_node", node_id=both["id"], expires_at=revive))["node"][
            "expires_at"
        ] == revive
        assert (await ok(c, "get_node", node_id=both["id"]))["node"]["status"] == "active"
        swept = await ok(c, "update_node", node_id=day["id"], ttl_days=2)
        assert swept["node"]["status"] == "active" and swept["node"]["lifecycle_status"] == "active"
        assert (await ok(c, "delete_node", node_id=day["id"]))["deleted_ids"] == [day["id"]]
        # Extending a node's life makes it readable again (a later expires_at).
        later = int(clock.now.timestamp() * 1000) + 86_400_000
        await ok(c, "update_node", node_id=keep["id"], expires_at=later)
        clock.advance(hours=1)
        assert (await ok(c, "get_node", node_id=keep["id"]))["node"]["expires_at"] == later


async def test_a_write_through_one_toolset_is_read_through_the_other(gmem: Memory) -> None:
    async with Client(build_server(gmem, "all")) as c:
        # spec 001 -> spec 002
        written = await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(title="Deploys run on Fridays", summary="Deploys run on Fridays after review."),
        )
        node = await ok(c, "get_node", node_id=written["object_id"])
        assert node["node"]["node_type"] == "Fact" and "Deploys run on Fridays" in node["node"]["text"]
        assert written["object_id"] in {
            r["id"] for r in (await ok(c, "search", query="deploys fridays"))["facts"]
        }
        ep = await call(
            c,
            "memory_ingest",
            "conversation",
            {"title": "t", "messages": [{"role": "user", "content": "Bob owns the Ledger service"}]},
        )
        await call(
            c,
            "memory_remember",
            "extraction",
            {
                "episode_id": ep["source_id"],
                "reason": "test",
                "memory_source": "user_declared",
                "scope_refs": ["scope:project"],
                "entities": [{"name": "Bob", "type": "person"}, {"name": "Ledger", "type": "service"}],
                "facts": [
                    {"subject": "Bob", "predicate": "owns", "object": "Ledger", "segment_ids": ["seg-1"]}
                ],
            },
        )
        trip = await ok(c, "search_triplets", subject="Bob")
        assert [(t["predicate"], t["object_value"]) for t in trip["triplets"]] == [("owns", "Ledger")]

        # spec 002 -> spec 001
        fact = (await ok(c, "create_node", text="The cache TTL is five minutes", auto_link=False))["node"]
        page = await call(c, "memory_query", "page", {"id": fact["id"]})
        assert page["object"]["summary"] == "The cache TTL is five minutes"
        hits = await call(c, "memory_query", "search", {"query": "cache TTL minutes"})
        assert fact["id"] in [i["id"] for i in hits["items"]]
        await ok(c, "create_triplet", subject="Carol", predicate="manages", object_value="Ledger")
        facts = await call(c, "memory_query", "facts", {"subject": "Carol"})
        assert [(f["predicate"], f["object"]["name"]) for f in facts["items"]] == [("manages", "Ledger")]
        audit = await call(c, "memory_maintain", "audit", {"object_id": fact["id"]})
        assert audit["events"][0]["action"] == "create"


async def test_search_cache_is_dropped_by_writes_of_either_toolset(gmem: Memory) -> None:
    async with Client(build_server(gmem, "all")) as c:
        await ok(c, "create_node", text="Blue widgets ship from Oslo", auto_link=False)
        first = await ok(c, "search", query="widgets Oslo")
        assert "cached" not in first
        second = await ok(c, "search", query="widgets Oslo")
        assert second["cached"] is True and second["results"] == first["results"]
        await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(title="Red widgets ship from Oslo too", summary="Red widgets also ship from Oslo."),
        )
        third = await ok(c, "search", query="widgets Oslo")
        assert "cached" not in third and third["count"] == first["count"] + 1
        await ok(c, "create_node", text="Green widgets ship from Oslo as well", auto_link=False)
        assert (await ok(c, "search", query="widgets Oslo"))["count"] == third["count"] + 1


def test_ttl_cache_expires_entries_by_its_timer() -> None:
    from memory_substrate.graphmem.cache import LRUCache, TTLCache

    now = [0.0]
    cache = TTLCache[int](2, 60, timer=lambda: now[0])
    cache.put("a", 1)
    assert cache.get("a") == 1
    now[0] = 61
    assert cache.get("a") is None and len(cache) == 0
    lru = LRUCache[str](2)
    for k in "abc":
        lru.put(k, k)
    assert lru.get("a") is None and lru.get("c") == "c" and lru.stats()["size"] == 2


async def test_owner_id_selects_a_namespace_and_a_bound_server_refuses_others(
    gmem: Memory, namespace: str
) -> None:
    other = namespace + "-other"
    async with Client(build_server(gmem, "graph")) as c:
        mine = (await ok(c, "create_node", text="Only in the home namespace", auto_link=False))["node"]
        theirs = (
            await ok(c, "create_node", text="Only in the other namespace", owner_id=other, auto_link=False)
        )["node"]
        assert theirs["owner_id"] == other
        await err(c, "get_node", "memory_not_found", node_id=theirs["id"])
        await err(c, "get_node", "memory_not_found", node_id=mine["id"], owner_id=other)
        assert (await ok(c, "get_node", node_id=theirs["id"], owner_id=other))["node"][
            "text"
        ] == "Only in the other namespace"
    async with Client(build_server(gmem, "graph", bound=True)) as c:
        out = await err(c, "get_node", "memory_validation_error", node_id=theirs["id"], owner_id=other)
        assert "not reachable" in out["error"]
        await err(c, "create_node", "memory_validation_error", text="sneaky", owner_id=other)
        assert (await ok(c, "get_node", node_id=mine["id"], owner_id=namespace))["node"]["id"] == mine["id"]
        assert (await ok(c, "get_node", node_id=mine["id"]))["node"]["id"] == mine["id"]
    with gmem.store.read(other) as s:
        assert [o.title for o in s.list_objects(object_types=["knowledge"])] == [
            "Only in the other namespace"
        ]


def test_cached_embedder_reuses_vectors_and_matches_the_inner_one() -> None:
    import numpy as np

    from memory_substrate.embed.static import StaticEmbedder
    from memory_substrate.graphmem.cache import CachedEmbedder, LRUCache

    inner = StaticEmbedder()
    cached = CachedEmbedder(inner, LRUCache(10))
    docs = cached.embed_documents(["alpha beta", "gamma"])
    assert np.allclose(docs, inner.embed_documents(["alpha beta", "gamma"]))
    again = cached.embed_documents(["gamma", "delta"])
    assert np.allclose(again[0], docs[1]) and cached.cache.hits == 1
    assert np.allclose(cached.embed_query("alpha"), inner.embed_query("alpha"))
    cached.embed_query("alpha")
    assert cached.cache.stats()["size"] == 4 and cached.cache.hits == 2


async def test_runtimes_per_owner_stay_bounded_and_rebuild_after_eviction(
    gmem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unbound server builds a runtime per owner_id a caller names; the map is an LRU, so a
    caller cycling through owners cannot grow it without bound, and an evicted owner's next call
    rebuilds its runtime and reads its own data."""
    from memory_substrate.graphmem import service

    monkeypatch.setattr(service, "RUNTIMES_KEPT", 4)
    built: list[service.GraphMemory] = []
    real_init = service.GraphMemory.__init__

    def spy(self, *a, **k):  # type: ignore[no-untyped-def]
        real_init(self, *a, **k)
        built.append(self)

    monkeypatch.setattr(service.GraphMemory, "__init__", spy)
    async with Client(build_server(gmem, "all")) as c:
        first = (
            await ok(
                c,
                "create_node",
                text="Owner zero keeps the boiler manual",
                owner_id="owner-0",
                auto_link=False,
            )
        )["node"]
        for i in range(1, 10):
            await ok(c, "create_node", text=f"Owner {i} keeps a note", owner_id=f"owner-{i}", auto_link=False)
        g = built[0]
        assert len(g._runtimes) <= 4 and len(g._plain) <= 4
        again = await ok(c, "get_node", node_id=first["id"], owner_id="owner-0")
        assert again["node"]["text"] == "Owner zero keeps the boiler manual"
        await err(c, "get_node", "memory_not_found", node_id=first["id"], owner_id="owner-5")
