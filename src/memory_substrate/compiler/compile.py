"""The task-aware context compiler behind ``memory_query`` mode ``context``.

classify -> retrieve per profile -> rank on four dimensions -> render -> fit the budget -> trace.
No model call anywhere on this path. The result keeps every field of the plain context
result and adds ``classification``, ``format``, ``token_count``, ``trace_id`` and ``content``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import get_args

from memory_substrate.answers.shaping import take_within
from memory_substrate.answers.views import compact_view
from memory_substrate.compiler import more, render, retrieve, superseded, trace
from memory_substrate.compiler.answer_type import work_stance
from memory_substrate.compiler.budget import Fitted, estimate, fit
from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.classify import Classification, classify, given
from memory_substrate.compiler.inputs import ContextInput, ContextOptions, ContextScope
from memory_substrate.compiler.profiles import PROFILE_STRATEGIES, TYPE_WEIGHTS
from memory_substrate.compiler.rank import exclusion, rank
from memory_substrate.compiler.render import pick_format
from memory_substrate.compiler.results import (
    CompileNotes,
    ContextAnswer,
    ContextItem,
    ContextResult,
    Hint,
    OpenWorkItem,
    PackageHeader,
    ProfileEntry,
    Section,
    SelectedItem,
    TracedNote,
)
from memory_substrate.compiler.settings import DEFAULT_TOKEN_BUDGET, CompileRequest, resolve
from memory_substrate.embed.base import query_memo
from memory_substrate.ids import short_forms
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject
from memory_substrate.runtime import Runtime
from memory_substrate.search.engine import SearchEngine, semantic_backend
from memory_substrate.search.results import SearchPlan
from memory_substrate.tokens import count_tokens
from memory_substrate.util import now_iso, parse_time

POLICY_SNIPPETS = [
    "Query memory before starting work; retry with expanded terms when results are weak.",
    "Write durable memory only through memory_remember with reason, memory_source and scope_refs.",
    "Treat candidate and contested items as unverified; check their evidence before relying on them.",
]
OPEN_WORK = ("open", "in_progress", "blocked")


class _Clock:
    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.stages[stage] = self.stages.get(stage, 0.0) + (now - self._t) * 1000
        self._t = now


# What each strategy yields, by memory type and by object type (scope.object_types): a strategy
# runs when some type it yields has a non-zero weight for the task and is in scope.
YIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "fact_lookup": (("semantic", "episodic"), ("knowledge", "activity", "work_item")),
    "graph": (("semantic",), ("knowledge",)),
    "episode_recall": (
        ("episodic", "semantic"),
        ("source",),
    ),  # turns; files and documents (segment_memory_type)
    "procedure_assist": (("procedural",), ("knowledge",)),
}


def _strategies(
    cls: Classification, object_types: set[str]
) -> tuple[list[tuple[str, str, str | None]], list[ProfileEntry]]:
    """(strategy, class, why) to run, each strategy once, and the ones left out with their reason.
    The primary class's profile leads (its retrieval profile), then every other strategy
    follows: each memory type enters by its weight in the ranking, and only a weight of 0.0
    excludes, so a debug task still finds the open work item and the decision it names.
    Strategies add candidates to one pool; the four-dimension ranking decides."""
    plan: list[tuple[str, str, str | None]] = []
    skipped: list[ProfileEntry] = []
    order: list[tuple[str, str, str | None]] = [
        (s, c, None) for c in cls.classes for s in PROFILE_STRATEGIES[c]
    ]
    order += [(s, cls.primary, "every memory type enters by its weight") for s in YIELDS]
    for s, c, why in order:
        if s in [p for p, _, _ in plan] or s in [k["strategy"] for k in skipped]:
            continue
        memory_types, types = YIELDS[s]
        if not object_types & set(types):
            skipped.append({"class": c, "strategy": s, "skipped": "outside scope.object_types", "found": 0})
        elif all(TYPE_WEIGHTS[cls.primary][m] == 0.0 for m in memory_types):
            # the primary class's 0.0 is a hard exclude (rank.exclusion), whatever a second profile says
            skipped.append(
                {
                    "class": c,
                    "strategy": s,
                    "found": 0,
                    "skipped": (
                        f"hard exclude: {'/'.join(memory_types)} memory has weight 0.0 for {cls.primary} tasks"
                    ),
                }
            )
        else:
            plan.append((s, c, why))
    return plan, skipped


def _present(counts: list[tuple[str, str, str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for otype, kind, _status, n in counts:
        key = "procedure" if (otype == "knowledge" and kind == "procedure") else otype
        out[key] = out.get(key, 0) + n
    return out


def compile_context(rt: Runtime, data: ContextInput, opts: ContextOptions) -> ContextAnswer | ContextResult:
    """``memory_query`` mode ``context``: one compile, read in one snapshot of the namespace; its
    trace is written after the snapshot closes (compiler/trace.py)."""
    with rt.snapshot(), query_memo():
        return _compile(rt, data, opts)


def _compile(rt: Runtime, data: ContextInput, opts: ContextOptions) -> ContextAnswer | ContextResult:
    """Compile a context package for ``data.task``. Raises ``ValidationError`` when a setting is
    given twice with different values (input_data and options)."""
    clock = _Clock()
    req: CompileRequest = resolve(data, opts)
    engine = SearchEngine(rt)
    plan = engine.plan(data.task)
    task = plan.clean.text or data.task
    emb = rt.embedder_or_none()
    cls = given(req.task_class) if req.task_class else classify(task, emb)
    clock.lap("classify")

    with rt.read() as session:
        config = session.get_config()
        present = _present(session.count_objects())
    budget, budget_source = _budget(req, config.get("token_budget"))
    fmt = pick_format(req.model, req.format)
    scope = data.scope
    types_given = "object_types" in scope.model_fields_set
    # Without object_types the package draws on every type: the listed defaults and captured turns.
    in_scope = set(scope.object_types) | (set() if types_given else {"source"})

    found: CompileNotes = {}
    cands, profiles = _retrieve(
        rt, engine, plan, task, cls, data.scope, in_scope, budget, present, clock, found
    )
    pool = _select(rt, cands, cls, task, opts, scope, in_scope)
    clock.lap("rank")

    header: PackageHeader = {"task_class": cls.primary}
    if cls.dual and cls.secondary:
        header["secondary_class"] = cls.secondary
    if found.get("coverage") == "weak":
        # Said in the package itself: an agent reading a near-empty package learns why it is empty.
        header["coverage"] = "memory barely covers this task"
    floor = more.FLOORS["semantic" if emb is not None else "lexical"]
    fitted, indexed = _fit_with_index(
        pool.eligible,
        pool.rejected,
        budget,
        fmt,
        header,
        pool.sources,
        pool.names,
        pool.allowed if found.get("coverage") != "weak" else None,
        floor,
    )
    pool.rejected.extend(fitted.dropped)
    clock.lap("render")

    candidates = len(pool.eligible) + len(pool.rejected) - len(fitted.dropped)
    data_trace = trace.build(
        task=task,
        model=req.model,
        classification=cls.to_dict(),
        profiles=profiles,
        found=candidates,
        selected=fitted.selected,
        rejected=pool.rejected,
        token_count=fitted.token_count,
        budget_tokens=budget,
        budget_source=budget_source,
        fmt=fmt,
        latency_ms=dict(clock.stages),
        extra=_trace_extra(found, fitted, indexed),
    )
    trace_id = trace.record(rt, data_trace)
    clock.lap("trace")
    package = _Package(task, plan, cls, fmt, budget, budget_source, fitted, trace_id, candidates=candidates)
    if opts.detail == "compact" and not opts.include_items:
        return _answer(rt, package)
    items = _items(rt, fitted.selected, opts.max_items, list(scope.object_types), scope.scope_refs)
    return _result(rt, package, items, opts, scope.model_dump(), clock.stages)


@dataclass
class _Pool:
    """The ranked pool: what may enter best first, what may not with its reason, the episodes
    and short ids the package may show, and what governance and scope let in (asked again of a
    rejected candidate by the index)."""

    eligible: list[Candidate]
    rejected: list[Candidate]
    sources: dict[str, MemoryObject]
    names: dict[str, str]
    allowed: Callable[[Candidate], bool]


def _select(
    rt: Runtime,
    cands: list[Candidate],
    cls: Classification,
    task: str,
    opts: ContextOptions,
    scope: ContextScope,
    in_scope: set[str],
) -> _Pool:
    """Rank the candidates, mark the turns of superseded knowledge, and apply the scope filters."""
    now = parse_time(now_iso())
    open_work, past = work_stance(task)  # "Write the postmortem" is about work done, not work to do
    eligible, rejected = rank(
        cands,
        cls.classes,
        include_unverified=opts.include_unverified,
        now=now,
        open_work=open_work,
        past_work=past,
    )
    turns = [c for c in [*eligible, *rejected] if c.segment is not None]
    # The episodes the package may open, and those the index (compiler/more.py) may name.
    source_ids = sorted({c.segment.source_id for c in turns if c.segment is not None})
    with rt.read() as session:
        sources = session.get_objects(source_ids)
        replaced = superseded.successors(session, turns)
        # the short form of every id the package may show (ids.py): one query
        names = short_forms(
            session,
            [
                *source_ids,
                *_object_ids(eligible),
                *_object_ids(rejected),
                *(n.id for n in replaced.values() if n is not None),
            ],
        )
    superseded.mark(turns, replaced, names)
    _apply_scope(eligible, rejected, in_scope, scope.scope_refs, scope.kinds, sources)

    def allowed(c: Candidate) -> bool:
        """What governance and scope let into the package, asked again of a rejected candidate."""
        return (
            exclusion(c, cls.classes[0], opts.include_unverified, now, open_work, past) is None
            and _scope_reason(c, in_scope, scope.scope_refs, scope.kinds, sources) is None
        )

    return _Pool(eligible, rejected, sources, names, allowed)


def _trace_extra(found: CompileNotes, fitted: Fitted, indexed: list[more.Entry]) -> JsonObject:
    """What the trace carries beside the candidates: linked entities, the envelope, the index's
    entries and the strategies' notes."""
    return {
        "entities": found.get("entities", []),
        "envelope_tokens": fitted.envelope_tokens,
        "more": [{"id": e.candidate.key, "group": e.group, "why": e.candidate.rejected} for e in indexed],
        **{k: found[k] for k in TRACED if k in found},
    }


