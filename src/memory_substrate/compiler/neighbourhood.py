"""Entity neighbourhoods: the graph read the compiler needs, behind one small function.

``entities_in`` finds the entities a task names: exact names and aliases through the lookup
keys, nothing fuzzier. A full-text match is not evidence that a task is about an entity (any task
containing "svc-3" matched a note "Project Atlas" that mentions it, and the package filled with
that note's links); ``neighbourhood`` returns every fact whose subject or object is
one of them, whatever its status (the ranker decides what is current and says why the rest is
left out). A derived graph backend (its projections) can serve the same two calls.
"""

from __future__ import annotations

import re

from memory_substrate.lookup_keys import entity_any_key, fact_object_key, fact_subject_key
from memory_substrate.models import MemoryObject
from memory_substrate.storage.base import StoreSession
from memory_substrate.taxonomy import normalize_name

MAX_NGRAM = 4
MAX_ENTITIES = 12
MAX_FACTS = 200

_WORD = re.compile(r"[\w][\w\-.'/]*")


def _ngrams(task: str) -> list[str]:
    words = _WORD.findall(task)
    out = []
    for n in range(MAX_NGRAM, 0, -1):
        for i in range(len(words) - n + 1):
            phrase = normalize_name(" ".join(words[i : i + n]))
            if len(phrase) >= 2:
                out.append(phrase)
    return list(dict.fromkeys(out))


def entities_in(session: StoreSession, task: str) -> dict[str, float]:
    """Entity id -> match strength (1.0: the task names it, by exact name or alias)."""
    found: dict[str, float] = {}
    keys = [entity_any_key(p) for p in _ngrams(task)[:400]]
    for _, oid in session.find_keys(keys):
        if len(found) >= MAX_ENTITIES:
            break
        found[oid] = 1.0
    live = session.get_objects(list(found))
    return {k: v for k, v in found.items() if k in live and live[k].status == "active"}


def neighbourhood(session: StoreSession, entity_ids: list[str]) -> list[tuple[MemoryObject, str]]:
    """Facts about these entities (as subject or object), each with the entity that led to it."""
    if not entity_ids:
        return []
    keys = [fact_subject_key(e) for e in entity_ids] + [fact_object_key(e) for e in entity_ids]
    via: dict[str, str] = {}
    for key, oid in session.find_keys(keys):
        via.setdefault(oid, key.split(":", 2)[2])
    facts = session.get_objects(list(via)[:MAX_FACTS])
    return [(facts[k], via[k]) for k in via if k in facts and facts[k].object_type == "knowledge"]
