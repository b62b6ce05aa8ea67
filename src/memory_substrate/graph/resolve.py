"""Three-pass entity resolution. Prefer fragmentation to collision: two records of one
thing can be merged later with ``merge_entities``; two things wrongly merged corrupt every fact
on both, so every doubtful case creates a new entity and records why."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from memory_substrate.embed.base import Embedder
from memory_substrate.graph.extraction_trace import Candidate, ResolutionConflict
from memory_substrate.lookup_keys import entity_alias_key, entity_any_key, entity_name_key
from memory_substrate.models import MemoryObject
from memory_substrate.storage.base import StoreSession
from memory_substrate.taxonomy import normalize_name

SEMANTIC_THRESHOLD = 0.92
SEMANTIC_GAP = 0.03
SEMANTIC_CANDIDATES = 5
_NUMBERS = re.compile(r"\d+")


@dataclass
class Resolution:
    entity_id: str | None  # None: create a new entity
    method: str  # exact | alias | semantic | new
    confidence: float
    conflict: ResolutionConflict | None = None
    candidates: list[Candidate] = field(default_factory=list)


def _survivor(session: StoreSession, entity: MemoryObject | None, hops: int = 0) -> MemoryObject | None:
    """Follow ``merged_into`` from a merged entity to the one that absorbed it."""
    while entity is not None and entity.status == "merged" and hops < 10:
        target = entity.metadata.get("merged_into")
        entity = session.get_object(str(target)) if target else None
        hops += 1
    return entity


def _numbers_differ(a: str, b: str) -> bool:
    # "Auth Service v1" and "Auth Service v2" embed almost identically but are different things.
    return set(_NUMBERS.findall(a)) != set(_NUMBERS.findall(b))


class EntityResolver:
    def __init__(self, session: StoreSession, embedder: Embedder | None) -> None:
        self.session = session
        self.embedder = embedder

    def _live(self, ids: list[str]) -> list[MemoryObject]:
        found = self.session.get_objects(ids)
        out: dict[str, MemoryObject] = {}
        for i in ids:
            e = _survivor(self.session, found.get(i))
            if e is not None and e.object_type == "entity" and e.status == "active":
                out[e.id] = e
        return list(out.values())

    def named(self, ref: str) -> list[MemoryObject]:
        """The live entities a bare name (no type) denotes: the one whose name is exactly ``ref``
        when there is one, else every live entity of any type named or aliased so. One rule for
        the names a claim refers to, from an extraction (``apply.py``) or stated directly
        (``triplets.py``); the caller decides what none or several mean."""
        ids = sorted({oid for _, oid in self.session.find_keys([entity_any_key(ref)])})
        live = [o for o in self.session.get_objects(ids).values() if o.status == "active"]
        exact = [o for o in live if normalize_name(o.title) == normalize_name(ref)]
        return exact if len(exact) == 1 else live

    def resolve(self, name: str, entity_type: str, aliases: list[str]) -> Resolution:
        # Pass 1: exact name + type + namespace, case-insensitive.
        exact = self._live([oid for _, oid in self.session.find_keys([entity_name_key(entity_type, name)])])
        if len(exact) == 1:
            return Resolution(exact[0].id, "exact", 1.0)
        if len(exact) > 1:
            return Resolution(
                None,
                "new",
                0.0,
                conflict={
                    "pass": "exact",
                    "reason": "several entities share this name",
                    "entity_ids": [e.id for e in exact],
                },
            )
        # Pass 2: the name is a known alias of one entity of the type, or one of the mention's
        # aliases is the canonical name of one. (Two mentions that merely share an alias are
        # not evidence enough: "Atlas Search" and "Atlas Billing" may both be called "atlas".)
        keys = [entity_alias_key(entity_type, name)]
        keys += [entity_name_key(entity_type, a) for a in aliases if normalize_name(a)]
        by_alias = self._live(sorted({oid for _, oid in self.session.find_keys(keys)}))
        if len(by_alias) == 1:
            return Resolution(by_alias[0].id, "alias", 0.95)
        if len(by_alias) > 1:
            return Resolution(
                None,
                "new",
                0.0,
                conflict={
                    "pass": "alias",
                    "reason": "aliases match several entities",
                    "entity_ids": [e.id for e in by_alias],
                },
            )
        # Pass 3: the embedder, against entity names of the same type only.
        if self.embedder is None:
            return Resolution(None, "new", 0.0)
        query = np.asarray(self.embedder.embed_query(name), dtype=np.float32)
        hits = self.session.vector_search(
            self.embedder.name, query, owner_type=f"entity:{entity_type}", limit=SEMANTIC_CANDIDATES
        )
        live = {e.id: e for e in self._live([h[0] for h in hits])}
        scored = [(oid, float(score)) for oid, score in hits if oid in live]
        candidates: list[Candidate] = [{"entity_id": o, "score": round(s, 4)} for o, s in scored[:2]]
        if not scored or scored[0][1] <= SEMANTIC_THRESHOLD:
            return Resolution(None, "new", 0.0, candidates=candidates)
        best_id, best = scored[0]
        second = scored[1][1] if len(scored) > 1 else 0.0
        if best - second <= SEMANTIC_GAP:
            return Resolution(
                None,
                "new",
                0.0,
                candidates=candidates,
                conflict={
                    "pass": "semantic",
                    "reason": "top two candidates too close",
                    "entity_ids": [o for o, _ in scored[:2]],
                },
            )
        if _numbers_differ(name, live[best_id].title):
            return Resolution(
                None,
                "new",
                0.0,
                candidates=candidates,
                conflict={
                    "pass": "semantic",
                    "reason": "names carry different numbers",
                    "entity_ids": [best_id],
                },
            )
        return Resolution(best_id, "semantic", round(best, 4), candidates=candidates)
