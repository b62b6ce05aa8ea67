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

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_substrate.compiler import episodes
from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.neighbourhood import entities_in, neighbourhood
from memory_substrate.indexing import segment_vector_id
from memory_substrate.models import MemoryObject
from memory_substrate.query.schemas import Filters, SearchInput, SearchOptions
from memory_substrate.query.search import SearchEngine
from memory_substrate.retrieval.text import stem
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import query_terms

FACT_LOOKUP_DEPTH = 40
PROCEDURE_SCAN = 200
PROCEDURE_FLOOR = 0.2  # below this similarity a procedure is unrelated to the task
FACT_FLOOR = 0.4  # below this a fact is unrelated: static-vector cosines of a short unrelated phrase ("talked with") reach 0.35


def memory_type(obj: MemoryObject) -> str:
    if obj.object_type == "knowledge":
        return "procedural" if obj.kind == "procedure" else "semantic"
    return "episodic" if obj.object_type == "activity" else "semantic"


def _overlap(terms: Sequence[str], text: str) -> float:
    if not terms:
        return 0.0
    have = set(query_terms(text))
    return sum(t in have for t in terms) / len(terms)


def _covered(text: str, terms: Sequence[str]) -> float:
    """The share of ``text``'s terms that the task's terms cover (both stemmed)."""
    own = {stem(t) for t in query_terms(text)}
    return len(own & {stem(t) for t in terms}) / len(own) if own else 0.0


def graph(session: StoreSession, task: str, profile: str, found: dict[str, Any]) -> list[Candidate]:
    entities = entities_in(session, task)
    found["entities"] = [{"id": k, "match": v} for k, v in entities.items()]
    terms = query_terms(task)
    out = []
    for fact, via in neighbourhood(session, list(entities)):
        strength = entities.get(via, 0.5)
        sim = strength * (0.7 + 0.3 * _overlap(terms, fact.title))
        out.append(Candidate(fact.id, memory_type(fact), "graph", sim, profile, obj=fact))
    return out


def episode_recall(rt: Runtime, session: StoreSession, task: str, profile: str, budget: int) -> list[Candidate]:
    """Captured turns through the segment ranker, with context expansion and episode-level
    relevance (episodes.py). The turns around the best hits are ranked there on their own merits,
    which replaced giving the reply before and after each of the 8 best hits a share of its
    similarity (that recalled less on the LoCoMo dev conversations: 0.849 / 0.912 against 0.854 /
    0.911 without it, at 1,500 / 4,096 tokens)."""
    return [
        Candidate(segment_vector_id(seg.source_id, seg.id), "episodic", "episode_recall", sim, profile, segment=seg)
        for seg, _, sim in episodes.recall(rt, session, task, budget)
    ]


def fact_lookup(
    engine: SearchEngine, task: str, object_types: list[str], profile: str, found: dict[str, Any]
) -> list[Candidate]:
    types = [t for t in object_types if t in ("knowledge", "activity", "work_item")]
    if not types:
        return []
    result = engine.search(
        SearchInput(query=task),
        SearchOptions(max_items=FACT_LOOKUP_DEPTH, filters=Filters(object_types=types)),  # type: ignore[arg-type]
    )
    found["search"] = result
    items = [i for i in result["items"] if i["kind"] != "procedure"]
    if not items:
        return []
    with engine.rt.read() as session:
        objs = session.get_objects([i["id"] for i in items])
        said = what_it_says(session, [o for o in objs.values() if o.object_type == "knowledge"], task)
    terms = query_terms(task)
    emb = engine.rt.embedder_or_none()
    cos_said: dict[str, float] = {}
    if emb is not None and said:
        qvec = np.asarray(emb.embed_query(task), dtype=np.float32)
        keys = list(said)
        vecs = np.asarray(emb.embed_documents([said[k] for k in keys]), dtype=np.float32)
        cos_said = {k: float(v @ qvec) for k, v in zip(keys, vecs, strict=True)}
    out, below = [], 0
    for item in items:
        obj = objs.get(item["id"])
        if obj is None:
            continue
        # How well it matches the task, not where it ranked: the first of forty unrelated
        # imported facts is still unrelated, and the ranking compares it with turns. A fact is
        # judged on what it says about its entities, not on their names: "Caroline talked with
        # Melanie" shares a name with every question about Caroline and answers none of them.
        if obj.id in said:
            sim = max(cos_said.get(obj.id, 0.0), _covered(said[obj.id], terms))
        else:
            cos = max(0.0, float(item.get("semantic_score") or 0.0))
            sim = max(cos, _overlap(terms, f"{obj.title} {obj.summary}"))
        cand = Candidate(obj.id, memory_type(obj), "fact_lookup", min(1.0, sim), profile, obj=obj)
        if sim < FACT_FLOOR:  # kept, rejected, so the trace says why it is not in the package
            below += 1
            cand.rejected = f"unrelated to the task (similarity {sim:.2f} < {FACT_FLOOR})"
        out.append(cand)
    found["facts_below_floor"] = below
    return out


def what_it_says(session: StoreSession, facts: list[MemoryObject], task: str) -> dict[str, str]:
    """Fact id -> its text without the names (and aliases) of the linked entities that the task
    names: what it says about them that the task does not already say. Only facts linking an
    entity the task names are listed."""
    linked = {f.id: [v for v in (f.payload.get("subject"), f.payload.get("object"))
                     if isinstance(v, str) and v.startswith("ent:")] for f in facts}
    ents = session.get_objects(sorted({e for ids in linked.values() for e in ids}))
    folded = f" {' '.join(query_terms(task))} "
    named: dict[str, list[str]] = {}
    for eid, ent in ents.items():
        names = [n for n in {ent.title, *(ent.payload.get("aliases") or [])} if n]
        named[eid] = [n for n in names if f" {' '.join(query_terms(n))} " in folded and query_terms(n)]
    out: dict[str, str] = {}
    for f in facts:
        cut = sorted({n for e in linked[f.id] for n in named.get(e, [])}, key=len, reverse=True)
        if not cut:
            continue
        text = f.title if f.summary == f.title else f"{f.title} {f.summary}"
        for n in cut:
            text = re.sub(rf"(?<!\w){re.escape(n)}(?!\w)", " ", text, flags=re.IGNORECASE)
        out[f.id] = " ".join(text.split())
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
        sim = max(cos.get(p.id, 0.0), _overlap(terms, f"{p.title} {p.payload.get('text') or p.summary}"))
        if sim < PROCEDURE_FLOOR:
            below += 1
            continue
        out.append(Candidate(p.id, "procedural", "procedure_assist", min(1.0, sim), profile, obj=p))
    found["procedures_below_floor"] = below
    return out
