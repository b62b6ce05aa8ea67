"""Fit the ranked candidates into the token budget; the package never exceeds it.

Packing is a greedy knapsack (a heap, so it stays cheap at a few hundred candidates): at each step the candidate with the best value density is taken,
``score / tokens ** DENSITY_EXPONENT`` (exponent 0.25: on the LoCoMo dev conversations 0.5 and
1.0 recalled less at both budgets, 0 (plain score order) less at 1,500 tokens), where its tokens are what it adds to the package (its own
element or line, plus its episode's opening if no turn of that episode is in yet). The exponent
keeps the four-dimension score in charge (a turn of twice the score wins against one of twice
the length) while a long turn cannot push out three short ones of nearly the same score, and
turns of an episode already opened become cheaper. The sum of parts is an estimate, so the
whole package is then rendered and counted, and the lowest-scored selections are dropped until
the real count is within the budget.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from memory_substrate.compiler import render
from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.results import PackageHeader
from memory_substrate.models import MemoryObject
from memory_substrate.tokens import count_tokens, part_tokens

OVER_BUDGET = "over budget"
DENSITY_EXPONENT = 0.25
CITED_COST = 0.5
CITED_PER_FACT = 3  # a fact's best-scored cited turns in the pool (a reinforced fact cites dozens)


@dataclass
class Fitted:
    content: str
    token_count: int
    selected: list[Candidate]
    dropped: list[Candidate] = field(default_factory=list)
    envelope_tokens: int = 0
    # Each candidate's part and each episode's opening (``_weigh``), for packing the same
    # candidates again into a smaller budget without weighing them twice.
    weights: tuple[list[float], dict[str, float]] | None = None


def _density(margin: float, tokens: float) -> float:
    return float(margin / max(tokens, 1.0) ** DENSITY_EXPONENT)


def fit(
    ranked: list[Candidate],
    budget: int,
    fmt: str,
    header: PackageHeader,
    sources: dict[str, MemoryObject],
    names: render.Names = render.WHOLE,
    more: Sequence[str] = (),
    weights: tuple[list[float], dict[str, float]] | None = None,
) -> Fitted:
    """``names``: the form each id takes in the package (ids.short_forms); ``more``: the lines of
    its index (compiler/more.py), counted with the envelope."""
    envelope = _envelope(ranked, fmt, header, sources, names, more)
    # Parts are weighed unrounded (tokens.part_tokens): they then add up to the whole's count,
    # less the whole's own rounding up (one token, kept aside), where parts rounded up one by one
    # left packages 20-30 tokens under their budget.
    left = budget - envelope - 1.0
    size, opening = weights or _weigh(ranked, fmt, sources, names)
    taken, selected = _pack(ranked, size, opening, _cites(ranked), left)
    dropped = [c for i, c in enumerate(ranked) if i not in taken]
    for c in dropped:
        c.rejected = OVER_BUDGET
    content, total = _render_within(budget, fmt, header, sources, names, selected, dropped, more)
    selected.sort(key=lambda c: (-c.score, c.key))
    return Fitted(content, total, selected, dropped, envelope, (size, opening))


def _envelope(
    ranked: list[Candidate],
    fmt: str,
    header: PackageHeader,
    sources: dict[str, MemoryObject],
    names: render.Names,
    more: Sequence[str] = (),
) -> int:
    """What the package costs with nothing in it: its root, header, index and, when a turn may
    enter, the ``cite`` rule."""
    envelope = count_tokens(render.render(fmt, header, [], sources, names, more))
    if any(c.segment is not None for c in ranked):
        envelope += count_tokens(render.cite_text(fmt))
    return envelope


def estimate(
    ranked: list[Candidate],
    budget: int,
    fmt: str,
    header: PackageHeader,
    sources: dict[str, MemoryObject],
    names: render.Names = render.WHOLE,
) -> tuple[tuple[list[float], dict[str, float]], list[Candidate], float]:
    """The packing ``fit`` would do, without rendering: (the weights, for ``fit`` to reuse; what
    would be left out; the tokens the package would hold, estimated as the sum of its parts)."""
    envelope = _envelope(ranked, fmt, header, sources, names)
    size, opening = _weigh(ranked, fmt, sources, names)
    taken, _ = _pack(ranked, size, opening, _cites(ranked), budget - envelope - 1.0)
    opened = {seg.source_id for i in taken if (seg := ranked[i].segment) is not None}
    used = envelope + sum(size[i] for i in taken) + sum(opening[sid] for sid in opened)
    return (size, opening), [c for i, c in enumerate(ranked) if i not in taken], used


def _weigh(
    ranked: list[Candidate], fmt: str, sources: dict[str, MemoryObject], names: render.Names
) -> tuple[list[float], dict[str, float]]:
    """Each candidate's unrounded part (its rounded count kept on ``c.tokens``), and each
    episode's opening, counted once."""
    opening: dict[str, float] = {}
    size: list[float] = []
    for c in ranked:
        part = part_tokens(
            render.item_text(fmt, c, names), c.segment.language if c.segment is not None else None
        )
        c.tokens = math.ceil(part)
        size.append(part)
        if c.segment is not None and c.segment.source_id not in opening:
            sid = c.segment.source_id
            opening[sid] = part_tokens(render.group_text(fmt, sid, sources.get(sid), c, names))
    return size, opening


