"""test_connection, get_stats and health_check: the real state of store, embedder and vectors."""

from __future__ import annotations

from collections import Counter

import numpy as np

from memory_substrate.expiry import TTL_KEY, is_expired
from memory_substrate.graphmem import schemas
from memory_substrate.graphmem.errors import CONNECTION, fail, log, ok
from memory_substrate.graphmem.service import GraphMemory
from memory_substrate.graphmem.view_types import CacheHealth, GraphStats, HealthDetails
from memory_substrate.json_types import JsonObject

ALL = 10_000_000


def test_connection(g: GraphMemory) -> JsonObject:
    store = g.base.store
    try:
        with g.base.read_with_expired() as session:
            session.list_patches(limit=1)
        version = store.schema_version()
    except Exception as exc:  # any failure to reach the store is a connection error here
        log.warning("test_connection failed: %s", exc)
        return fail(
            f"cannot reach the {store.backend} store at {store.location}: {type(exc).__name__}: {exc}",
            CONNECTION,
        )
    return ok(
        message=f"connected to the {store.backend} store at {store.location} (schema version {version})",
        backend=store.backend,
        schema_version=version,
    )


def get_stats(g: GraphMemory, *, owner_id: str | None = None) -> JsonObject:
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
        if object_type in schemas.GRAPH_OBJECT_TYPES:
            nodes["Fact" if object_type == "knowledge" else "Entity"][
                schemas.LIFECYCLE_TO_STATUS.get(status, "active")
            ] += n
    for oid in expired:  # expired nodes do not exist for readers
        o = ttl_objs[oid]
        if schemas.is_graph_node(o):
            nodes[schemas.node_type_of(o)][schemas.LIFECYCLE_TO_STATUS.get(o.status, "active")] -= 1
    visible = [
        r
        for r in relations
        if schemas.is_graph_id(r.source_id)
        and schemas.is_graph_id(r.target_id)
        and r.source_id not in expired
        and r.target_id not in expired
    ]
    stats: GraphStats = {
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
    }
    return ok(stats=stats)


def health_check(g: GraphMemory) -> JsonObject:
    """Never fails: each component reports true/false, with why in ``details``."""
    store_ok = test_connection(g)
    store_detail = store_ok.get("message") or store_ok.get("error")
    emb = g.embedder()
    embeddings = False
    emb_detail: object
    if emb is None:
        emb_detail = g.base.semantic_status().get("reason")
    else:
        try:
            vec = emb.embed_query("health check")
            embeddings = bool(vec.shape == (emb.dimensions,) and np.isfinite(vec).all())
            emb_detail = {"model": emb.name, "dimensions": emb.dimensions}
        except Exception as exc:  # an embedder that fails at run time is unhealthy, not fatal
            emb_detail = f"{type(exc).__name__}: {exc}"
    vector_index = False
    vec_detail: dict[str, int] | str
    if store_ok["success"] and emb is not None:
        try:
            with g.read(g.base.namespace) as session:
                session.vector_search(emb.name, emb.embed_query("health check"), owner_type="object", limit=1)
                vec_detail = session.vector_stats()
            vector_index = True
        except Exception as exc:
            vec_detail = f"{type(exc).__name__}: {exc}"
    else:
        vec_detail = "unavailable without a store and an embedder"
    falkordb, falkordb_detail = _falkordb(g)
    details: HealthDetails = {
        "store": store_detail,
        "embeddings": emb_detail,
        "vector_index": vec_detail,
        "falkordb": falkordb_detail,
    }
    if g.config_error:
        details["config"] = g.config_error
    cache: CacheHealth = {"embeddings": g.embedding_cache.stats(), "search": g.search_cache.cache.stats()}
    return ok(
        store=bool(store_ok["success"]),
        falkordb=falkordb,  # true only when a FalkorDB server is configured and answered a ping now
        backend=g.base.store.backend,
        embeddings=embeddings,
        vector_index=vector_index,
        cache=cache,
        details=details,
    )


def _falkordb(g: GraphMemory) -> tuple[bool, str]:
    """Whether FalkorDB is configured (graph_backend ``falkordb`` or a FalkorDB URL) and answers a
    ping now. Without one, the spec's ``falkordb`` key is false: the store is the canonical database."""
    from memory_substrate.derived.access import mirror_of

    try:
        with g.base.read_with_expired() as session:
            selected = str(session.get_config().get("graph_backend") or "file")
    except Exception as exc:  # the store is down: reported under "store"
        return False, f"unknown: the store cannot be read ({type(exc).__name__})"
    url = g.base.settings.falkordb_url
    if selected != "falkordb" and not url:
        return (
            False,
            f"not configured (graph_backend is {selected!r}; the canonical store is {g.base.store.backend})",
        )
    mirror = mirror_of(g.base)
    if mirror is None:
        return False, "configured, but this store has no derived-index mirror"
    try:
        backend = mirror.indexes.backend("falkordb")
        ping = getattr(backend, "ping", None)
        if ping is None:
            return False, "configured, but the backend cannot be probed"
        ping()
    except Exception as exc:
        return False, f"configured but unreachable: {getattr(exc, 'message', None) or exc}"
    return True, f"answered a ping at {url}"
