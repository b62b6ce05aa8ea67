"""get_context and get_trace of the spec-002 toolset read from the configured derived graph
backend once it is built, and answer as the canonical relations do."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate.mcp.server import build_server
from tests.derived.conftest import configure
from tests.graphmem.conftest import ok

pytestmark = pytest.mark.anyio


async def _answers(mem: Any) -> tuple[Any, Any, Any]:
    async with Client(build_server(mem, "graph")) as c:
        src = (await ok(c, "create_node", text="Alice joined Acme in 2024", auto_link=False))["node"]
        t = (
            await ok(
                c,
                "create_triplet",
                subject="Alice",
                predicate="works_at",
                object_value="Acme",
                fact_id=src["id"],
            )
        )["triplet"]
        f2 = (await ok(c, "create_node", text="Acme is based in Berlin", auto_link=False))["node"]
        await ok(c, "create_relation", from_id=f2["id"], to_id=t["object_id"], relation_type="DESCRIBES")
        mem.maintain("reindex", {}, {"apply": True})  # builds the configured derived backend
        ctx = await ok(c, "get_context", node_id=t["subject_id"], depth=2)
        trace = await ok(c, "get_trace", from_id=src["id"], to_id=f2["id"])
        return (
            (
                {n["id"] for n in ctx["nodes"]},
                {e["relation_type"] for e in ctx["edges"]},
                [[n["id"] for n in p["nodes"]] for p in trace["paths"]],
            ),
            src,
            f2,
        )


async def test_kuzu_serves_the_graph_tools_like_the_relations_table(open_memory: Any, namespace: str) -> None:
    file_mem = open_memory("file", ns=namespace + "-file")
    kuzu_mem = open_memory("kuzu", ns=namespace + "-kuzu")
    configure(kuzu_mem, "kuzu")
    (file_nodes, file_types, file_paths), _, _ = await _answers(file_mem)
    (kuzu_nodes, kuzu_types, kuzu_paths), _, _ = await _answers(kuzu_mem)
    assert len(kuzu_nodes) == len(file_nodes) and kuzu_types == file_types
    # One path search whichever graph answers: every simple path, shortest first, longer ones after.
    assert [len(p) for p in kuzu_paths] == [len(p) for p in file_paths] == [3, 4, 5]
    from memory_substrate.derived.access import graph_reader

    with kuzu_mem.store.read(kuzu_mem.namespace) as session:
        assert graph_reader(kuzu_mem.runtime, session).name == "kuzu"


async def test_delete_node_leaves_no_drift_in_the_mirror(open_memory: Any) -> None:
    mem = open_memory("kuzu")
    configure(mem, "kuzu")
    async with Client(build_server(mem, "graph")) as c:
        t = (await ok(c, "create_triplet", subject="Ada", predicate="uses", object_value="Kuzu"))["triplet"]
        await ok(c, "delete_node", node_id=t["subject_id"])
    report = mem.maintain("repair", {})
    drift = report["derived_indexes"]["derived_backends"]["backends"]["kuzu"]
    assert drift["in_line"] is True, drift
    assert (
        drift["families"]["objects"]["backend"]["count"] == drift["families"]["objects"]["canonical"]["count"]
    )


async def test_delete_node_drops_its_vectors_from_lancedb(open_memory: Any) -> None:
    mem = open_memory("file", "lancedb", embedder="static")
    configure(mem, "file", "lancedb")
    async with Client(build_server(mem, "graph")) as c:
        await ok(c, "create_node", text="Kafka carries the order events", auto_link=False)
        gone = (await ok(c, "create_node", text="Redis caches the sessions", auto_link=False))["node"]
        await ok(c, "delete_node", node_id=gone["id"])
    drift = mem.maintain("repair", {})["derived_indexes"]["derived_backends"]["backends"]["lancedb"]
    assert drift["in_line"] is True, drift


async def test_expired_nodes_stay_hidden_when_a_derived_graph_answers(open_memory: Any) -> None:
    from tests.graphmem.conftest import FixedClock

    mem = open_memory("kuzu", embedder="static")
    configure(mem, "kuzu")
    clock = FixedClock()
    mem.runtime.clock = clock
    async with Client(build_server(mem, "graph")) as c:
        t = (await ok(c, "create_triplet", subject="Alice", predicate="works_at", object_value="Acme"))[
            "triplet"
        ]
        brief = (await ok(c, "create_node", text="Alice is on call this week", auto_link=False, ttl_days=1))[
            "node"
        ]
        await ok(c, "create_relation", from_id=brief["id"], to_id=t["subject_id"], relation_type="ABOUT")
        mem.maintain("reindex", {}, {"apply": True})
        before = {n["id"] for n in (await ok(c, "get_context", node_id=t["subject_id"], depth=1))["nodes"]}
        assert brief["id"] in before
        clock.advance(days=2)
        after = {n["id"] for n in (await ok(c, "get_context", node_id=t["subject_id"], depth=1))["nodes"]}
        assert brief["id"] not in after and t["object_id"] in after
    with mem.runtime.read() as session:
        from memory_substrate.derived.access import graph_reader

        reader = graph_reader(mem.runtime, session)
        assert reader.name == "kuzu"
        assert brief["id"] not in reader.neighbourhood([t["subject_id"]], depth=1, max_nodes=50).depth_of


async def test_health_check_probes_a_configured_falkordb(open_memory: Any, namespace: str) -> None:
    mem = open_memory("falkordb")
    configure(mem, "falkordb")
    async with Client(build_server(mem, "graph")) as c:
        health = await ok(c, "health_check")
        assert health["falkordb"] is True and health["details"]["falkordb"].startswith("answered a ping"), (
            health
        )
    dead = open_memory("file", ns=namespace + "-dead", falkordb_url="redis://127.0.0.1:1")
    async with Client(build_server(dead, "graph")) as c:
        health = await ok(c, "health_check")
        assert health["falkordb"] is False and "unreachable" in health["details"]["falkordb"], health