def _budget(req: CompileRequest, namespace_budget: object) -> tuple[int, str]:
    """The token budget and where it came from: the request, the namespace (its config's
    ``token_budget``, an int wherever set: maintain's config mode validates it), or the default."""
    if req.budget_tokens is not None:
        return req.budget_tokens, "request"
    if isinstance(namespace_budget, int) and namespace_budget:
        return int(namespace_budget), "namespace"
    return DEFAULT_TOKEN_BUDGET, "default"


# What the strategies noted about the task that the trace carries (retrieve.py, episodes.py).
TRACED: tuple[TracedNote, ...] = get_args(TracedNote)
STRATEGY_NEEDS = {
    "graph": "entity",
    "fact_lookup": None,
    "procedure_assist": "procedure",
    "episode_recall": "source",
}


def _retrieve(
    rt: Runtime,
    engine: SearchEngine,
    plan: SearchPlan,
    task: str,
    cls: Classification,
    scope: ContextScope,
    in_scope: set[str],
    budget: int,
    present: dict[str, int],
    clock: _Clock,
    found: CompileNotes,
) -> tuple[list[Candidate], list[ProfileEntry]]:
    """Every strategy the task's class calls for and every other one (_strategies), each read in
    the compile's snapshot: the pool of candidates and the trace's profile entries."""
    has_lookup = any(present.get(t) for t in ("knowledge", "activity", "work_item"))
    cands: list[Candidate] = []
    profiles: list[ProfileEntry] = []
    plan_run, skipped = _strategies(cls, in_scope)
    for strategy, cls_name, why in plan_run:
        need = STRATEGY_NEEDS[strategy]
        empty = (not has_lookup) if strategy == "fact_lookup" else not present.get(need or "")
        entry: ProfileEntry = {"class": cls_name, "strategy": strategy}
        if why:
            entry["why"] = why
        if empty:
            entry["skipped"] = "nothing of this memory type in the namespace"
            entry["found"] = 0
            profiles.append(entry)
            continue
        before = len(cands)
        with rt.read() as session:  # the compile's snapshot
            if strategy == "fact_lookup":
                cands.extend(retrieve.fact_lookup(engine, session, plan, task, scope, cls_name, found))
            elif strategy == "graph":
                cands.extend(retrieve.graph(rt, session, task, cls_name, found, led=why is None))
            elif strategy == "episode_recall":
                cands.extend(retrieve.episode_recall(rt, session, task, cls_name, budget, found))
            else:
                cands.extend(retrieve.procedure_assist(rt, session, task, cls_name, found))
        entry["found"] = len(cands) - before
        profiles.append(entry)
        clock.lap(f"retrieve.{strategy}")
    profiles.extend(skipped)
    retrieve.gate_coverage(rt, cands, found)
    return cands, profiles


