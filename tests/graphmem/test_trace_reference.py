"""get_trace's path search (two walks joined where they meet, ``derived/pathsearch.py``) against a
plain reference: every simple path up to the depth limit, enumerated by brute force.

The fast search must return the shortest paths first, only real simple paths, each once, and
every path of a length before the longest it returns (none skipped). On the MCP tool it is
checked on both backends; on the function itself, on bigger graphs with hubs past the probe
size, where the level reads overflow and the cheaper side must be chosen."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.derived import pathsearch
from memory_substrate.mcp.server import build_server
from tests.graphmem.conftest import ok

Edge = tuple[str, str, str, str]
TYPES = ("RELATED_TO", "DESCRIBES", "SUPPORTS")


def reference_paths(edges: Sequence[Edge], a: str, b: str, max_depth: int) -> list[tuple[str, ...]]:
    """Every simple undirected path a -> b of at most ``max_depth`` edges, as edge-id tuples."""
    adj: dict[str, list[Edge]] = {}
    for e in edges:
        adj.setdefault(e[2], []).append(e)
        if e[3] != e[2]:
            adj.setdefault(e[3], []).append(e)
    out: list[tuple[str, ...]] = []

    def walk(node: str, path: list[str], visited: set[str]) -> None:
        if node == b:
            out.append(tuple(path))
            return
        if len(path) == max_depth:
            return
        for e in adj.get(node, []):
            nxt = e[3] if e[2] == node else e[2]
            if nxt not in visited:
                walk(nxt, [*path, e[0]], visited | {nxt})

    if a != b:
        walk(a, [], {a})
    return sorted(out, key=len)


def check(got: list[tuple[str, ...]], ref: list[tuple[str, ...]], max_paths: int, exact: bool = True) -> None:
    """``got`` is a valid answer: real distinct paths, shortest first, no shorter path skipped;
    with ``exact`` (no work bound reached) as many paths as the reference allows."""
    assert len(set(got)) == len(got), "a path returned twice"
    assert set(got) <= set(ref), "a returned path is not a simple path of the graph"
    lengths = [len(p) for p in got]
    assert lengths == sorted(lengths), "not shortest first"
    ref_lengths = [len(p) for p in ref]
    if exact:
        assert lengths == ref_lengths[:max_paths]
    else:  # a work bound may stop the search for longer paths, never for the shortest ones
        assert len(got) >= min(max_paths, ref_lengths.count(ref_lengths[0])) if ref else not got
    if got:
        longest = lengths[-1]
        assert {p for p in got if len(p) < longest} == {p for p in ref if len(p) < longest}


def random_graph(rng: random.Random, n: int, m: int, hubs: int = 1) -> tuple[list[str], list[Edge]]:
    """``n`` nodes, about ``m`` edges, a few hubs (a Zipf-like choice of one end), a few
    parallel edges of different types, and one isolated pair."""
    nodes = [f"know:n{i:04d}" for i in range(n)]
    weights = [30.0 if i < hubs else 1.0 / (1 + i) ** 0.3 for i in range(n - 2)]
    edges: dict[tuple[str, str, str], Edge] = {}
    while len(edges) < m:
        x = rng.choices(nodes[:-2], weights=weights)[0]
        y = rng.choice(nodes[:-2])
        t = rng.choice(TYPES)
        if x != y and (t, x, y) not in edges:
            edges[(t, x, y)] = (f"rel:{len(edges):05d}", t, x, y)
    edges[("RELATED_TO", nodes[-2], nodes[-1])] = ("rel:isolated", "RELATED_TO", nodes[-2], nodes[-1])
    return nodes, list(edges.values())


def reads(edges: list[Edge]) -> tuple[Any, Any]:
    """``edges_of`` and ``edges_between`` over a list, with the storage ports' semantics: each edge
    once, at most ``limit`` (``tests/storage/test_contract_graphmem.py`` holds the stores to it)."""

    def edges_of(ids: Sequence[str], limit: int) -> list[Edge]:
        s = set(ids)
        return [e for e in edges if e[2] in s or e[3] in s][:limit]

    def edges_between(xs: Sequence[str], ys: Sequence[str], limit: int) -> list[Edge]:
        x, y = set(xs), set(ys)
        return [e for e in edges if (e[2] in x and e[3] in y) or (e[3] in x and e[2] in y)][:limit]

    return edges_of, edges_between


@pytest.mark.parametrize("seed", range(6))
def test_find_paths_matches_plain_enumeration_near_hubs(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Hubs of a few hundred edges overflow the probe (200): the level reads take the other branch.
    monkeypatch.setattr(pathsearch, "EXTRA_BUDGET", 10**9)  # no work bound: the answer is exact
    rng = random.Random(seed)
    nodes, edges = random_graph(rng, 400, 1200, hubs=2)
    edges_of, edges_between = reads(edges)
    pairs = [tuple(rng.sample(nodes, 2)) for _ in range(25)] + [
        (nodes[0], nodes[1]),
        (nodes[-2], nodes[-1]),
        (nodes[0], nodes[-1]),
    ]
    for a, b in pairs:
        ref = reference_paths(edges, a, b, 4)
        for max_paths in (1, 5, 50):
            got = pathsearch.find_paths(edges_of, edges_between, a, b, max_paths, 4)
            check([tuple(e[0] for e in p) for p in got], ref, max_paths)
            for p in got:  # oriented from a: each edge continues where the previous one ended
                at = a
                for e in p:
                    assert at in (e[2], e[3])
                    at = e[3] if e[2] == at else e[2]
                assert at == b


@pytest.mark.parametrize("seed", range(3))
def test_the_work_bound_never_costs_the_shortest_paths(seed: int) -> None:
    rng = random.Random(100 + seed)
    nodes, edges = random_graph(rng, 400, 1500, hubs=3)
    edges_of, edges_between = reads(edges)
    for _ in range(25):
        a, b = rng.sample(nodes, 2)
        got = pathsearch.find_paths(edges_of, edges_between, a, b, 5, 4)
        check([tuple(e[0] for e in p) for p in got], reference_paths(edges, a, b, 4), 5, exact=False)


@pytest.mark.anyio
async def test_get_trace_matches_plain_enumeration(gmem: Memory) -> None:
    rng = random.Random(11)
    async with Client(build_server(gmem, "graph")) as c:
        ids = [
            (await ok(c, "create_node", text=f"fact number {i} about topic {i % 5}", auto_link=False))[
                "node"
            ]["id"]
            for i in range(14)
        ]
        weights = [6.0, 3.0] + [1.0] * 10  # two hubs; the last two nodes form an isolated pair
        edges: dict[tuple[str, str, str], Edge] = {}
        while len(edges) < 30:
            x, y, t = rng.choices(ids[:12], weights=weights)[0], rng.choice(ids[:12]), rng.choice(TYPES)
            if x != y and (t, x, y) not in edges:
                rel = (await ok(c, "create_relation", from_id=x, to_id=y, relation_type=t))["relation"]
                edges[(t, x, y)] = (rel["id"], t, x, y)
        rel = (await ok(c, "create_relation", from_id=ids[12], to_id=ids[13], relation_type="SUPPORTS"))[
            "relation"
        ]
        edges[("SUPPORTS", ids[12], ids[13])] = (rel["id"], "SUPPORTS", ids[12], ids[13])
        graph = list(edges.values())
        with gmem.store.read(gmem.namespace) as s:  # the reference sees exactly the stored graph
            assert sorted(r.id for r in s.list_relations()) == sorted(e[0] for e in graph)
        pairs = [tuple(rng.sample(ids[:12], 2)) for _ in range(12)] + [
            (ids[0], ids[1]),
            (ids[12], ids[13]),
            (ids[0], ids[13]),
        ]
        for a, b in pairs:
            ref = reference_paths(graph, a, b, 4)
            for max_paths in (1, 5, 50):
                trace = await ok(c, "get_trace", from_id=a, to_id=b, max_paths=max_paths)
                got = [tuple(e["id"] for e in p["edges"]) for p in trace["paths"]]
                check(got, ref, max_paths)
                for p in trace["paths"]:
                    assert p["length"] == len(p["edges"]) == len(p["nodes"]) - 1
                    assert p["nodes"][0]["id"] == a and p["nodes"][-1]["id"] == b