def _cites(ranked: list[Candidate]) -> dict[int, list[int]]:
    """For each fact, the positions of its best-scored cited turns in the pool."""
    by_key = {c.key: i for i, c in enumerate(ranked) if c.segment is not None}
    cites: dict[int, list[int]] = {}
    for i, c in enumerate(ranked):
        if c.obj is not None and c.obj.evidence_refs:
            refs = [
                f"{e.get('source_id')}#{e.get('segment_id')}"
                for e in c.obj.evidence_refs
                if e.get("segment_id")
            ]
            cited = sorted({by_key[k] for k in refs if k in by_key}, key=lambda j: (-ranked[j].score, j))
            cites[i] = cited[:CITED_PER_FACT]
    return cites


def _pack(
    ranked: list[Candidate],
    size: list[float],
    opening: dict[str, float],
    cites: dict[int, list[int]],
    left: float,
) -> tuple[set[int], list[Candidate]]:
    """The greedy knapsack: positions taken and candidates selected, in the order taken."""
    # Value is the score above the weakest candidate's: the four dimensions share a floor (every
    # turn has the same provenance and nearly the same stability) that says nothing about value.
    floor = min((c.score for c in ranked), default=0.0) - 0.01
    by_source: dict[str, list[int]] = {}
    for i, c in enumerate(ranked):
        if c.segment is not None:
            by_source.setdefault(c.segment.source_id, []).append(i)

    def cost(i: int) -> float:
        c = ranked[i]
        sid = c.segment.source_id if c.segment is not None else None
        return size[i] + (opening[sid] if sid is not None and sid not in opened else 0.0)

    def entry(i: int) -> tuple[float, int, float, bool]:
        # A turn whose citing fact is in the package counts at CITED_COST of its tokens: the
        # fact carries its evidence, and the turn is what a reader checks the fact against.
        cheap = i in cited_by_taken
        weighed = cost(i) * (CITED_COST if cheap else 1.0)
        return (-_density(ranked[i].score - floor, max(1.0, weighed)), i, cost(i), cheap)

    cited_by_taken: set[int] = set()
    # A max-heap of densities; an entry goes stale when its episode opens or its citing fact is
    # taken (it becomes cheaper and is pushed again). Budget left only shrinks, so what does not
    # fit now never fits later, unless its episode opens first, which pushes it again.
    opened: set[str] = set()
    taken: set[int] = set()
    heap = [entry(i) for i in range(len(ranked))]
    heapq.heapify(heap)
    selected: list[Candidate] = []
    while heap:
        _, i, c_cost, cheap = heapq.heappop(heap)
        if i in taken or c_cost != cost(i) or cheap != (i in cited_by_taken) or c_cost > left:
            continue
        c = ranked[i]
        taken.add(i)
        left -= c_cost
        selected.append(c)
        renew = [j for j in cites.get(i, []) if j not in taken and j not in cited_by_taken]
        cited_by_taken.update(renew)
        opens = c.segment.source_id if c.segment is not None else None
        if opens is not None and opens not in opened:
            opened.add(opens)
            renew += by_source[opens]
        for j in dict.fromkeys(renew):
            if j not in taken:
                heapq.heappush(heap, entry(j))
    return taken, selected


def _render_within(
    budget: int,
    fmt: str,
    header: PackageHeader,
    sources: dict[str, MemoryObject],
    names: render.Names,
    selected: list[Candidate],
    dropped: list[Candidate],
    more: Sequence[str] = (),
) -> tuple[str, int]:
    """The sum of parts is an estimate: render the whole, count it, and drop the lowest-scored
    selections (moved from ``selected`` to ``dropped``) until the real count is within budget."""
    content = render.render(fmt, header, selected, sources, names, more)
    total = count_tokens(content)
    while total > budget and selected:
        worst = min(selected, key=lambda c: (c.score, c.key))  # drop the lowest-scored first
        selected.remove(worst)
        worst.rejected = OVER_BUDGET
        dropped.append(worst)
        content = render.render(fmt, header, selected, sources, names, more)
        total = count_tokens(content)
    if total > budget:  # the envelope alone is larger than the budget: send nothing rather than overflow
        content, total = "", 0
    return content, total
