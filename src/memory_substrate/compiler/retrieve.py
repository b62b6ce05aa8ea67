"""The compiler's four retrieval strategies. Each returns candidates with a similarity in 0..1;
ranking and exclusion happen later (rank.py), so every candidate found can be traced.

* graph: entities the task names and the facts around them (neighbourhood.py);
* episode_recall: captured turns through the segment ranker that search uses, with context
  expansion and episode-level relevance (episodes.py);
* fact_lookup: knowledge, activities and work items through object search (lexical, semantic
  and graph streams fused), procedures left to procedure assist;
* procedure_assist: procedures, scored by similarity to the task (only promoted ones survive
  ranking).
"""

from __future__ import annotations

from memory_substrate.compiler import episodes
from memory_substrate.compiler.answer_type import asks_what_is_open
from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.inputs import ContextScope
from memory_substrate.compiler.neighbourhood import entities_in, neighbourhood
from memory_substrate.compiler.rank import CLOSE_MATCH
from memory_substrate.compiler.relevance import fact_floor, judge
from memory_substrate.compiler.results import CompileNotes
from memory_substrate.graph.procedures import distinct_episodes
from memory_substrate.indexing import segment_vector_id
from memory_substrate.models import MemoryObject, Segment
from memory_substrate.runtime import Runtime
from memory_substrate.search.engine import SearchEngine
from memory_substrate.search.inputs import Filters, ObjectType
from memory_substrate.search.results import SearchPlan
from memory_substrate.storage.base import StoreSession
from memory_substrate.tokens import count_tokens
from memory_substrate.util import parse_time

FACT_LOOKUP_DEPTH = 40
# A task asking what work is open, left or blocked gets up to OPEN_WORK_LISTED open items in its
# scope (of the OPEN_WORK_SCAN most recently updated and those search found), best-matching first,
# whatever their similarity: "What's still open?" shares no word with the items that answer it, and
# an open item of the namespace is part of the answer to "what is open" whatever it is about.
OPEN_STATUSES = ("open", "in_progress", "blocked")
OPEN_WORK_LISTED = 8
OPEN_WORK_SCAN = 50
PROCEDURE_SCAN = 200
# No padding. How well memory covers the task: its best turn's absolute match
# (episodes.episode_match: cosine + share of the task's words) plus the share of the task's words
# any pooled turn holds (episodes.coverage). Below the task floor, unless the task names someone
# the pooled turns were said by or an entity with a fact the task asks about, memory barely covers
# it (so is a task naming something written as code, "__post_init__" or "usr_id", that no pooled
# turn holds: episodes.unseen_code_names): only the WEAK_TURNS best turns, at most WEAK_TOKENS of them with their episodes' opening
# lines, may enter, everything else only as a close match, and the package says so. A turn of an
# episode whose best turn matches below the episode floor never enters. Measured on the agent-work
# dev set (bench/agent_bench.py, ledgerline): its uncovered tasks reach 0.87-1.32 with the default embedder and its covered ones 1.52 and up
# (words alone: 0.33-0.86 and 0.86 and up); on LoCoMo dev (bench/context_bench.py, every
# question covered, nearly every one naming a speaker) the floor costs 0.000 / 0.001 at 1,500 /
# 4,096 tokens. The best match alone does not tell them apart: uncovered tasks reach 0.58-0.82
# while 1.6% of LoCoMo questions stay below 0.74 (docs/context-compiler.md).
MATCH_FLOORS = {"semantic": (1.4, 0.25), "lexical": (0.8, 0.2)}
WEAK_TURNS = 4
WEAK_TOKENS = 150
# What a turn of a new episode adds beside its text: the episode's opening line in the package
# (short id, title, start), about 20-30 tokens.
OPENING_TOKENS = 24
# A procedure's text is long (its steps), so it shares some words with most tasks: with the
# default embedder it needs what a fact needs (on the agent-work dev set promoted procedures
# entered 1.6 packages a task at 0.45, one in sixteen of them wanted); with words alone, one
# naming a quarter of the task's words is the recipe for it.
PROCEDURE_FLOORS = {"semantic": 0.6, "lexical": 0.25}


def memory_type(obj: MemoryObject) -> str:
    if obj.object_type == "knowledge":
        return "procedural" if obj.kind == "procedure" else "semantic"
    return "episodic" if obj.object_type == "activity" else "semantic"