def _object_ids(cands: list[Candidate]) -> list[str]:
    """Ids of the knowledge in the pool and of the sources its evidence cites."""
    out: list[str] = []
    for c in cands:
        if c.obj is not None:
            out.append(c.obj.id)
            out.extend(str(e["source_id"]) for e in c.obj.evidence_refs[:5] if e.get("source_id"))
    return out


def _apply_scope(
    eligible: list[Candidate],
    rejected: list[Candidate],
    object_types: set[str],
    scope_refs: list[str],
    kinds: list[str],
    sources: dict[str, MemoryObject],
) -> None:
    """Every scope filter, on every candidate whichever strategy found it; each one left out is
    traced with the filter that removed it."""
    keep: list[Candidate] = []
    for c in eligible:
        c.rejected = _scope_reason(c, object_types, scope_refs, kinds, sources)
        (rejected if c.rejected else keep).append(c)
    eligible[:] = keep


def _scope_reason(
    c: Candidate,
    object_types: set[str],
    scope_refs: list[str],
    kinds: list[str],
    sources: dict[str, MemoryObject],
) -> str | None:
    otype = c.obj.object_type if c.obj is not None else "source"
    if otype not in object_types:
        return f"{otype} outside scope.object_types"
    if c.obj is not None:
        if kinds and c.obj.kind not in kinds:
            return f"kind {c.obj.kind} outside scope.kinds"
        refs = set(c.obj.scope_refs)
    else:
        src = sources.get(c.segment.source_id) if c.segment else None
        refs = set(src.scope_refs) if src is not None else set()
    if scope_refs and not set(scope_refs) & refs:
        return "outside scope_refs"
    return None


