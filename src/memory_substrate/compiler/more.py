"""The package's index of what else memory holds near the task (``<more>`` in XML, ``"more"`` in
JSON): one line per item that fell under a floor or outside the budget, so the reader, a language
model and the best relevance judge there is, can tell from a line whether to read more and fetch
it with ``memory_query expand`` or ``page``.

What governance keeps out of the package (superseded, expired or unverified knowledge, unproven
procedures, closed work for a task about open work, a type the task's class excludes, anything
outside the task's scope) stays out of the index too: ``rank.exclusion`` and the scope filters are
asked again of every line. A task memory barely covers, or whose package holds nothing in full,
gets no index, so its package stays near empty. The lines cost at most ``SHARE`` of the budget,
and count in it (compile._fit_with_index).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.rank import REPEATS
from memory_substrate.compiler.render import MORE_EXPAND
from memory_substrate.models import MemoryObject
from memory_substrate.reader_text import continued
from memory_substrate.tokens import count_tokens

SHARE = 0.15  # of the budget, at most: on the agent-work dev sets it reached as much as a fifth and kept more in full
ELEMENT_TOKENS = 12  # the <more expand="..."> element or "more" object around the lines
TITLE_WORDS = 12
PER_EPISODE = 2  # lines from one episode: the index names many places, not one conversation twice
# Below these, a candidate is unrelated to the task even as a line of the index (the ordinary
# floors, relevance.py and retrieve.py, are 0.55 with an embedder and 0.2 on words alone). With
# the default embedder, 0.3 listed link facts that say nothing a task asks; 0.4 reached as much at
# 1,500 tokens on the agent-work dev sets. A turn's similarity is relative to the turns recalled
# with it (episodes.similarities, min-max), so for turns the floor keeps the better part of that
# pool rather than an absolute match.
FLOORS = {"semantic": 0.4, "lexical": 0.1}
GROUPS = ("knowledge", "work_item", "procedure", "file", "turn")


@dataclass
class Entry:
    candidate: Candidate
    line: str
    group: str


def group_of(c: Candidate, sources: dict[str, MemoryObject]) -> str:
    if c.obj is not None:
        if c.obj.kind == "procedure":
            return "procedure"
        return "work_item" if c.obj.object_type == "work_item" else "knowledge"
    src = sources.get(c.segment.source_id) if c.segment is not None else None
    return "turn" if src is None or src.kind == "conversation" else "file"


def _words(text: str) -> str:
    words = " ".join(continued(text).split()).split(" ")
    cut = " ".join(words[:TITLE_WORDS])
    return cut + ("…" if len(words) > TITLE_WORDS else "")


def line_of(c: Candidate, group: str, names: dict[str, str], sources: dict[str, MemoryObject]) -> str:
    """``SHORT_ID kind: title``, the title cut to about a dozen words."""
    if c.obj is not None:
        obj = c.obj
        kind = obj.kind + (f" {obj.status}" if obj.object_type == "work_item" else "")
        return f"{names.get(obj.id, obj.id)} {kind}: {_words(obj.title or obj.summary or '')}"
    seg = c.segment
    assert seg is not None
    ref = f"{names.get(seg.source_id, seg.source_id)}#{seg.id}"
    src = sources.get(seg.source_id)
    if group == "file":
        where = str(seg.metadata.get("path") or (src.title if src is not None else "") or "file")
        return f"{ref} {src.kind if src is not None else 'file'} {_words(where)}: {_words(seg.text)}"
    speaker = str(seg.metadata.get("name") or seg.metadata.get("role") or "").strip()
    return f"{ref} turn{f' {_words(speaker)}' if speaker else ''}: {_words(seg.text)}"


def pool(
    dropped: list[Candidate],
    rejected: list[Candidate],
    floor: float,
    allowed: Callable[[Candidate], bool],
) -> list[Candidate]:
    """What may go to the index: the budget's drops, and what fell under a floor but clears the
    index's own, that governance and scope allow; best-scored first."""
    seen: set[str] = set()
    out: list[Candidate] = []
    for c in [*dropped, *rejected]:
        if (
            c.key in seen
            or c.superseded_mark
            or c.similarity < floor
            or (c.rejected or "").startswith(REPEATS)
            or not allowed(c)
        ):
            continue
        seen.add(c.key)
        out.append(c)
    out.sort(key=lambda c: (-c.score, c.key))
    return out


def choose(
    candidates: list[Candidate],
    allowance: int,
    names: dict[str, str],
    sources: dict[str, MemoryObject],
) -> list[Entry]:
    """Lines drawn from every group in turn, each group's best first, while the index costs at
    most ``allowance`` tokens (counted as rendered)."""
    by_group: dict[str, list[Entry]] = defaultdict(list)
    per_episode: dict[str, int] = defaultdict(int)
    for c in candidates:
        if c.segment is not None:
            if per_episode[c.segment.source_id] >= PER_EPISODE:
                continue
            per_episode[c.segment.source_id] += 1
        group = group_of(c, sources)
        by_group[group].append(Entry(c, line_of(c, group, names, sources), group))
    order: list[Entry] = []
    queues = [list(by_group[g]) for g in GROUPS if by_group.get(g)]
    while any(queues):
        for q in queues:
            if q:
                order.append(q.pop(0))
    # Each line's own count, plus the element around them once: an estimate the compile checks
    # against the rendered package.
    used = count_tokens(MORE_EXPAND) + ELEMENT_TOKENS
    chosen: list[Entry] = []
    for entry in order:
        cost = count_tokens(entry.line) + 1
        if used + cost > allowance:
            break
        used += cost
        chosen.append(entry)
    return chosen


def cost(entries: list[Entry]) -> int:
    """What the index of ``entries`` adds to a package, estimated as ``choose`` estimates it."""
    return count_tokens(MORE_EXPAND) + ELEMENT_TOKENS + sum(count_tokens(e.line) + 1 for e in entries)


def allowance(budget: int) -> int:
    return int(budget * SHARE)