def segment_memory_type(seg: Segment) -> str:
    """A conversation's turn is episodic: something that happened, said by someone at a time. A
    captured file, document, page or code chunk is semantic: it states what is true or how
    something is built, as knowledge does, and a task class weighs it as it weighs knowledge (a
    writing or architecture task at 1.0, wanting the design doc as much as the decision; debug at
    0.7, compliance at 0.8). Measured on the agent-work dev sets (bench/agent_bench.py, ledgerline
    and routewise): required files in packages at 1,500 tokens 0.571 weighed as semantic against
    0.444 weighed as turns, required turns 0.717 against 0.739."""
    return "episodic" if seg.locator.get("kind") == "message" else "semantic"


def _floor(cand: Candidate, sim: float, floor: float) -> int:
    """Reject (with its reason, so the trace says why) a candidate below ``floor``."""
    if sim >= floor:
        return 0
    cand.rejected = f"unrelated to the task (similarity {sim:.2f} < {floor})"
    return 1


def graph(
    rt: Runtime, session: StoreSession, task: str, profile: str, found: CompileNotes, *, led: bool = True
) -> list[Candidate]:
    """Facts around the entities the task names. The link is half the evidence, what the fact
    says (judged like fact lookup's, relevance.py) the other half: similarity = strength x (0.5 +
    0.5 x judged). They join the pool as candidates and the ranking decides. ``led``: the task's
    class leads with the graph (debug, architecture), where the link alone brings a fact in; for
    the other classes the graph is one more way to find knowledge, and a fact must say something
    the task asks (judged above the fact floor), as fact lookup's must: there "Caroline talked
    with Melanie" linked to every question naming Caroline (LoCoMo store (b) of
    bench/mixed_bench.py: -0.008 at 1,500 tokens when chat tasks took every linked fact)."""
    entities = entities_in(session, task)
    found["entities"] = [{"id": k, "match": v} for k, v in entities.items()]
    facts = neighbourhood(session, list(entities))
    sims = judge(rt, session, task, [f for f, _ in facts])
    # What a fact says counts only from the floor that makes it related at all: below it, the
    # cosine of a short text ("talked with") is noise, and it lifted every "A talked_with B"
    # fact a question's names link to (LoCoMo store (b) of bench/mixed_bench.py: -0.010).
    floor = fact_floor(rt)
    said = {k: (v if v >= floor else 0.0) for k, v in sims.items()}
    # An entity counts toward coverage (gate_coverage) only through a fact that says something
    # the task asks: a common word that happens to name an entity ("API", "team") does not.
    asked = sorted({via for fact, via in facts if said[fact.id]})
    if asked:
        found["entities_asked"] = asked
    out = []
    for fact, via in facts:
        cand = Candidate(
            fact.id,
            memory_type(fact),
            "graph",
            entities.get(via, 0.5) * (0.5 + 0.5 * said[fact.id]),
            profile,
            obj=fact,
        )
        if not led and not said[fact.id]:
            cand.rejected = f"links an entity the task names but says nothing it asks (similarity {sims[fact.id]:.2f} < {floor})"
        out.append(cand)
    return out


def episode_recall(
    rt: Runtime,
    session: StoreSession,
    task: str,
    profile: str,
    budget: int,
    found: CompileNotes | None = None,
) -> list[Candidate]:
    """Captured turns through the segment ranker, with context expansion and episode-level
    relevance (episodes.py). The turns around the best hits are ranked there on their own merits,
    which replaced giving the reply before and after each of the 8 best hits a share of its
    similarity (that recalled less on the LoCoMo dev conversations: 0.849 / 0.912 against 0.854 /
    0.911 without it, at 1,500 / 4,096 tokens)."""
    pool = episodes.recall(rt, session, task, budget, found)
    match = episodes.episode_match(task, pool)
    best = max(match.values(), default=0.0)
    episode_floor = MATCH_FLOORS["semantic" if rt.embedder_or_none() is not None else "lexical"][1]
    covered, named = episodes.coverage(task, pool)
    unseen = episodes.unseen_code_names(task, pool)
    out = []
    for seg, _, sim in pool:
        cand = Candidate(
            segment_vector_id(seg.source_id, seg.id),
            segment_memory_type(seg),
            "episode_recall",
            sim,
            profile,
            segment=seg,
        )
        m = match[seg.source_id]
        if m < episode_floor:
            cand.rejected = f"its episode does not match the task ({m:.2f} < {episode_floor})"
        out.append(cand)
    if found is not None:
        found["episode_match"] = round(best, 3)
        found["word_coverage"] = round(covered, 3)
        if named:
            found["participants_named"] = named
        if unseen:
            found["code_names_unseen"] = unseen
    return out


