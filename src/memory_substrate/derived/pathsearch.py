"""Paths between two nodes, for every graph reader: two walks that grow to meet, joined on one level.

The one path search of the package: ``get_trace`` (all simple paths, shortest first) and the graph
port's ``paths`` (``traversal.shortest_paths``: the shortest ones only) both run it, on the canonical
tables or a derived backend alike, so a backend never changes which paths come back.

Why this shape. A path of length L between ``a`` and ``b`` has every edge already read once
the walk around ``a`` has read the edges of every node closer than ``ra`` to ``a``, the walk
around ``b`` those closer than ``rb`` to ``b``, with ``ra + rb = L - 1``, and the edges between
the two frontiers (the nodes at exactly ``ra`` from ``a`` and ``rb`` from ``b``) are read too:
an edge of the path at position i joins a node at most i from ``a`` to one at most L - i - 1
from ``b``, so unless it leaves an interior node of one walk it runs from frontier to frontier.

So lengths are searched one at a time, shortest first: to go from L to L + 1, one walk grows by
one level (the cheaper one, probed first: a hub's level costs thousands of edges), and the new
frontiers are joined with one indexed query (``edges_between``) that returns only the edges
that meet, never a hub's whole edge list. Only the growth reads cost in proportion to degree.

Bounds (work, not semantics, on the graphs we measure): a level read stops at ``LEVEL_LIMIT``
edges (a hub beyond it is walked partially); once a path is found, longer ones are looked for
only while the next level fits in ``EXTRA_BUDGET`` edges; enumeration stops after
``MAX_STEPS`` steps. Below those bounds the answer is every path up to ``max_paths``, shortest
first (``tests/graphmem/test_trace_reference.py`` checks it against plain enumeration).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Edge = tuple[str, str, str, str]  # (relation id, rel_type, source_id, target_id)
EdgesOf = Callable[[Sequence[str], int], list[Edge]]
EdgesBetween = Callable[[Sequence[str], Sequence[str], int], list[Edge]]

LEVEL_LIMIT = 2000  # edges read per level of a walk
PROBE = 200  # a level is read with this limit first: the cheaper side grows
EXTRA_BUDGET = 1000  # edges a walk may still read for longer paths once one path is found
MEET_LIMIT = 5000  # edges read where the frontiers meet
MAX_STEPS = 10_000  # enumeration steps per length


class _Walk:
    """One side: the ball around its start (node -> distance) and its frontier."""

    def __init__(self, start: str) -> None:
        self.dist = {start: 0}
        self.frontier = [start]
        self.radius = 0
        self.overflows = False  # the current frontier's level did not fit in PROBE edges


def find_paths(
    edges_of: EdgesOf,
    edges_between: EdgesBetween,
    a: str,
    b: str,
    max_paths: int,
    max_depth: int,
    *,
    shortest_only: bool = False,
) -> list[list[Edge]]:
    """Up to ``max_paths`` simple undirected paths from ``a`` to ``b`` of at most ``max_depth``
    edges, shortest first (``shortest_only``: of the shortest length only), as lists of light
    edges oriented from ``a``. Paths of one length come in the order of their relation ids."""
    if a == b or max_depth < 1:
        return []
    walks = (_Walk(a), _Walk(b))
    adj: dict[str, dict[str, Edge]] = {}
    found: list[list[Edge]] = []
    read = 0
    for length in range(1, max_depth + 1):
        budget = max(0, EXTRA_BUDGET - read) if found else LEVEL_LIMIT
        if walks[0].radius + walks[1].radius < length - 1:
            got = _grow(edges_of, walks, adj, budget, stop_when_over=bool(found))
            if got is None:
                break  # longer paths would cost more than the budget left
            read += got
        if length < max_depth and walks[0].radius + walks[1].radius < length:
            # The next length needs this level anyway: when it is small, reading it now also
            # covers this length, and the meet query (a round trip) is saved.
            read += _grow(edges_of, walks, adj, budget, stop_when_over=True, probe_only=True) or 0
        if _apart(walks, a, b):
            break
        if walks[0].radius + walks[1].radius < length:
            _record(edges_between(walks[0].frontier, walks[1].frontier, MEET_LIMIT), adj)
        found += _enumerate(a, b, adj, length, max_paths - len(found))
        if len(found) >= max_paths or (found and shortest_only):
            break
    return found[:max_paths]


def between_from(edges_of: EdgesOf) -> EdgesBetween:
    """``edges_between`` for a reader that has only ``edges_of``: the edges of one side, kept where
    they reach the other."""

    def between(xs: Sequence[str], ys: Sequence[str], limit: int) -> list[Edge]:
        x, y = set(xs), set(ys)
        edges = edges_of(xs if len(x) <= len(y) else ys, limit)
        return [e for e in edges if (e[2] in x and e[3] in y) or (e[3] in x and e[2] in y)]

    return between


def _apart(walks: tuple[_Walk, _Walk], a: str, b: str) -> bool:
    """A walk that ran out of new nodes holds its whole component: if the other end is not in
    it, there is no path at all."""
    return (not walks[0].frontier and b not in walks[0].dist) or (
        not walks[1].frontier and a not in walks[1].dist
    )


def _record(edges: list[Edge], adj: dict[str, dict[str, Edge]]) -> None:
    for edge in edges:
        adj.setdefault(edge[2], {})[edge[0]] = edge
        adj.setdefault(edge[3], {})[edge[0]] = edge


def _grow(
    edges_of: EdgesOf,
    walks: tuple[_Walk, _Walk],
    adj: dict[str, dict[str, Edge]],
    limit: int,
    *,
    stop_when_over: bool,
    probe_only: bool = False,
) -> int | None:
    """Grow one walk by a level; return the edges read, or None when the level does not fit in
    ``limit`` and ``stop_when_over`` (looking for longer paths stops there), or, with
    ``probe_only``, when neither walk's level fits in a probe."""
    live = [w for w in walks if w.frontier]
    if not live:  # both balls hold their whole component: a level costs nothing
        walks[0].radius += 1
        return 0
    edges: list[Edge] | None = None
    side = live[0]
    for w in sorted(live, key=lambda w: len(w.frontier)):
        if w.overflows:
            continue
        probe = edges_of(w.frontier, min(PROBE, limit) if stop_when_over else PROBE)
        if len(probe) < PROBE and (not stop_when_over or len(probe) < limit):
            side, edges = w, probe
            break
        w.overflows = True
    if edges is None:
        if probe_only:
            return None
        side = min(live, key=lambda w: len(w.frontier))
        if stop_when_over and limit <= PROBE:
            return None
        edges = edges_of(side.frontier, limit if stop_when_over else LEVEL_LIMIT)
        if stop_when_over and len(edges) >= limit:
            return None
    _record(edges, adj)
    side.radius += 1
    nxt = []
    for _, _, src, tgt in edges:
        for x, y in ((src, tgt), (tgt, src)):
            if y not in side.dist and x in side.dist:
                side.dist[y] = side.radius
                nxt.append(y)
    side.frontier, side.overflows = nxt, False
    return len(edges)


