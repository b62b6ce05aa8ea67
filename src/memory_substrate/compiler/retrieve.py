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
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import query_terms

FACT_LOOKUP_DEPTH = 40
PROCEDURE_SCAN = 200
PROCEDURE_FLOOR = 0.2  # below this similarity a procedure is unrelated to the task


def memory_type(obj: MemoryObject) -> str:
    if obj.object_type == "knowledge":
        return "procedural" if obj.kind == "procedure" else "semantic"
    return "episodic" if obj.object_type == "activity" else "semantic"


def _overlap(terms: Sequence[str], text: str) -> float:
    if not terms:
        return 0.0
    have = set(query_terms(text))
    return sum(t in have for t in terms) / len(terms)


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
    out = []
    n = len(items)
    for pos, item in enumerate(items):
        obj = objs.get(item["id"])
        if obj is None:
            continue
        cos = max(0.0, float(item.get("semantic_score") or 0.0))
        sim = 0.5 * (1.0 - pos / n) + 0.5 * cos
        out.append(Candidate(obj.id, memory_type(obj), "fact_lookup", sim, profile, obj=obj))
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
