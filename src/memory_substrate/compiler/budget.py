"""Fit the ranked candidates into the token budget; the package never exceeds it.

Greedy by score: each candidate costs what it adds to the package (its own element or line,
plus its episode's opening the first time a turn of that episode is taken); one that does not
fit is skipped and a smaller one after it may still fit. The sum of parts is an estimate, so
the whole package is then rendered and counted, and the lowest-ranked selections are dropped
until the real count is within the budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory_substrate.compiler import render as R
from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.tokens import count_tokens
from memory_substrate.models import MemoryObject

OVER_BUDGET = "over budget"


@dataclass
class Fitted:
    content: str
    token_count: int
    selected: list[Candidate]
    dropped: list[Candidate] = field(default_factory=list)
    envelope_tokens: int = 0


def fit(
    ranked: list[Candidate],
    budget: int,
    fmt: str,
    header: dict[str, Any],
    sources: dict[str, MemoryObject],
) -> Fitted:
    empty = R.render(fmt, header, [], sources)
    envelope = count_tokens(empty)
    left = budget - envelope
    selected: list[Candidate] = []
    dropped: list[Candidate] = []
    opened: set[str] = set()
    for c in ranked:
        cost = count_tokens(R.item_text(fmt, c))
        extra = 0
        if c.segment is not None and c.segment.source_id not in opened:
            sid = c.segment.source_id
            extra = count_tokens(R.group_text(fmt, sid, sources.get(sid), c))
        c.tokens = cost
        if cost + extra <= left:
            left -= cost + extra
            selected.append(c)
            if extra:
                opened.add(c.segment.source_id)  # type: ignore[union-attr]
        else:
            c.rejected = OVER_BUDGET
            dropped.append(c)
    content = R.render(fmt, header, selected, sources)
    total = count_tokens(content)
    while total > budget and selected:
        worst = selected.pop()  # selections are in rank order: drop the lowest first
        worst.rejected = OVER_BUDGET
        dropped.append(worst)
        content = R.render(fmt, header, selected, sources)
        total = count_tokens(content)
    if total > budget:  # the envelope alone is larger than the budget: send nothing rather than overflow
        content, total = "", 0
    return Fitted(content, total, selected, dropped, envelope)
