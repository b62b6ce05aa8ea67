"""Four-dimension ranking. Pure: no store, no clock except the ``now`` passed in.

relevance  = similarity x memory-type weight of the task class
recency    = linear decay from 1 (happened now) to 0 (90 days or more ago); the pool's median
             for what has no time of its own
stability  = 0.7 x evidence status score + 0.3 x salience
provenance = the strategy that found it (procedure assist 0.9, fact lookup 0.8, graph 0.7, episode 0.6)

The package order is the weighted sum of the four, and all four are kept on each candidate (and
in the trace), so a reader can always see why something ranked where it did. Exclusions are
decided before scoring and each carries its reason.
"""

from __future__ import annotations

import statistics
from datetime import datetime

from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.profiles import (
    DEFAULT_SALIENCE,
    DIMENSION_WEIGHTS,
    PROVENANCE,
    RECENCY_DAYS,
    SEGMENT_EVIDENCE_STATUS,
    STABILITY_MIX,
    TYPE_WEIGHTS,
)
from memory_substrate.graph.apply import evidence_score
from memory_substrate.graph.procedures import promotable, promotion_gap
from memory_substrate.taxonomy import EVIDENCE_SCORES
from memory_substrate.util import parse_time

UNVERIFIED = ("candidate", "contested")
# Closed work is history: it answers "didn't we fix this already?" but misleads a task about what
# is open now (answer_type.work_stance: such a task never gets it). Otherwise it enters
# only when the task names it (a similarity this close), or when the task asks for an account of
# past work (a postmortem, release notes: answer_type.recounts_past_work), where it enters like any
# item. On the agent-work dev set the closed items a task needed matched at 0.95-1.0, the ones it
# must not get at 0.85-0.88.
CLOSED_WORK_MATCH = 0.9
CLOSE_MATCH = 0.9
GONE = ("archived", "expired", "stale")
REPEATS = "repeats "  # the reason given to a turn that says word for word what a better one says
REPEAT_WORDS = 8


def _strength(c: Candidate) -> tuple[bool, float]:
    return c.rejected is None, PROVENANCE[c.strategy] * max(c.similarity, 1e-6)


def merge(cands: list[Candidate]) -> list[Candidate]:
    """One candidate per key: the one with the strongest provenance x similarity keeps the slot,
    and remembers every strategy that found it."""
    best: dict[str, Candidate] = {}
    strategies: dict[str, list[str]] = {}
    for c in cands:
        strategies.setdefault(c.key, [])
        if c.strategy not in strategies[c.key]:
            strategies[c.key].append(c.strategy)
        cur = best.get(c.key)
        if cur is None or _strength(c) > _strength(cur):
            best[c.key] = c
    for key, c in best.items():
        c.strategies = strategies[key]
    return list(best.values())


def exclusion(
    c: Candidate,
    primary: str,
    include_unverified: bool,
    now: datetime,
    open_work: bool = False,
    past_work: bool = False,
) -> str | None:
    """Why ``c`` may not enter the package, or None. ``open_work``: the task is about work still to
    do; ``past_work``: it asks for an account of work done (answer_type)."""
    if TYPE_WEIGHTS[primary][c.memory_type] == 0.0:
        return f"hard exclude: {c.memory_type} memory has weight 0.0 for {primary} tasks"
    obj = c.obj
    if obj is None:
        return None
    if obj.status == "superseded" or obj.metadata.get("evidence_status") == "superseded":
        by = obj.metadata.get("superseded_by")
        return f"superseded{f' by {by}' if by else ''}"
    if obj.valid_until and parse_time(obj.valid_until) <= now:
        return f"no longer valid (valid_until {obj.valid_until})"
    if obj.kind == "procedure" and (obj.status != "active" or not promotable(obj)):
        gap = promotion_gap(obj)
        return (
            f"procedure not promoted (status {obj.status}, {gap['distinct_episodes']} episode(s), "
            f"confidence {gap['confidence']})"
        )
    if obj.status in UNVERIFIED and not include_unverified:
        return f"unverified {obj.status} knowledge (set options.include_unverified to include it)"
    if obj.status in GONE:
        return f"status {obj.status}"
    if obj.object_type == "work_item" and obj.status in ("done", "cancelled"):
        if open_work:
            return f"work item {obj.status} (the task is about work still to do)"
        if not past_work and c.similarity < CLOSED_WORK_MATCH:
            return (
                f"work item {obj.status} (closed work enters only when the task names it: "
                f"similarity {c.similarity:.2f} < {CLOSED_WORK_MATCH})"
            )
    return None