def _enumerate(a: str, b: str, adj: dict[str, dict[str, Edge]], length: int, quota: int) -> list[list[Edge]]:
    """Simple paths a -> b of exactly ``length`` edges in ``adj`` (at most ``quota``)."""
    if quota <= 0:
        return []
    dist = _distances(b, adj, length)
    if dist.get(a, length + 1) > length:
        return []
    # Edges in relation-id order, so the paths kept under the quota do not depend on the order
    # in which a backend happened to return them.
    ordered = {node: sorted(edges.values()) for node, edges in adj.items()}
    found: list[list[Edge]] = []
    steps = [MAX_STEPS]

    def walk(node: str, path: list[Edge], visited: set[str]) -> None:
        steps[0] -= 1
        if steps[0] < 0 or len(found) >= quota:
            return
        if node == b:
            if len(path) == length:
                found.append(list(path))
            return
        for edge in ordered.get(node, ()):
            nxt = edge[3] if edge[2] == node else edge[2]
            if nxt in visited or len(path) + 1 + dist.get(nxt, length + 1) > length:
                continue
            visited.add(nxt)
            path.append(edge)
            walk(nxt, path, visited)
            path.pop()
            visited.discard(nxt)

    walk(a, [], {a})
    return found


def _distances(start: str, adj: dict[str, dict[str, Edge]], limit: int) -> dict[str, int]:
    dist, frontier = {start: 0}, [start]
    for d in range(1, limit + 1):
        nxt = []
        for node in frontier:
            for _, _, src, tgt in adj.get(node, {}).values():
                other = tgt if src == node else src
                if other not in dist:
                    dist[other] = d
                    nxt.append(other)
        frontier = nxt
    return dist
