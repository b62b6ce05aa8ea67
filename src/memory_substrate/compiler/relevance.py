"""How relevant a piece of knowledge is to a task, on one scale for every strategy that finds it
(fact lookup, graph), so the four-dimension ranking can weigh it against the turns.

Similarity is how well the item matches the task, not where a search ranked it (the first of
forty unrelated imported facts is still unrelated): cosine plus the share of the task's words in it.
A fact that links an entity the task names is judged on what it says beyond those names: the
cosine of the rest of its text, or the share of the rest's terms the task covers (stemmed).
"Caroline talked with Melanie" shares a name with every question about Caroline and answers none
of them; "Customer Portal uses LangChain" answers "Which technology does the Customer Portal use?".
Below ``fact_floor`` an item is unrelated (traced with that reason, left out by fact lookup).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memory_substrate.embed.base import Embedder
from memory_substrate.models import MemoryObject
from memory_substrate.retrieval.terms import stem
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.text import query_terms

# Below these an item is unrelated to the task: the share of its words alone (no embedder), or
# that share plus the cosine. With the static vectors short unrelated texts reach a cosine of
# 0.35-0.41 against a question ("talked with"; "PostgreSQL links to Project Atlas" against "How
# long did it take for Jon to open his studio?"), so a cosine needs some of the task's words too.
# Words alone are a weak judge of a task phrased as a person starts work: a required item shares
# one or two of its eight to twelve words. At 0.4 the compiler without an embedder kept 0.154 of
# the agent-work dev set's required knowledge (plain search 0.904); at 0.2, 0.615 (held out:
# 0.145 -> 0.479), no forbidden item either way (docs/benchmarks.md, "Agent work").
FACT_FLOOR = 0.2
SEMANTIC_FLOOR = 0.55
_DIGITS = re.compile(r"\d+")


def word_groups(task: str) -> list[frozenset[str]]:
    """The task's content words, each as the set of its index terms, so a word counts once in a
    share whatever number of forms the analyser gives it: a term inside a longer one is a form of
    it ("event" of "events", "strip" of "stripe", a compound's parts of the compound)."""
    heads: list[str] = []
    forms: dict[str, set[str]] = {}
    for term in sorted(dict.fromkeys(query_terms(task)), key=len, reverse=True):
        head = next((h for h in heads if term in h), None)
        if head is None:
            heads.append(term)
            forms[term] = {term}
        else:
            forms[head].add(term)
    return [frozenset(forms[h]) for h in heads]


def overlap(groups: Sequence[frozenset[str]], text: str, language: str | None = None) -> float:
    """The share of the task's words (``word_groups``) that ``text`` holds in some form
    (``language``: a stored turn's, as ``query_terms`` takes it)."""
    if not groups:
        return 0.0
    have = set(query_terms(text, language))
    return sum(bool(g & have) for g in groups) / len(groups)


def _covered(text: str, terms: Sequence[str]) -> float:
    """The share of ``text``'s terms that the task's terms cover (both stemmed)."""
    own = {stem(t) for t in query_terms(text)}
    return len(own & {stem(t) for t in terms}) / len(own) if own else 0.0


def _no_digits(text: str) -> str:
    return " ".join(_DIGITS.sub(" ", text).split())


def fact_floor(rt: Runtime) -> float:
    """The similarity (``judge``) below which an item is unrelated to the task: the semantic floor
    when a cosine is part of it, the lexical one when only words are."""
    return SEMANTIC_FLOOR if rt.embedder_or_none() is not None else FACT_FLOOR


def judge(rt: Runtime, session: StoreSession, task: str, objs: Sequence[MemoryObject]) -> dict[str, float]:
    """Object id -> similarity to ``task`` in 0..1: the cosine (from 0) plus the share of the
    task's words the item holds, or that share alone without an embedder. A sum, not the better
    of the two: on the agent-work dev set an item that both means and names a little of the task
    is as often what the task needs as one that does either strongly: of fact lookup's candidates
    the sum at 0.6 kept 76 of 88 required items against 65 for max(cosine from 0.5, share) at
    0.4, admitting 232 others against 260 and 7 against 9 for tasks memory does not cover; at
    ``SEMANTIC_FLOOR`` (0.55) 80 of 88, 339 others and 11, which packed more of what tasks need
    (the ranking leaves the others out). The cosine compares the texts without their digits
    (numbers match exactly, through the words): with the static vectors "May 23, 2023" and
    "Fiwenlo 0000026 authored Ondislo 0000024" have a cosine of 0.53, and imported facts full of
    ids filled packages for questions that named a date."""
    said = what_it_says(session, [o for o in objs if o.object_type == "knowledge"], task)
    texts = {
        o.id: said.get(o.id) or (o.title if o.summary == o.title else f"{o.title} {o.summary}") for o in objs
    }
    terms = query_terms(task)
    groups = word_groups(task)
    cos: dict[str, float] = {}
    emb = rt.embedder_or_none()
    if emb is not None and texts:
        qvec = np.asarray(emb.embed_query(_no_digits(task)), dtype=np.float32)
        keys = list(texts)
        vecs = _document_vectors(emb, [_no_digits(texts[k]) or "-" for k in keys])
        cos = {k: float(v @ qvec) for k, v in zip(keys, vecs, strict=True)}
    out = {}
    for obj in objs:
        lexical = _covered(said[obj.id], terms) if obj.id in said else overlap(groups, texts[obj.id])
        out[obj.id] = max(0.0, min(1.0, max(0.0, cos.get(obj.id, 0.0)) + lexical))
    return out


# The texts judged are the same items compile after compile (a namespace's knowledge, its work
# items and procedures), so their vectors are kept, by embedder and text, up to this many: about
# 3 KB each at the default embedder's 784 dimensions. Embedding 40 texts with the multilingual
# encoder (text no detector places as English) is most of fact lookup's judging time.
VECTOR_CACHE = 4096
_vectors: OrderedDict[tuple[str, str], npt.NDArray[np.float32]] = OrderedDict()
_vectors_lock = threading.Lock()


def _document_vectors(emb: Embedder, texts: list[str]) -> npt.NDArray[np.float32]:
    """``emb.embed_documents(texts)``, each text embedded once for as long as it stays cached."""
    keys = [(emb.name, t) for t in texts]
    with _vectors_lock:
        kept = {k: _vectors[k] for k in keys if k in _vectors}
        for k in kept:
            _vectors.move_to_end(k)
    missing = list(dict.fromkeys(k for k in keys if k not in kept))
    if missing:
        fresh = np.asarray(emb.embed_documents([t for _, t in missing]), dtype=np.float32)
        with _vectors_lock:
            for k, v in zip(missing, fresh, strict=True):
                kept[k] = _vectors[k] = v.copy()  # its own row: a kept view would keep the whole batch
            while len(_vectors) > VECTOR_CACHE:
                _vectors.popitem(last=False)
    return np.stack([kept[k] for k in keys]) if keys else np.zeros((0, emb.dimensions), dtype=np.float32)


def what_it_says(session: StoreSession, facts: list[MemoryObject], task: str) -> dict[str, str]:
    """Fact id -> its text without the names (and aliases) of the linked entities that the task
    names: what it says about them that the task does not already say. Only facts linking an
    entity the task names are listed."""
    linked = {
        f.id: [
            v
            for v in (f.payload.get("subject"), f.payload.get("object"))
            if isinstance(v, str) and v.startswith("ent:")
        ]
        for f in facts
    }
    ents = session.get_objects(sorted({e for ids in linked.values() for e in ids}))
    folded = f" {' '.join(query_terms(task))} "
    named: dict[str, list[str]] = {}
    for eid, ent in ents.items():
        aliases = ent.payload.get("aliases")  # a list of names wherever an entity has them
        names = [n for n in {ent.title, *(aliases if isinstance(aliases, list) else [])} if n]
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
