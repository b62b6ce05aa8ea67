"""Neighbourhood and shortest-path walks over any ``edges_of`` primitive, with one set of rules.

Every graph backend answers ``edges_of(ids, limit)`` natively (one round trip per level); the
rules that decide *which* nodes, edges and paths come back live here once, so FalkorDB, Kùzu and
the canonical tables cannot disagree on ties, truncation or order (see ``base.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memory_substrate.derived.base import EDGE_CAP, PATH_CAP, GraphPath, Neighbourhood
from memory_substrate.models import Relation

EdgesOf = Callable[[Sequence[str], int], list[Relation]]


def neighbourhood(edges_of: EdgesOf, roots: Sequence[str], *, depth: int, max_nodes: int) -> Neighbourhood:
    depth_of: dict[str, int] = {}
    for root in sorted(dict.fromkeys(roots)):
        if len(depth_of) < max_nodes:
            depth_of[root] = 0
    truncated = len(depth_of) < len(set(roots))
    frontier = list(depth_of)
    seen_edges: dict[str, Relation] = {}
    for level in range(1, depth + 1):
        if not frontier:
            break
        rels = edges_of(frontier, EDGE_CAP + 1)
        if len(rels) > EDGE_CAP:
            rels, truncated = rels[:EDGE_CAP], True
        fresh: set[str] = set()
        for rel in rels:
            if rel.source_id == rel.target_id:
                continue
            seen_edges[rel.id] = rel
            for end in (rel.source_id, rel.target_id):
                if end not in depth_of:
                    fresh.add(end)
        frontier = []
        for nid in sorted(fresh):
            if len(depth_of) >= max_nodes:
                truncated = True
                break
            depth_of[nid] = level
            frontier.append(nid)
    edges = sorted(
        (r for r in seen_edges.values() if r.source_id in depth_of and r.target_id in depth_of), key=lambda r: r.id
    )
    return Neighbourhood(depth_of, edges, truncated)


def shortest_paths(
    edges_of: EdgesOf, source: str, target: str, *, max_paths: int, max_depth: int
) -> list[GraphPath]:
    """All shortest paths (bidirectional breadth-first search), ordered and cut to ``max_paths``."""
    if source == target:
        return [GraphPath([source])]
    dist = ({source: 0}, {target: 0})
    preds: tuple[dict[str, list[tuple[str, Relation]]], dict[str, list[tuple[str, Relation]]]] = ({}, {})
    frontiers = ([source], [target])
    levels = [0, 0]
    meet: list[str] = []
    while frontiers[0] and frontiers[1] and levels[0] + levels[1] < max_depth:
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        levels[side] += 1
        found: dict[str, list[tuple[str, Relation]]] = {}
        for rel in edges_of(frontiers[side], EDGE_CAP):
            if rel.source_id == rel.target_id:
                continue
            for here, there in ((rel.source_id, rel.target_id), (rel.target_id, rel.source_id)):
                if dist[side].get(here) == levels[side] - 1 and frontiers[side] and there not in dist[side]:
                    found.setdefault(there, []).append((here, rel))
        for nid, via in found.items():
            dist[side][nid] = levels[side]
            preds[side][nid] = via
        frontiers = (sorted(found), frontiers[1]) if side == 0 else (frontiers[0], sorted(found))
        meet = [n for n in found if n in dist[1 - side]]
        if meet:
            break
    if not meet:
        return []
    best = min(dist[0][m] + dist[1][m] for m in meet)
    paths: dict[tuple[tuple[str, ...], tuple[str, ...]], GraphPath] = {}
    for m in sorted(meet):
        if dist[0][m] + dist[1][m] != best:
            continue
        for left in _walk(preds[0], m, PATH_CAP):
            for right in _walk(preds[1], m, PATH_CAP):
                nodes = [n for n, _ in reversed(left)] + [m] + [n for n, _ in right]
                rels = [r for _, r in reversed(left)] + [r for _, r in right]
                path = GraphPath(nodes, rels)
                paths[path.key()] = path
                if len(paths) >= PATH_CAP:
                    break
    return sort_paths(list(paths.values()), max_paths)


def _walk(preds: dict[str, list[tuple[str, Relation]]], node: str, cap: int) -> list[list[tuple[str, Relation]]]:
    """Chains (previous node, relation) from ``node`` back to the root of ``preds``."""
    if node not in preds:
        return [[]]
    out: list[list[tuple[str, Relation]]] = []
    for prev, rel in sorted(preds[node], key=lambda p: (p[0], p[1].id)):
        for rest in _walk(preds, prev, cap):
            out.append([(prev, rel), *rest])
            if len(out) >= cap:
                return out
    return out


def sort_paths(paths: list[GraphPath], max_paths: int) -> list[GraphPath]:
    return sorted(paths, key=GraphPath.key)[:max_paths]
