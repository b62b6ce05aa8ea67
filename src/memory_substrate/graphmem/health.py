"""test_connection, get_stats and health_check: the real state of store, embedder and vectors."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from memory_substrate.expiry import TTL_KEY, is_expired
from memory_substrate.graphmem import schemas as V
from memory_substrate.graphmem.errors import CONNECTION, fail, log, ok
from memory_substrate.graphmem.service import GraphMemory

ALL = 10_000_000


def test_connection(g: GraphMemory) -> dict[str, Any]:
    store = g.base.store
    try:
        with g.base.read_with_expired() as session:
            session.list_patches(limit=1)
        version = store.schema_version()
    except Exception as exc:  # any failure to reach the store is a connection error here
        log.warning("test_connection failed: %s", exc)
        return fail(f"cannot reach the {store.backend} store at {store.location}: {type(exc).__name__}: {exc}", CONNECTION)
    return ok(message=f"connected to the {store.backend} store at {store.location} (schema version {version})",
              backend=store.backend, schema_version=version)


def get_stats(g: GraphMemory, *, owner_id: str | None = None) -> dict[str, Any]:
    ns = g.namespace(owner_id)
    with g.runtime(ns).read_with_expired() as session:
        rows = session.count_objects()
        relations = session.list_relations(limit=ALL)
        ttl_ids = sorted({oid for _, oid in session.find_keys([TTL_KEY])})
        ttl_objs = session.get_objects(ttl_ids)
        vectors = session.vector_stats()
    now = g.now()
    expired = {oid for oid, o in ttl_objs.items() if is_expired(o, now)}
    nodes: dict[str, Counter[str]] = {"Fact": Counter(), "Entity": Counter()}
    for object_type, _kind, status, n in rows:
        if object_type in V.GRAPH_OBJECT_TYPES:
            nodes["Fact" if object_type == "knowledge" else "Entity"][V.LIFECYCLE_TO_STATUS.get(status, "active")] += n
    for oid in expired:  # expired nodes do not exist for readers
        o = ttl_objs[oid]
        if V.is_graph_node(o):
            nodes[V.node_type_of(o)][V.LIFECYCLE_TO_STATUS.get(o.status, "active")] -= 1
    visible = [r for r in relations if V.is_graph_id(r.source_id) and V.is_graph_id(r.target_id)
               and r.source_id not in expired and r.target_id not in expired]
    return ok(stats={
        "owner_id": ns,
        "facts": sum(nodes["Fact"].values()),
        "entities": sum(nodes["Entity"].values()),
        "facts_by_status": dict(nodes["Fact"]),
        "entities_by_status": dict(nodes["Entity"]),
        "relations": len(visible),
        "relations_by_type": dict(Counter(r.rel_type for r in visible).most_common()),
        "expired_hidden": len(expired),
        "with_ttl": len(ttl_ids),
        "vectors": vectors,
    })


def health_check(g: GraphMemory) -> dict[str, Any]:
    """Never fails: each component reports true/false, with why in ``details``."""
    details: dict[str, Any] = {}
    store_ok = test_connection(g)
    details["store"] = store_ok.get("message") or store_ok.get("error")
    emb = g.embedder()
    embeddings = False
    if emb is None:
        details["embeddings"] = g.base.semantic_status().get("reason")
    else:
        try:
            vec = emb.embed_query("health check")
            embeddings = bool(vec.shape == (emb.dimensions,) and np.isfinite(vec).all())
            details["embeddings"] = {"model": emb.name, "dimensions": emb.dimensions}
        except Exception as exc:  # an embedder that fails at run time is unhealthy, not fatal
            details["embeddings"] = f"{type(exc).__name__}: {exc}"
    vector_index = False
    if store_ok["success"] and emb is not None:
        try:
            with g.read(g.base.namespace) as session:
                session.vector_search(emb.name, emb.embed_query("health check"), owner_type="object", limit=1)
                details["vector_index"] = session.vector_stats()
            vector_index = True
        except Exception as exc:
            details["vector_index"] = f"{type(exc).__name__}: {exc}"
    else:
        details["vector_index"] = "unavailable without a store and an embedder"
    return ok(
        store=bool(store_ok["success"]),
        falkordb=bool(store_ok["success"]),  # the spec's name for "the graph store is reachable"
        backend=g.base.store.backend,
        embeddings=embeddings,
        vector_index=vector_index,
        cache={
            "embeddings": g.embedding_cache.stats(),
            "search": g.search_cache.cache.stats(),
        },
        details=details,
    )