def recency(occurred_at: str | None, now: datetime) -> float:
    if not occurred_at:
        return 0.0
    try:
        age_days = (now - parse_time(occurred_at)).total_seconds() / 86400.0
    except ValueError:
        return 0.0
    return max(0.0, min(1.0, 1.0 - age_days / RECENCY_DAYS))


def stability(c: Candidate) -> float:
    if c.obj is None:
        status_score, salience = EVIDENCE_SCORES[SEGMENT_EVIDENCE_STATUS], DEFAULT_SALIENCE
    else:
        status_score = evidence_score(c.obj)
        raw = c.obj.metadata.get("salience")
        salience = float(raw) if isinstance(raw, int | float) else DEFAULT_SALIENCE
    w_status, w_salience = STABILITY_MIX
    return w_status * status_score + w_salience * max(0.0, min(1.0, salience))


def type_weight(c: Candidate, classes: list[str]) -> float:
    """The weight of the candidate's memory type: the best among the profiles that ran. An item the
    task names or closely matches (similarity from ``CLOSE_MATCH``) counts whole whatever the class,
    unless the class excludes its type (0.0): the class says what a task of its kind usually needs,
    the match says what this task asked for."""
    weight = max(TYPE_WEIGHTS[cls][c.memory_type] for cls in classes)
    return 1.0 if weight > 0.0 and c.similarity >= CLOSE_MATCH and c.obj is not None else weight


def score(c: Candidate, classes: list[str], now: datetime, undated: float = 0.0) -> None:
    """``undated``: the recency given to what has no time of its own (rank())."""
    when = c.occurred_at
    c.scores = {
        "relevance": c.similarity * type_weight(c, classes),
        "recency": recency(when, now) if when else undated,
        "stability": stability(c),
        "provenance": PROVENANCE[c.strategy],
    }
    c.score = sum(DIMENSION_WEIGHTS[d] * v for d, v in c.scores.items())


def rank(
    cands: list[Candidate],
    classes: list[str],
    *,
    include_unverified: bool,
    now: datetime,
    open_work: bool = False,
    past_work: bool = False,
) -> tuple[list[Candidate], list[Candidate]]:
    """(eligible candidates best first, rejected candidates with their reason)."""
    eligible: list[Candidate] = []
    rejected: list[Candidate] = []
    merged = merge(cands)
    # What has no time of its own (a file, a code chunk, an imported fact) is as recent as the
    # pool's typical dated candidate: neither newer than everything (a fresh import outranked every
    # older conversation) nor older than everything (code never reached a package of recent chats).
    dated = [recency(c.occurred_at, now) for c in merged if c.occurred_at]
    undated = float(statistics.median(dated)) if dated else 0.0
    for c in merged:
        c.rejected = exclusion(c, classes[0], include_unverified, now, open_work, past_work) or c.rejected
        score(c, classes, now, undated)
        (rejected if c.rejected else eligible).append(c)
    eligible.sort(key=lambda c: (-c.score, c.key))
    return _without_repeats(eligible, rejected)


def _without_repeats(
    eligible: list[Candidate], rejected: list[Candidate]
) -> tuple[list[Candidate], list[Candidate]]:
    """A turn of another episode that says word for word what a better-ranked turn says (the same
    message captured twice: a re-import, a pasted message, a transcript read by two clients) tells
    the reader nothing more; it is left out, naming the turn it repeats. A short reply ("Yes,
    ship it.") means what its own conversation makes it mean, so only turns of ``REPEAT_WORDS``
    words or more count, and never two turns of one episode."""
    said: dict[tuple[str, str], Candidate] = {}
    kept: list[Candidate] = []
    for c in eligible:
        seg = c.segment
        if seg is not None and len(seg.text.split()) >= REPEAT_WORDS:
            speaker = seg.metadata.get("name") or seg.metadata.get("role") or ""
            # Exact text: turns that differ in a character (case, a line break) are not repeats.
            first = said.setdefault((str(speaker), seg.text.strip()), c)
            if first is not c and first.segment is not None and first.segment.source_id != seg.source_id:
                c.rejected = f"{REPEATS}{first.key} word for word"
                rejected.append(c)
                continue
        kept.append(c)
    return kept, rejected
