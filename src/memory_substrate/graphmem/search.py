"""search and find_similar, on the one retrieval engine of memory_query.

``search`` runs the same lexical + semantic + graph fusion as ``memory_query search``
(search/engine.py), restricted to graph nodes, then splits facts from entities. Every result
carries ``similarity``: the cosine between the query and the node's stored vector (None
without an embedder), which is what ``similarity_threshold`` filters on. Results are cached
per namespace for ``CACHE_SEARCH_TTL`` seconds and dropped on any write (cache.py).
"""

from __future__ import annotations

import numpy as np

from memory_substrate.errors import ValidationError
from memory_substrate.graph.nodes import relations_between, similar_facts
from memory_substrate.graphmem import schemas
from memory_substrate.graphmem.errors import ok
from memory_substrate.graphmem.service import GraphMemory
from memory_substrate.graphmem.view_types import NodeView, SearchBody
from memory_substrate.json_types import JsonObject
from memory_substrate.search.engine import SearchEngine
from memory_substrate.search.inputs import Filters, SearchInput, SearchOptions

MAX_LIMIT = 200
OBJECT_TYPES = {"Fact": ["knowledge"], "Entity": ["entity", "node"]}


def _statuses(status: str | None, include_outdated: bool) -> list[str]:
    if status is not None:
        return list(schemas.STATUS_TO_LIFECYCLE[status])
    wanted = list(schemas.STATUS_TO_LIFECYCLE["active"])
    return wanted + list(schemas.STATUS_TO_LIFECYCLE["outdated"]) if include_outdated else wanted


def search(
    g: GraphMemory,
    *,
    query: str,
    owner_id: str | None = None,
    limit: int | None = None,
    node_types: list[str] | None = None,
    status: str | None = None,
    similarity_threshold: float | None = None,
    include_outdated: bool = False,
) -> JsonObject:
    ns = g.namespace(owner_id)
    if not query or not query.strip():
        raise ValidationError("query is required and must not be empty")
    if len(query) > g.limits.max_text_length:
        raise ValidationError(f"Text too long (max {g.limits.max_text_length} chars)")
    n = g.limits.search_default_limit if limit is None else limit
    if not 1 <= n <= MAX_LIMIT:
        raise ValidationError(f"limit must be between 1 and {MAX_LIMIT}")
    types = sorted({schemas.node_type(t) for t in node_types}) if node_types else ["Entity", "Fact"]
    schemas.status(status)
    if similarity_threshold is not None and not -1.0 <= similarity_threshold <= 1.0:
        raise ValidationError("similarity_threshold must be between -1 and 1 (cosine similarity)")
    statuses = _statuses(status, include_outdated)
    key = (query, n, tuple(types), tuple(statuses), similarity_threshold)
    rt = g.runtime(ns)
    emb = rt.embedder_or_none()
    # One read snapshot: the cache check, the search and the vectors see one state, and the
    # engine's typed matches carry their objects (no second read of them).
    with rt.snapshot() as session:
        cached = g.search_cache.get(ns, g.change_marker(session), key)
        # Time alone can expire a cached result (no patch marks that): serve it only while none has.
        now_ms = int(g.now().timestamp() * 1000)
        if cached is not None and all(
            r["expires_at"] is None or r["expires_at"] > now_ms for r in cached["results"]
        ):
            return ok(**cached, cached=True)
        filters = Filters(object_types=[t for nt in types for t in OBJECT_TYPES[nt]], statuses=statuses)  # type: ignore[misc]
        found = (
            SearchEngine(rt)
            .find(SearchInput(query=query), SearchOptions(max_items=MAX_LIMIT, filters=filters))
            .objects
        )
        ids = [m.obj.id for m in found]
        sims: dict[str, float] = {}
        if emb is not None and ids:
            qvec = np.asarray(emb.embed_query(query), dtype=np.float32)
            for oid, vec in session.get_vectors(emb.name, "object", ids).items():
                sims[oid] = float(np.dot(qvec, vec))
    results: list[NodeView] = []
    for m in found:
        sim = sims.get(m.obj.id)
        if similarity_threshold is not None and (sim is None or sim < similarity_threshold):
            continue
        view = schemas.node_view(m.obj, ns)
        view["score"] = round(m.score, 6)
        view["similarity"] = round(sim, 4) if sim is not None else None
        results.append(view)
        if len(results) >= n:
            break
    body: SearchBody = {
        "results": results,
        "facts": [r for r in results if r["node_type"] == "Fact"],
        "entities": [r for r in results if r["node_type"] == "Entity"],
        "count": len(results),
        "semantic": emb is not None,
    }
    g.search_cache.put(ns, key, body)
    return ok(**body)


def find_similar(
    g: GraphMemory,
    *,
    fact_id: str,
    owner_id: str | None = None,
    threshold: float | None = None,
    limit: int = 10,
    include_relations: bool = True,
) -> JsonObject:
    ns = g.namespace(owner_id)
    t = g.limits.similarity_threshold if threshold is None else threshold
    if not -1.0 <= t <= 1.0:
        raise ValidationError("threshold must be between -1 and 1 (cosine similarity)")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationError(f"limit must be between 1 and {MAX_LIMIT}")
    rt = g.runtime(ns)
    emb = rt.embedder_or_none()
    with rt.read() as session:
        fact = g.node(session, fact_id, "fact_id")
        if fact.object_type != "knowledge":
            raise ValidationError(f"fact_id: {fact_id} is an Entity, not a Fact")
        if emb is None:
            return ok(results=[], count=0, semantic=False, reason=rt.semantic_status().get("reason"))
        vec = session.get_vectors(emb.name, "object", [fact.id]).get(fact.id)
        if vec is None:
            return ok(
                results=[],
                count=0,
                semantic=True,
                reason="the fact has no vector yet (run memory_maintain reindex)",
            )
        results: list[NodeView] = []
        for other, score in similar_facts(session, emb, vec, threshold=t, limit=limit, exclude={fact.id}):
            view = schemas.node_view(other, ns)
            view["similarity"] = round(score, 4)
            if include_relations:
                rels = relations_between(session, fact.id, other.id) + relations_between(
                    session, other.id, fact.id
                )
                view["relations"] = [schemas.edge_view(r) for r in rels]
            results.append(view)
    return ok(results=results, count=len(results), threshold=t, semantic=True)
