"""FalkorDB mirror: one graph per namespace, objects as ``:Obj`` nodes, relations as ``:REL``
edges, object embeddings in FalkorDB's vector index.

Node properties: id, object_type, kind, status, title, updated_at, version, placeholder (an
endpoint of a relation whose object does not exist canonically), and one ``v_<model hash>``
vector property per embedding model, each with its own vector index (cosine). Edge properties
carry the whole relation, ``relation_schema`` included (``payload`` as JSON), so reads need no
trip to the canonical store. The graph is named ``memory_substrate:<namespace>``; a ``:Meta``
node records that the namespace was fully built (a server restarted without persistence has
none, and the next sync rebuilds it).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.derived.base import Fingerprint, vector_digest
from memory_substrate.derived.fingerprint import make
from memory_substrate.derived.graph_rows import (
    REL_FIELDS,
    NodeRow,
    RelRow,
    batches,
    node_digest,
    node_row,
    rel_row,
    relation_from,
)
from memory_substrate.derived.traversal import WalkedGraph
from memory_substrate.errors import BackendError
from memory_substrate.models import Relation
from memory_substrate.storage.base import StoreSession
from memory_substrate.storage.outbox import OBJECT, RELATION, VECTOR_OBJECT, OutboxEntry
from memory_substrate.storage.paging import ALL, load_objects

PREFIX = "memory_substrate:"
BATCH = 2000
VECTOR_BATCH = 500
# HNSW settings of the vector index: FalkorDB's defaults favour speed; these trade a little latency
# for recall close to exact search (see bench/backends_bench.py).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 200
HNSW_EF_RUNTIME = 100
_REL_RETURN = ", ".join(f"r.{f}" for f in REL_FIELDS)


def vector_property(model: str) -> str:
    return "v_" + hashlib.sha1(model.encode()).hexdigest()[:12]


class FalkorDBBackend:
    """Mirror and reader of every namespace in one FalkorDB server (see the module docstring)."""

    name = "falkordb"
    families: tuple[str, ...] = ("objects", "relations", "vectors")
    owner_types: tuple[str, ...] = ("object",)

    def __init__(self, url: str) -> None:
        self.url = url
        self._db: Any = None
        self._lock = threading.Lock()
        self._built: set[str] = set()
        self._model_cache: dict[str, dict[str, int]] = {}

    # --- plumbing --------------------------------------------------------------------------
    def _client(self) -> Any:
        if self._db is None:
            with self._lock:
                if self._db is None:
                    from falkordb import FalkorDB

                    try:
                        # Bounded waits: a hung server must not hang a write's after-commit sync forever.
                        self._db = FalkorDB.from_url(self.url, socket_connect_timeout=5, socket_timeout=120)
                    except Exception as exc:
                        raise BackendError(
                            f"cannot reach FalkorDB at {self.url}",
                            details={"backend": self.name, "error": str(exc)},
                        ) from exc
        return self._db

    def _query(
        self, namespace: str, cypher: str, params: Mapping[str, object] | None = None, *, read: bool = False
    ) -> list[Any]:
        graph = self._client().select_graph(PREFIX + namespace)
        try:
            result = (graph.ro_query if read else graph.query)(cypher, params=params)
        except Exception as exc:
            if read and "empty key" in str(exc):
                return []  # the namespace has no graph yet
            raise BackendError(
                f"FalkorDB query failed: {exc}", details={"backend": self.name, "namespace": namespace}
            ) from exc
        return list(result.result_set)

    def ping(self) -> None:
        """Round trip to the server (health_check); raises BackendError when it does not answer."""
        try:
            self._client().connection.ping()
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError(
                f"FalkorDB at {self.url} does not answer: {exc}", details={"backend": self.name}
            ) from exc

    def close(self) -> None:
        if self._db is not None:
            self._db.connection.close()
            self._db = None

    # --- state ---------------------------------------------------------------------------------
    def is_built(self, namespace: str) -> bool:
        if namespace in self._built:
            return True
        rows = self._query(namespace, "MATCH (m:Meta {key: 'state'}) RETURN m.built", read=True)
        if rows and rows[0][0]:
            self._built.add(namespace)
            return True
        return False

    def drop(self, namespace: str) -> None:
        self._built.discard(namespace)
        self._model_cache.pop(namespace, None)
        if PREFIX + namespace in self._client().list_graphs():
            self._client().select_graph(PREFIX + namespace).delete()

    def _models(self, namespace: str) -> dict[str, int]:
        """Embedding models (-> dimension) with a vector index in this namespace's graph (cached)."""
        if namespace not in self._model_cache:
            rows = self._query(namespace, "MATCH (m:Meta {key: 'state'}) RETURN m.models", read=True)
            self._model_cache[namespace] = json.loads(rows[0][0]) if rows and rows[0][0] else {}
        return dict(self._model_cache[namespace])

    def _ensure_schema(self, namespace: str) -> None:
        for cypher in ("CREATE INDEX FOR (n:Obj) ON (n.id)", "CREATE INDEX FOR ()-[r:REL]-() ON (r.id)"):
            try:
                self._query(namespace, cypher)
            except BackendError as exc:
                if "already indexed" not in str(exc):
                    raise
        self._query(namespace, "MERGE (m:Meta {key: 'state'}) ON CREATE SET m.built = false, m.models = '{}'")

    def _ensure_vector_index(self, namespace: str, model: str, dim: int) -> None:
        models = self._models(namespace)
        if models.get(model) == dim:
            return
        prop = vector_property(model)
        self._query(
            namespace,
            f"CREATE VECTOR INDEX FOR (n:Obj) ON (n.{prop}) OPTIONS {{dimension: {int(dim)}, similarityFunction: 'cosine', "
            f"M: {HNSW_M}, efConstruction: {HNSW_EF_CONSTRUCTION}, efRuntime: {HNSW_EF_RUNTIME}}}",
        )
        models[model] = dim
        self._query(
            namespace, "MATCH (m:Meta {key: 'state'}) SET m.models = $models", {"models": json.dumps(models)}
        )
        self._model_cache[namespace] = models

    # --- writes ----------------------------------------------------------------------------------
    def rebuild(self, namespace: str, session: StoreSession) -> dict[str, int]:
        self.drop(namespace)
        self._ensure_schema(namespace)
        objects = load_objects(session)
        for chunk in batches([node_row(o) for o in objects], BATCH):
            self._upsert_nodes(namespace, chunk)
        relations = session.list_relations(limit=ALL)
        for edges in batches([rel_row(r) for r in relations], BATCH):
            self._create_edges(namespace, edges)
        by_model: dict[str, list[tuple[str, npt.NDArray[np.float32]]]] = {}
        for owner_type, owner_id, model, vec in session.iter_vectors():
            if owner_type == "object":
                by_model.setdefault(model, []).append((owner_id, vec))
        vectors = 0
        for model, rows in by_model.items():
            vectors += self._set_vectors(namespace, model, rows)
        self._query(namespace, "MATCH (m:Meta {key: 'state'}) SET m.built = true")
        self._built.add(namespace)
        return {"objects": len(objects), "relations": len(relations), "vectors": vectors}

    def _upsert_nodes(self, namespace: str, rows: list[NodeRow]) -> None:
        self._query(
            namespace,
            "UNWIND $rows AS row MERGE (n:Obj {id: row.id}) SET n.object_type = row.object_type, n.kind = row.kind, "
            "n.status = row.status, n.title = row.title, n.updated_at = row.updated_at, n.version = row.version, "
            "n.placeholder = false",
            {"rows": rows},
        )

    def _create_edges(self, namespace: str, rows: list[RelRow]) -> None:
        sets = ", ".join(f"{f}: row.{f}" for f in REL_FIELDS)
        self._query(
            namespace,
            "UNWIND $rows AS row MERGE (a:Obj {id: row.source_id}) ON CREATE SET a.placeholder = true "
            "MERGE (b:Obj {id: row.target_id}) ON CREATE SET b.placeholder = true "
            f"CREATE (a)-[:REL {{{sets}}}]->(b)",
            {"rows": rows},
        )

    def _set_vectors(
        self, namespace: str, model: str, rows: list[tuple[str, npt.NDArray[np.float32]]]
    ) -> int:
        if not rows:
            return 0
        self._ensure_vector_index(namespace, model, int(rows[0][1].shape[0]))
        prop = vector_property(model)
        others = [vector_property(m) for m in self._models(namespace) if m != model]
        clear = "".join(f", n.{p} = NULL" for p in others)
        done = 0
        for chunk in batches(rows, VECTOR_BATCH):
            params = {
                "rows": [{"id": oid, "v": np.asarray(v, dtype=np.float32).tolist()} for oid, v in chunk]
            }
            self._query(
                namespace,
                f"UNWIND $rows AS row MATCH (n:Obj {{id: row.id}}) SET n.{prop} = vecf32(row.v){clear}",
                params,
            )
            done += len(chunk)
        return done

    def apply(self, namespace: str, session: StoreSession, entries: Sequence[OutboxEntry]) -> dict[str, int]:
        object_ids = sorted({e.item_id for e in entries if e.kind == OBJECT})
        relation_ids = sorted({e.item_id for e in entries if e.kind == RELATION})
        vectors: dict[str, set[str]] = {}
        for e in entries:
            if e.kind == VECTOR_OBJECT:
                vectors.setdefault(e.detail, set()).add(e.item_id)
        return self._sync(namespace, session, object_ids, relation_ids, vectors)

    def _sync(
        self,
        namespace: str,
        session: StoreSession,
        object_ids: list[str],
        relation_ids: list[str],
        vectors: dict[str, set[str]],
    ) -> dict[str, int]:
        objects = session.get_objects(object_ids) if object_ids else {}
        for chunk in batches([node_row(objects[i]) for i in object_ids if i in objects], BATCH):
            self._upsert_nodes(namespace, chunk)
        gone = [i for i in object_ids if i not in objects]
        if gone:
            # An object no longer in the store keeps a placeholder while relations still touch it.
            self._query(
                namespace,
                "UNWIND $ids AS id MATCH (n:Obj {id: id}) SET n.placeholder = true, n.object_type = NULL, "
                "n.kind = NULL, n.status = NULL, n.title = NULL, n.updated_at = NULL, n.version = NULL",
                {"ids": gone},
            )
        rels = session.get_relations(relation_ids) if relation_ids else {}
        for doomed in batches(relation_ids, BATCH):
            self._query(
                namespace, "UNWIND $ids AS id MATCH ()-[r:REL {id: id}]->() DELETE r", {"ids": doomed}
            )
        for edges in batches([rel_row(rels[i]) for i in relation_ids if i in rels], BATCH):
            self._create_edges(namespace, edges)
        if gone or len(rels) < len(relation_ids):
            self._query(namespace, "MATCH (n:Obj) WHERE n.placeholder = true AND NOT (n)--() DELETE n")
        done = 0
        for model, ids in vectors.items():
            found = session.get_vectors(model, "object", sorted(ids))
            done += self._set_vectors(namespace, model, sorted(found.items()))
            missing = sorted(ids - set(found))
            if missing:
                prop = vector_property(model)
                self._query(
                    namespace,
                    f"UNWIND $ids AS id MATCH (n:Obj {{id: id}}) SET n.{prop} = NULL",
                    {"ids": missing},
                )
        return {"objects": len(object_ids), "relations": len(relation_ids), "vectors": done}

    def repair(self, namespace: str, session: StoreSession, ids: dict[str, list[str]]) -> dict[str, int]:
        """Re-mirror the ids a fingerprint found out of line."""
        extra_nodes = [i for i in ids.get("objects", [])]
        vectors: dict[str, set[str]] = {}
        owners = dict(session.vector_owners("object"))
        for key in ids.get("vectors", []):
            owner = key.split(":", 1)[1]
            for model in set(self._models(namespace)) | ({owners[owner]} if owner in owners else set()):
                vectors.setdefault(model, set()).add(owner)
        return self._sync(namespace, session, extra_nodes, ids.get("relations", []), vectors)

    # --- reads -----------------------------------------------------------------------------------
    def edges_of(self, namespace: str, ids: Sequence[str], limit: int) -> list[Relation]:
        rows = self._query(
            namespace,
            "MATCH (n:Obj)-[r:REL]-() WHERE n.id IN $ids WITH DISTINCT r "
            f"RETURN {_REL_RETURN} ORDER BY r.created_at, r.id LIMIT $limit",
            {"ids": list(ids), "limit": int(limit)},
            read=True,
        )
        return [relation_from(list(r)) for r in rows]

    def reader(self, namespace: str) -> FalkorDBReader:
        return FalkorDBReader(self, namespace)

    def vector_search(
        self, namespace: str, model: str, query: npt.NDArray[np.float32], *, owner_type: str, limit: int
    ) -> list[tuple[str, float]]:
        if owner_type != "object" or model not in self._models(namespace):
            return []
        rows = self._query(
            namespace,
            f"CALL db.idx.vector.queryNodes('Obj', '{vector_property(model)}', $k, vecf32($q)) YIELD node, score "
            "RETURN node.id, score ORDER BY score, node.id",
            {"k": int(limit), "q": np.asarray(query, dtype=np.float32).tolist()},
            read=True,
        )
        # FalkorDB reports cosine *distance*; the port speaks cosine similarity.
        return [(r[0], 1.0 - float(r[1])) for r in rows]

    def fingerprint(self, namespace: str) -> Fingerprint:
        nodes = self._query(
            namespace,
            "MATCH (n:Obj) WHERE n.placeholder = false RETURN n.id, n.object_type, n.kind, n.status, n.title, "
            "n.updated_at, n.version",
            read=True,
        )
        rels = self._query(
            namespace,
            "MATCH ()-[r:REL]->() RETURN r.id, r.rel_type, r.source_id, r.target_id, r.origin_id",
            read=True,
        )
        vectors: dict[str, str] = {}
        for model in self._models(namespace):
            prop = vector_property(model)
            for oid, vec in self._query(
                namespace, f"MATCH (n:Obj) WHERE n.{prop} IS NOT NULL RETURN n.id, n.{prop}", read=True
            ):
                vectors[f"object:{oid}"] = vector_digest(model, np.asarray(vec, dtype=np.float32))
        return make(
            {
                "objects": {r[0]: node_digest(list(r[1:])) for r in nodes},
                "relations": {r[0]: f"{r[1]}|{r[2]}|{r[3]}|{r[4] or ''}" for r in rels},
                "vectors": vectors,
            }
        )


class FalkorDBReader(WalkedGraph):
    """The graph port over one namespace's FalkorDB graph."""

    name = "falkordb"

    def __init__(self, backend: FalkorDBBackend, namespace: str) -> None:
        self.backend = backend
        self.namespace = namespace

    def _edges(self, ids: Sequence[str], limit: int) -> list[Relation]:
        return self.backend.edges_of(self.namespace, ids, limit)
