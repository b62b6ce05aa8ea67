"""Canonical relations written by the graph toolset, and fact similarity (shared by
create_node's auto_link, find_similar and create_summary_fact)."""

from __future__ import annotations

import numpy as np

from memory_substrate.embed.base import Embedder
from memory_substrate.graph.canonical import canonical_relation  # noqa: F401  (the toolset's edges)
from memory_substrate.graphmem import schemas as V
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import object_type_of

FACT_EDGES = ("SIMILAR_TO", "RELATED_TO", "SUMMARIZES", "FOLLOWS_FROM", "CONTRADICTS")
FACT_ENTITY_EDGES = ("MENTIONS_ENTITY", "DESCRIBES", "REFERENCES")


def relations_between(session: StoreSession, a: str, b: str, rel_type: str | None = None) -> list[Relation]:
    """Stored relations from ``a`` to ``b`` (one direction), of ``rel_type`` when given."""
    rels = session.relations_among([a, b])
    return [r for r in rels if r.source_id == a and r.target_id == b and (rel_type is None or r.rel_type == rel_type)]


def similar_facts(
    session: StoreSession,
    embedder: Embedder,
    vector: np.ndarray,
    *,
    threshold: float,
    limit: int,
    exclude: set[str],
) -> list[tuple[MemoryObject, float]]:
    """Live facts whose stored vector scores at least ``threshold`` against ``vector``, best first."""
    hits = session.vector_search(embedder.name, vector, owner_type="object", limit=limit * 4 + len(exclude) + 10)
    wanted = [(i, s) for i, s in hits if s >= threshold and i not in exclude and object_type_of(i) == "knowledge"]
    objs = session.get_objects([i for i, _ in wanted])
    out = [(objs[i], float(s)) for i, s in wanted if i in objs and objs[i].status in V.LIVE]
    return out[:limit]