def gate_coverage(rt: Runtime, cands: list[Candidate], found: CompileNotes) -> None:
    """No padding, once every strategy has run: when memory barely covers the task (MATCH_FLOORS)
    only its best turns enter (``_weak_turns``), and every other candidate only as a close match
    (one that clears the ordinary floor there is most often a near miss on a word or two). A task
    that names someone the pooled turns were said by, or an entity of the graph with a fact that
    says something the task asks, or asks what work is open where some is, is covered whatever its
    other words: it is about what memory holds. ``found["coverage"]`` says which it was
    (``unjudged`` when no turns were recalled to judge it by: no conversations in the namespace,
    or scoped out) and ``coverage_by`` why."""
    if "episode_match" not in found:
        found["coverage"] = "unjudged"
        return
    task_floor = MATCH_FLOORS["semantic" if rt.embedder_or_none() is not None else "lexical"][0]
    match = found["episode_match"] + found["word_coverage"]
    by = (
        "participants"
        if found.get("participants_named")
        else "entities"
        if found.get("entities_asked")
        else "open work"
        if found.get("open_work_listed")
        else "match"
        if match >= task_floor and not found.get("code_names_unseen")
        else None
    )
    found["coverage"] = "covered" if by else "weak"
    if by:
        found["coverage_by"] = by
        return
    for c in cands:
        if c.rejected is None and c.strategy != "episode_recall" and c.similarity < CLOSE_MATCH:
            c.rejected = (
                f"memory barely covers the task: only a close match enters "
                f"(similarity {c.similarity:.2f} < {CLOSE_MATCH})"
            )
    unseen = found.get("code_names_unseen")
    _weak_turns(
        [c for c in cands if c.strategy == "episode_recall" and c.rejected is None],
        f"memory barely covers the task (no recalled turn holds {', '.join(unseen)})"
        if unseen and match >= task_floor
        else f"memory barely covers the task (match {match:.2f} < {task_floor})",
    )


def _weak_turns(turns: list[Candidate], why: str) -> None:
    """The best turns (and file or document chunks: whatever episode recall found) of a weakly
    covered task, in the order episode recall ranked them, while
    there are fewer than WEAK_TURNS and WEAK_TOKENS holds them with their episodes' opening
    lines; the first that does not fit ends the run, so a long turn is never passed over for
    shorter, worse ones (and when the best turn alone is too long, none enters: the package says
    memory barely covers the task)."""
    used = 0
    opened: set[str] = set()
    for i, c in enumerate(turns):
        seg = c.segment
        cost = (
            0 if seg is None else count_tokens(seg.text) + (0 if seg.source_id in opened else OPENING_TOKENS)
        )
        if i < WEAK_TURNS and used + cost <= WEAK_TOKENS:
            used += cost
            opened.update([seg.source_id] if seg is not None else [])
            continue
        cap = (
            f"only its {WEAK_TURNS} best turns may enter"
            if i >= WEAK_TURNS
            else f"the next best turn would take it past {WEAK_TOKENS} tokens"
        )
        for rest in turns[i:]:
            rest.rejected = f"{why}: {cap}"
        return