def _fit_with_index(
    eligible: list[Candidate],
    rejected: list[Candidate],
    budget: int,
    fmt: str,
    header: PackageHeader,
    sources: dict[str, MemoryObject],
    names: dict[str, str],
    allowed: Callable[[Candidate], bool] | None,
    floor: float,
) -> tuple[Fitted, list[more.Entry]]:
    """The package with its index (compiler/more.py) of what fell under a floor or outside the
    budget. The packing is estimated first (no rendering) to learn what the budget leaves out;
    the index is drawn from that and what fell under a floor, at most a share of the budget, and
    the items in full are packed into what it leaves. When that packing leaves out more than the
    estimate did, the index is drawn afresh within the same room. So the index costs the full
    part only what it needs. No index for a task memory barely covers (``allowed`` None) or whose
    package would hold nothing in full: on similarity alone, offline judges list unrelated items
    for a task memory does not hold."""
    if allowed is None:
        return fit(eligible, budget, fmt, header, sources, names), []
    weights, dropped, used = estimate(eligible, budget, fmt, header, sources, names)
    entries = (
        more.choose(more.pool(dropped, rejected, floor, allowed), more.allowance(budget), names, sources)
        if len(dropped) < len(eligible)
        else []
    )
    if not entries:
        return fit(eligible, budget, fmt, header, sources, names, weights=weights), []
    room = more.cost(entries)
    fitted = fit(eligible, budget, fmt, header, sources, names, [e.line for e in entries], weights)
    if not fitted.selected:
        for c in eligible:
            c.rejected = None
        return fit(eligible, budget, fmt, header, sources, names, weights=weights), []
    if used + room > budget:  # the items in full gave up room to the index: what they left out may be listed
        entries = more.choose(more.pool(fitted.dropped, rejected, floor, allowed), room, names, sources)
        fitted.content, fitted.token_count = _within(
            budget, fmt, header, sources, names, fitted.selected, entries
        )
    return fitted, entries


