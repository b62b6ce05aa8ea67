"""The four retrieval strategies of spec 004. Each returns candidates with a similarity in 0..1;
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

from typing import Any

import numpy as np

from memory_substrate.compiler import episodes
from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.neighbourhood import entities_in, neighbourhood
from memory_substrate.compiler.relevance import FACT_FLOOR, judge, overlap
from memory_substrate.graph.procedures import distinct_episodes
from memory_substrate.indexing import segment_vector_id
from memory_substrate.models import MemoryObject
from memory_substrate.query.results import SearchPlan
from memory_substrate.query.schemas import Filters
from memory_substrate.query.search import SearchEngine
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import query_terms
from memory_substrate.util import parse_time

FACT_LOOKUP_DEPTH = 40
PROCEDURE_SCAN = 200
PROCEDURE_FLOOR = 0.2  # below this similarity a procedure is unrelated to the task


def memory_type(obj: MemoryObject) -> str:
    if obj.object_type == "knowledge":
        return "procedural" if obj.kind == "procedure" else "semantic"
    return "episodic" if obj.object_type == "activity" else "semantic"


def _floor(cand: Candidate, sim: float) -> int:
    """Reject (with its reason, so the trace says why) a candidate below ``FACT_FLOOR``."""
    if sim >= FACT_FLOOR:
        return 0
    cand.rejected = f"unrelated to the task (similarity {sim:.2f} < {FACT_FLOOR})"
    return 1


def graph(rt: Runtime, session: StoreSession, task: str, profile: str, found: dict[str, Any]) -> list[Candidate]:
    """Facts around the entities the task names. The link is half the evidence, what the fact
    says (judged like fact lookup's, relevance.py) the other half: similarity = strength x (0.5 +
    0.5 x judged). They join the pool as candidates and the ranking decides."""
    entities = entities_in(session, task)
    found["entities"] = [{"id": k, "match": v} for k, v in entities.items()]
    facts = neighbourhood(session, list(entities))
    sims = judge(rt, session, task, [f for f, _ in facts])
    return [Candidate(fact.id, memory_type(fact), "graph", entities.get(via, 0.5) * (0.5 + 0.5 * sims[fact.id]),
                      profile, obj=fact) for fact, via in facts]


def episode_recall(rt: Runtime, session: StoreSession, task: str, profile: str, budget: int,
                   found: dict[str, Any] | None = None) -> list[Candidate]:
    """Captured turns through the segment ranker, with context expansion and episode-level
    relevance (episodes.py). The turns around the best hits are ranked there on their own merits,
    which replaced giving the reply before and after each of the 8 best hits a share of its
    similarity (that recalled less on the LoCoMo dev conversations: 0.849 / 0.912 against 0.854 /
    0.911 without it, at 1,500 / 4,096 tokens)."""
    return [
        Candidate(segment_vector_id(seg.source_id, seg.id), "episodic", "episode_recall", sim, profile, segment=seg)
        for seg, _, sim in episodes.recall(rt, session, task, budget, found)
    ]


def fact_lookup(
    engine: SearchEngine, session: StoreSession, plan: SearchPlan, task: str, object_types: list[str], profile: str,
    found: dict[str, Any],
) -> list[Candidate]:
    """Object search (``SearchEngine.find_objects``, typed matches read in the compile's session)
    over the knowledge, activity and work-item types asked for; procedures are left to procedure
    assist. Each fact is judged for relevance (relevance.py) and floored."""
    types = [t for t in object_types if t in ("knowledge", "activity", "work_item")]
    if not types:
        return []
    filters = Filters(object_types=types).merged()  # type: ignore[arg-type]
    # Matched chunks are a search answer's excerpts; the compiler reads the facts themselves.
    matches = engine.find_objects(session, plan, filters, FACT_LOOKUP_DEPTH, n_chunks=0)
    objs = [m.obj for m in matches if m.obj.kind != "procedure"]
    if not objs:
        return []
    sims = judge(engine.rt, session, task, objs)
    out, below = [], 0
    for obj in objs:
        cand = Candidate(obj.id, memory_type(obj), "fact_lookup", sims[obj.id], profile, obj=obj)
        below += _floor(cand, sims[obj.id])
        out.append(cand)
    found["facts_below_floor"] = below
    return out


def procedure_assist(rt: Runtime, session: StoreSession, task: str, profile: str, found: dict[str, Any]) -> list[Candidate]:
    # Promoted procedures first, so a pile of unpromoted candidates can never crowd them out; a few
    # candidates follow so the trace can say why they were left out.
    procs = session.list_objects(object_types=["knowledge"], kinds=["procedure"], statuses=["active"], limit=PROCEDURE_SCAN)
    procs += session.list_objects(object_types=["knowledge"], kinds=["procedure"], statuses=["candidate"],
                                  limit=max(10, PROCEDURE_SCAN - len(procs)) // 10)
    if not procs:
        return []
    terms = query_terms(task)
    cos: dict[str, float] = {}
    emb = rt.embedder_or_none()
    if emb is not None:
        qvec = np.asarray(emb.embed_query(task), dtype=np.float32)
        vectors = session.get_vectors(emb.name, "object", [p.id for p in procs])
        cos = {k: float(v @ qvec) for k, v in vectors.items()}
    out, below = [], 0
    for p in procs:
        sim = max(cos.get(p.id, 0.0), overlap(terms, f"{p.title} {p.payload.get('text') or p.summary}"))
        if sim < PROCEDURE_FLOOR:
            below += 1
            continue
        out.append(Candidate(p.id, "procedural", "procedure_assist", min(1.0, sim), profile, obj=p))
    found["procedures_below_floor"] = below
    _last_seen(session, out)
    return out


def _last_seen(session: StoreSession, cands: list[Candidate]) -> None:
    """Each procedure's recency comes from the latest episode it was seen in (a conversation's last
    message, else when the episode was captured), not from when the procedure was written."""
    episodes = {c.key: distinct_episodes(c.obj) for c in cands if c.obj is not None}
    sources = session.get_objects(sorted({e for eps in episodes.values() for e in eps}))
    for c in cands:
        times = [t for e in episodes.get(c.key, ()) if (src := sources.get(e)) is not None
                 for t in [src.payload.get("ended_at") or src.payload.get("started_at") or src.created_at] if t]
        if times:
            c.seen_at = max(times, key=parse_time)
