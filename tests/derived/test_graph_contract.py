"""One graph contract, three backends: the canonical relations table (``file``), FalkorDB and
Kùzu (LadybugDB). Each answers relations_of, neighbourhood and shortest paths exactly as the
rules in derived/base.py say, and exactly as the canonical table does for the same data, through
the port and through memory_query over MCP. Runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.derived.access import graph_reader
from memory_substrate.derived.file_graph import FileGraph
from memory_substrate.mcp.server import build_server
from tests.derived.conftest import configure
from tests.helpers import call
from tests.maintain.conftest import claim, know

GRAPHS = ["file", "falkordb", "kuzu"]


@pytest.fixture(params=GRAPHS)
def graph(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def seed_before(mem: Memory) -> dict[str, str]:
    """a -uses-> b -depends_on-> c and a -runs_on-> d; each claim is also 'about' its subject."""
    return {
        "k_ab": know(mem, "A uses B", subject_refs=["node:a"], payload=claim("node:a", "uses", "node:b")),
        "k_bc": know(
            mem, "B depends on C", subject_refs=["node:b"], payload=claim("node:b", "depends_on", "node:c")
        ),
        "k_ad": know(
            mem, "A runs on D", subject_refs=["node:a"], payload=claim("node:a", "runs_on", "node:d")
        ),
    }


def seed_after(mem: Memory) -> dict[str, str]:
    """Written once the backend is configured: reaches it through the outbox, not the build."""
    return {
        "k_dc": know(
            mem, "D depends on C", subject_refs=["node:d"], payload=claim("node:d", "depends_on", "node:c")
        ),
        "k_e": know(mem, "E is on its own", subject_refs=["node:e"]),
    }


def seeded(open_memory: Any, graph: str) -> tuple[Memory, dict[str, str]]:
    mem = open_memory(graph)
    ids = seed_before(mem)
    configure(mem, graph)
    ids.update(seed_after(mem))
    return mem, ids


def _ids(rels: list[Any]) -> list[str]:
    return [r.id for r in rels]


def _path_view(paths: list[Any]) -> list[tuple[list[str], list[str]]]:
    return [(p.node_ids, [r.rel_type for r in p.relations]) for p in paths]


def test_reads_go_to_the_configured_backend_and_match_the_rules(open_memory: Any, graph: str) -> None:
    mem, k = seeded(open_memory, graph)
    with mem.store.read(mem.namespace) as session:
        reader = graph_reader(mem.runtime, session)
        assert reader.name == graph

        around_c = reader.relations_of(["node:c"])
        assert {(r.source_id, r.rel_type, r.target_id) for r in around_c} == {
            ("node:b", "depends_on", "node:c"),
            ("node:d", "depends_on", "node:c"),
        }
        assert [(r.created_at, r.id) for r in around_c] == sorted((r.created_at, r.id) for r in around_c)
        schema = around_c[0].payload["relation_schema"]
        assert isinstance(schema, dict) and schema["derivation"] == "structured_payload"

        one = reader.neighbourhood(["node:a"], depth=1, max_nodes=50)
        assert one.depth_of == {"node:a": 0, k["k_ab"]: 1, k["k_ad"]: 1, "node:b": 1, "node:d": 1}
        assert len(one.edges) == 4 and not one.truncated
        two = reader.neighbourhood(["node:a"], depth=2, max_nodes=50)
        assert {n for n, d in two.depth_of.items() if d == 2} == {"node:c", k["k_bc"], k["k_dc"]}
        assert len(two.edges) == 8 and [r.id for r in two.edges] == sorted(r.id for r in two.edges)
        # Level 1 in id order ("know:" < "node:"): the cap keeps the two claims about a.
        capped = reader.neighbourhood(["node:a"], depth=2, max_nodes=3)
        assert capped.depth_of == {"node:a": 0, k["k_ab"]: 1, k["k_ad"]: 1} and capped.truncated

        assert _path_view(reader.paths("node:a", "node:c")) == [
            (["node:a", "node:b", "node:c"], ["uses", "depends_on"]),
            (["node:a", "node:d", "node:c"], ["runs_on", "depends_on"]),
        ]
        assert len(reader.paths("node:a", "node:c", max_paths=1)) == 1
        long = reader.paths(k["k_ab"], k["k_dc"], max_depth=3)
        assert [p.node_ids for p in long] == [[k["k_ab"], "node:a", "node:d", k["k_dc"]]]
        assert reader.paths(k["k_ab"], k["k_dc"], max_depth=2) == []
        assert reader.paths("node:a", "node:e") == []


def test_same_answers_as_the_canonical_table_for_every_probe(open_memory: Any, graph: str) -> None:
    mem, k = seeded(open_memory, graph)
    # Changes after the build: a supersession (new edge), a status change, a new branch.
    k["k_ad2"] = know(
        mem, "A runs on D2", subject_refs=["node:a"], payload=claim("node:a", "runs_on", "node:d2")
    )
    mem.remember(
        "supersede", {"old_knowledge_id": k["k_ad"], "new_knowledge_id": k["k_ad2"], "reason": "moved"}
    )
    probes = [*k.values(), "node:a", "node:b", "node:c", "node:d", "node:d2", "node:e"]
    with mem.store.read(mem.namespace) as session:
        reader, canonical = graph_reader(mem.runtime, session), FileGraph(session)
        assert reader.name == graph
        for probe in probes:
            assert _ids(reader.relations_of([probe])) == _ids(canonical.relations_of([probe])), probe
            for depth, cap in ((1, 50), (2, 50), (3, 4), (3, 50)):
                got, want = (
                    reader.neighbourhood([probe], depth=depth, max_nodes=cap),
                    canonical.neighbourhood([probe], depth=depth, max_nodes=cap),
                )
                assert (got.depth_of, _ids(got.edges), got.truncated) == (
                    want.depth_of,
                    _ids(want.edges),
                    want.truncated,
                ), (probe, depth, cap)
            for other in probes:
                assert [p.key() for p in reader.paths(probe, other, max_paths=5, max_depth=4)] == [
                    p.key() for p in canonical.paths(probe, other, max_paths=5, max_depth=4)
                ], (probe, other)
    drift = mem.maintain("repair", {})["derived_indexes"].get("derived_backends", {})
    if graph != "file":
        assert drift["outbox_pending"] == 0 and drift["backends"][graph]["in_line"] is True


@pytest.mark.anyio
async def test_graph_and_expand_modes_over_mcp_read_the_backend(open_memory: Any, graph: str) -> None:
    mem, k = seeded(open_memory, graph)
    async with Client(build_server(mem)) as client:
        out = await call(
            client, "memory_query", "graph", {"id": "node:a"}, {"depth": 2, "max_items": 50, "detail": "full"}
        )
        assert {n["id"]: n["depth"] for n in out["nodes"]} == {
            "node:a": 0,
            k["k_ab"]: 1,
            k["k_ad"]: 1,
            "node:b": 1,
            "node:d": 1,
            "node:c": 2,
            k["k_bc"]: 2,
            k["k_dc"]: 2,
        }
        assert out["counts"]["edges"] == 8 and out["truncated"] is False
        assert {e["derivation"] for e in out["edges"]} == {"field_reference", "structured_payload"}
        expanded = await call(client, "memory_query", "expand", {"id": "node:c"}, {})
        assert sorted(r["object"]["id"] for r in expanded["related"]) == ["node:b", "node:d"]


def test_namespaces_never_share_a_graph(open_memory: Any, graph: str) -> None:
    mem, _ = seeded(open_memory, graph)
    other = open_memory(graph, ns=mem.namespace + "-other")
    configure(other, graph)
    know(other, "A feeds Z", subject_refs=["node:a"], payload=claim("node:a", "feeds", "node:z"))
    with mem.store.read(mem.namespace) as s1, other.store.read(other.namespace) as s2:
        mine = {r.rel_type for r in graph_reader(mem.runtime, s1).relations_of(["node:a"])}
        theirs = {r.rel_type for r in graph_reader(other.runtime, s2).relations_of(["node:a"])}
    assert "feeds" not in mine and {"uses", "runs_on"} <= mine
    assert theirs == {"feeds", "about"}