def _within(
    budget: int,
    fmt: str,
    header: PackageHeader,
    sources: dict[str, MemoryObject],
    names: dict[str, str],
    selected: list[Candidate],
    entries: list[more.Entry],
) -> tuple[str, int]:
    """The package with as many of the index's lines as keep it within the budget (``entries``
    is cut to them): the last lines go, as many as the excess counts, until it fits."""
    while True:
        content = render.render(fmt, header, selected, sources, names, [e.line for e in entries])
        total = count_tokens(content)
        if total <= budget or not entries:
            return content, total
        excess = total - budget
        while entries and excess > 0:
            excess -= count_tokens(entries.pop().line) + 1


def _items(
    rt: Runtime, selected: list[Candidate], max_items: int, object_types: list[str], scope_refs: list[str]
) -> list[ContextItem]:
    """The context answer's ``items``: selected memory objects, then open work in scope."""
    items: list[ContextItem] = []
    for c in selected:
        if c.obj is not None and len(items) < max_items:
            item: SelectedItem = {
                **compact_view(c.obj),
                "retrieval_sources": c.strategies or [c.strategy],
                "scores": {k: round(v, 4) for k, v in c.scores.items()},
            }
            items.append(item)
    if "work_item" in object_types and len(items) < max_items:
        with rt.read() as session:
            open_work = session.list_objects(
                object_types=["work_item"], statuses=list(OPEN_WORK), limit=max_items
            )
        have = {i["id"] for i in items}
        for obj in open_work:
            if len(items) >= max_items:
                break
            if obj.id in have or (scope_refs and not set(scope_refs) & set(obj.scope_refs)):
                continue
            open_item: OpenWorkItem = {**compact_view(obj), "retrieval_sources": ["open_work"]}
            items.append(open_item)
    return items


ITEM_TOKENS = 600  # compact detail: the share of the response budget that lists items beside the package


def _section(items: list[ContextItem], predicate: Callable[[ContextItem], bool]) -> Section:
    ids = [i["id"] for i in items if predicate(i)]
    return {"field": "items", "count": len(ids), "ids": ids}


@dataclass(frozen=True)
class _Package:
    """What one compile decided: the task as read, its plan and class, the format and budget, the
    fitted package, its trace, and how many candidates the package was chosen from."""

    task: str
    plan: SearchPlan
    cls: Classification
    fmt: str
    budget: int
    budget_source: str
    fitted: Fitted
    trace_id: str
    candidates: int


