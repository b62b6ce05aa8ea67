"""How relevant a piece of knowledge is to a task, on one scale for every strategy that finds it
(fact lookup, graph), so the four-dimension ranking can weigh it against the turns.

Similarity is how well the item matches the task, not where a search ranked it (the first of
forty unrelated imported facts is still unrelated): max(cosine, share of the task's terms in it).
A fact that links an entity the task names is judged on what it says beyond those names: the
cosine of the rest of its text, or the share of the rest's terms the task covers (stemmed).
"Caroline talked with Melanie" shares a name with every question about Caroline and answers none
of them; "Customer Portal uses LangChain" answers "Which technology does the Customer Portal use?".
Below ``FACT_FLOOR`` an item is unrelated (traced with that reason, left out).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from memory_substrate.models import MemoryObject
from memory_substrate.retrieval.text import stem
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import query_terms

# Static-vector cosines of a short unrelated phrase ("talked with" against a question) reach 0.35.
FACT_FLOOR = 0.4


def overlap(terms: Sequence[str], text: str) -> float:
    if not terms:
        return 0.0
    have = set(query_terms(text))
    return sum(t in have for t in terms) / len(terms)


def _covered(text: str, terms: Sequence[str]) -> float:
    """The share of ``text``'s terms that the task's terms cover (both stemmed)."""
    own = {stem(t) for t in query_terms(text)}
    return len(own & {stem(t) for t in terms}) / len(own) if own else 0.0


def judge(rt: Runtime, session: StoreSession, task: str, objs: Sequence[MemoryObject],
          cosines: Mapping[str, float]) -> dict[str, float]:
    """Object id -> similarity to ``task`` in 0..1. ``cosines``: the task's cosine to an object
    where a search already has it (others without a linked name score on their terms)."""
    said = what_it_says(session, [o for o in objs if o.object_type == "knowledge"], task)
    terms = query_terms(task)
    cos_said: dict[str, float] = {}
    emb = rt.embedder_or_none()
    if emb is not None and said:
        qvec = np.asarray(emb.embed_query(task), dtype=np.float32)
        keys = list(said)
        vecs = np.asarray(emb.embed_documents([said[k] for k in keys]), dtype=np.float32)
        cos_said = {k: float(v @ qvec) for k, v in zip(keys, vecs, strict=True)}
    out = {}
    for obj in objs:
        if obj.id in said:
            sim = max(cos_said.get(obj.id, 0.0), _covered(said[obj.id], terms))
        else:
            sim = max(cosines.get(obj.id, 0.0), overlap(terms, f"{obj.title} {obj.summary}"))
        out[obj.id] = max(0.0, min(1.0, sim))
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