def fact_lookup(
    engine: SearchEngine,
    session: StoreSession,
    plan: SearchPlan,
    task: str,
    scope: ContextScope,
    profile: str,
    found: CompileNotes,
) -> list[Candidate]:
    """Object search (``SearchEngine.find_objects``, typed matches read in the compile's session)
    over the knowledge, activity and work-item types asked for; procedures are left to procedure
    assist. Each fact is judged for relevance (relevance.py) and floored."""
    types: list[ObjectType] = [t for t in scope.object_types if t in ("knowledge", "activity", "work_item")]
    if not types:
        return []
    filters = Filters(object_types=types).merged()
    # Matched chunks are a search answer's excerpts; the compiler reads the facts themselves.
    matches = engine.find_objects(session, plan, filters, FACT_LOOKUP_DEPTH, n_chunks=0)
    objs = [m.obj for m in matches if m.obj.kind != "procedure"]
    open_question = "work_item" in types and asks_what_is_open(task)
    if open_question:
        objs += _open_work(session, scope, {o.id for o in objs})
    if not objs:
        return []
    sims = judge(engine.rt, session, task, objs)
    floor = fact_floor(engine.rt)
    # "What's still open?" is answered by the open work as a list, best-matching first.
    answers = (
        {
            o.id
            for o in sorted(
                (
                    o
                    for o in objs
                    if o.object_type == "work_item" and o.status in OPEN_STATUSES and _in_scope(o, scope)
                ),
                key=lambda o: (-sims[o.id], o.id),
            )[:OPEN_WORK_LISTED]
        }
        if open_question
        else set()
    )
    out, below = [], 0
    for obj in objs:
        cand = Candidate(obj.id, memory_type(obj), "fact_lookup", sims[obj.id], profile, obj=obj)
        if obj.id not in answers:
            below += _floor(cand, sims[obj.id], floor)
        out.append(cand)
    found["facts_below_floor"] = below
    if answers:
        found["open_work_listed"] = len(answers)
    return out


def _open_work(session: StoreSession, scope: ContextScope, seen: set[str]) -> list[MemoryObject]:
    """The open work a task asking what is open (answer_type.asks_what_is_open) is answered by,
    beside what the search found: the most recently updated items in the task's scope."""
    items = session.list_objects(
        object_types=["work_item"],
        kinds=list(scope.kinds) or None,
        statuses=list(OPEN_STATUSES),
        limit=OPEN_WORK_SCAN,
    )
    return [o for o in items if o.id not in seen and _in_scope(o, scope)]


def _in_scope(obj: MemoryObject, scope: ContextScope) -> bool:
    """``scope.kinds`` and ``scope.scope_refs`` as compile._apply_scope applies them, so the open
    work listed is work the package may hold."""
    kinds_ok = not scope.kinds or obj.kind in scope.kinds
    return kinds_ok and (not scope.scope_refs or bool(set(scope.scope_refs) & set(obj.scope_refs)))


def procedure_assist(
    rt: Runtime, session: StoreSession, task: str, profile: str, found: CompileNotes
) -> list[Candidate]:
    # Promoted procedures first, so a pile of unpromoted candidates can never crowd them out; a few
    # candidates follow so the trace can say why they were left out.
    procs = session.list_objects(
        object_types=["knowledge"], kinds=["procedure"], statuses=["active"], limit=PROCEDURE_SCAN
    )
    procs += session.list_objects(
        object_types=["knowledge"],
        kinds=["procedure"],
        statuses=["candidate"],
        limit=max(10, PROCEDURE_SCAN - len(procs)) // 10,
    )
    if not procs:
        return []
    # Judged like every other piece of knowledge (relevance.py), on one absolute scale, so a
    # promoted procedure unrelated to the task stays out of its package whatever the class.
    sims = judge(rt, session, task, procs)
    floor = PROCEDURE_FLOORS["semantic" if rt.embedder_or_none() is not None else "lexical"]
    out, below = [], 0
    for p in procs:
        if sims[p.id] < floor:
            below += 1
            continue
        out.append(Candidate(p.id, "procedural", "procedure_assist", sims[p.id], profile, obj=p))
    found["procedures_below_floor"] = below
    _last_seen(session, out)
    return out


def _last_seen(session: StoreSession, cands: list[Candidate]) -> None:
    """Each procedure's recency comes from the latest episode it was seen in (a conversation's last
    message, else when the episode was captured), not from when the procedure was written."""
    episodes = {c.key: distinct_episodes(c.obj) for c in cands if c.obj is not None}
    sources = session.get_objects(sorted({e for eps in episodes.values() for e in eps}))
    for c in cands:
        times = [
            t
            for e in episodes.get(c.key, ())
            if (src := sources.get(e)) is not None
            for t in [src.payload.get("ended_at") or src.payload.get("started_at") or src.created_at]
            if t
        ]
        dated = []
        for t in times:
            try:
                dated.append((parse_time(str(t)), str(t)))
            except ValueError:  # an imported source's payload may carry anything
                continue
        if dated:
            c.seen_at = max(dated)[1]