def _answer(rt: Runtime, package: _Package) -> ContextAnswer:
    """The compact answer: the package in ``content`` and the facts about it, nothing said twice.
    The structured directory (``items``, ``context_tiers``) comes with ``include_items`` or
    ``detail: "full"`` (``_result``)."""
    cls = package.cls.to_dict()
    semantic = semantic_backend(rt, "compact")
    out: ContextAnswer = {
        "result_type": "context_result",
        "task": package.task,
        "format": package.fmt,
        "token_count": package.fitted.token_count,
        "context_budget": {
            "budget_tokens": package.budget,
            "budget_source": package.budget_source,
            "package_entries": len(package.fitted.selected),
            "candidate_items": package.candidates,
        },
        "classification": {
            "primary": cls["primary"],
            "method": cls["method"],
            "dual_profile": cls["dual_profile"],
        },
        # in this order whatever order the embedder's status lists them: the answer's bytes are stable
        "semantic_backend": {k: semantic[k] for k in ("enabled", "provider", "reason") if k in semantic},
        "trace_id": package.trace_id,
        "content": package.fitted.content,
    }
    sanitizer = package.plan.clean.diagnostics()
    if sanitizer.get("was_sanitized"):
        out["query_sanitizer"] = sanitizer
    return out


def _result(
    rt: Runtime,
    package: _Package,
    items: list[ContextItem],
    opts: ContextOptions,
    scope: JsonObject,
    stages: dict[str, float],
) -> ContextResult:
    task, plan, cls, fmt, fitted = package.task, package.plan, package.cls, package.fmt, package.fitted
    evidence_ids: list[str] = [c.key for c in fitted.selected if c.segment is not None]
    for c in fitted.selected:
        if c.obj is not None:
            evidence_ids.extend(
                f"{e['source_id']}#{e['segment_id']}" if e.get("segment_id") else e["source_id"]
                for e in c.obj.evidence_refs
            )
    evidence_ids = list(dict.fromkeys(evidence_ids))
    hints: list[Hint] = [
        {
            "tool": "memory_query",
            "mode": "expand",
            "input_data": {"id": i["id"]},
            "why": f"details of {i['title'][:60]}",
        }
        for i in items[:3]
    ]
    for sid in list(dict.fromkeys(c.segment.source_id for c in fitted.selected if c.segment is not None))[
        : 3 - len(hints[:3])
    ]:
        hints.append(
            {"tool": "memory_query", "mode": "page", "input_data": {"id": sid}, "why": "the whole episode"}
        )
    compact = opts.detail == "compact"
    if compact:
        # The package in `content` carries the material; `items` is its directory, cut to a share of
        # the response budget (docs/context-compiler.md). `detail: "full"` lists every item.
        items = take_within(items, ITEM_TOKENS)
    return {
        "result_type": "context_result",
        "task": task,
        "items": items,
        "context_tiers": {
            "policy": {"resource": "memory://policy", "snippets": POLICY_SNIPPETS},
            "active_task": {"task": task, "scope": scope},
            "decisions": _section(items, lambda i: i["kind"] == "decision"),
            "procedures": _section(items, lambda i: i["kind"] == "procedure"),
            "evidence": {
                "field": "evidence_refs",
                "count": len(evidence_ids),
                "ids": evidence_ids[: 8 if compact else 20],
            },
            "open_work": _section(
                items, lambda i: i["object_type"] == "work_item" and i["status"] in OPEN_WORK
            ),
            "deep_search_hints": hints,
        },
        "context_budget": {
            "max_items": opts.max_items,
            "returned_items": len(items),
            "candidate_items": package.candidates,
            "detail": opts.detail,
            "budget_tokens": package.budget,
            "budget_source": package.budget_source,
            "token_count": fitted.token_count,
            "package_entries": len(fitted.selected),
        },
        "normalized_terms": plan.terms,
        "semantic_backend": semantic_backend(rt, opts.detail),
        "query_sanitizer": plan.clean.diagnostics(),
        "classification": cls.to_dict(),
        "format": fmt,
        "token_count": fitted.token_count,
        "trace_id": package.trace_id,
        "content": fitted.content,
        "latency_ms": {k: round(v, 2) for k, v in stages.items()},
    }
