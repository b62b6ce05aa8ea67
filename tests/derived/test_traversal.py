"""The traversal rules every graph backend shares (derived/traversal.py), on an in-memory graph."""

from __future__ import annotations

from collections.abc import Sequence

from memory_substrate.derived.traversal import neighbourhood, shortest_paths
from memory_substrate.models import Relation


def _graph(*edges: tuple[str, str, str]) -> list[Relation]:
    return [
        Relation(f"rel:{i:03d}", t, s, d, None, {}, f"2026-01-01T00:00:{i:02d}")
        for i, (s, t, d) in enumerate(edges)
    ]


def _edges_of(rels: list[Relation]):  # type: ignore[no-untyped-def]
    def edges_of(ids: Sequence[str], limit: int) -> list[Relation]:
        wanted = set(ids)
        return [r for r in rels if r.source_id in wanted or r.target_id in wanted][:limit]

    return edges_of


def test_parallel_relations_are_distinct_paths_and_self_loops_are_ignored() -> None:
    rels = _graph(("a", "x", "b"), ("b", "y", "a"), ("b", "z", "c"), ("a", "loop", "a"))
    paths = shortest_paths(_edges_of(rels), "a", "c", max_paths=5, max_depth=3)
    assert [(p.node_ids, [r.rel_type for r in p.relations]) for p in paths] == [
        (["a", "b", "c"], ["x", "z"]),
        (["a", "b", "c"], ["y", "z"]),
    ]
    assert shortest_paths(_edges_of(rels), "a", "a", max_paths=5, max_depth=3)[0].node_ids == ["a"]


def test_only_shortest_paths_within_max_depth_in_a_stable_order() -> None:
    # a-b-c-f and a-d-e-f are shortest (3); a-g-h-i-f is longer.
    rels = _graph(
        ("a", "r", "b"),
        ("b", "r", "c"),
        ("c", "r", "f"),
        ("a", "r", "d"),
        ("d", "r", "e"),
        ("e", "r", "f"),
        ("a", "r", "g"),
        ("g", "r", "h"),
        ("h", "r", "i"),
        ("i", "r", "f"),
    )
    edges_of = _edges_of(rels)
    assert [p.node_ids for p in shortest_paths(edges_of, "f", "a", max_paths=5, max_depth=4)] == [
        ["f", "c", "b", "a"],
        ["f", "e", "d", "a"],
    ]
    assert shortest_paths(edges_of, "a", "f", max_paths=5, max_depth=2) == []
    assert [p.node_ids for p in shortest_paths(edges_of, "a", "f", max_paths=1, max_depth=3)] == [
        ["a", "b", "c", "f"]
    ]


def test_neighbourhood_levels_caps_and_edges() -> None:
    rels = _graph(("r", "t", "b"), ("r", "t", "a"), ("a", "t", "c"), ("b", "t", "c"), ("c", "t", "d"))
    hood = neighbourhood(_edges_of(rels), ["r"], depth=2, max_nodes=10)
    assert hood.depth_of == {"r": 0, "a": 1, "b": 1, "c": 2} and not hood.truncated
    assert [r.id for r in hood.edges] == ["rel:000", "rel:001", "rel:002", "rel:003"]  # c-d is beyond depth
    capped = neighbourhood(_edges_of(rels), ["r"], depth=2, max_nodes=2)
    assert capped.depth_of == {"r": 0, "a": 1} and capped.truncated
    assert [r.id for r in capped.edges] == ["rel:001"]
