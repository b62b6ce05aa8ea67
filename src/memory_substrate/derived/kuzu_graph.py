"""Kùzu mirror, on LadybugDB: the maintained fork of Kùzu (Kùzu itself is archived).

Embedded: one database directory under the store root (``<root>/derived/ladybug``), opened by
this process. Each namespace gets its own node table ``O_<hash>``, relationship table
``R_<hash>`` and state table ``M_<hash>``, so namespaces never share a table. A full build loads
through ``COPY ... FROM`` an Arrow table (far faster than row-by-row Cypher);
incremental mirroring uses ``MERGE``. The configured name stays ``kuzu`` (``graph_backend``'s value, which stores already hold).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memory_substrate.derived.base import Fingerprint
from memory_substrate.derived.fingerprint import make
from memory_substrate.derived.graph_rows import (
    REL_FIELDS,
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
from memory_substrate.storage.outbox import OBJECT, RELATION, OutboxEntry
from memory_substrate.storage.paging import ALL, load_objects

BATCH = 1000
_NODE_COLS = "id STRING, object_type STRING, kind STRING, status STRING, title STRING, updated_at STRING, version INT64, placeholder BOOLEAN, PRIMARY KEY(id)"
_REL_COLS = ", ".join(f"{f} STRING" for f in REL_FIELDS)


def _tables(namespace: str) -> tuple[str, str, str]:
    h = hashlib.sha1(namespace.encode()).hexdigest()[:16]
    return f"O_{h}", f"R_{h}", f"M_{h}"


class KuzuBackend:
    name = "kuzu"
    families: tuple[str, ...] = ("objects", "relations")
    owner_types: tuple[str, ...] = ()

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: Any = None
        self._conn: Any = None
        self._lock = threading.RLock()
        self._built: set[str] = set()

    def _connection(self) -> Any:
        if self._conn is None:
            import ladybug

            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._db = ladybug.Database(str(self.path))
            except Exception as exc:
                raise BackendError(
                    f"cannot open the Kùzu (LadybugDB) database at {self.path}: {exc}",
                    details={"backend": self.name},
                ) from exc
            self._conn = ladybug.Connection(self._db)
        return self._conn

    def _run(self, cypher: str, params: Mapping[str, object] | None = None) -> list[list[Any]]:
        with self._lock:
            try:
                result = self._connection().execute(cypher, params or {})
                rows: list[list[Any]] = []
                while result.has_next():
                    rows.append(result.get_next())
                return rows
            except BackendError:
                raise
            except Exception as exc:
                raise BackendError(
                    f"Kùzu (LadybugDB) query failed: {exc}", details={"backend": self.name}
                ) from exc

    def _exists(self, table: str) -> bool:
        return any(r[1] == table for r in self._run("CALL show_tables() RETURN *"))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._db.close()
                self._conn = self._db = None

    # --- state -----------------------------------------------------------------------------------
    def is_built(self, namespace: str) -> bool:
        if namespace in self._built:
            return True
        _, _, meta = _tables(namespace)
        if self._exists(meta) and self._run(f"MATCH (m:{meta}) WHERE m.key = 'built' RETURN m.value"):
            self._built.add(namespace)
            return True
        return False

    def drop(self, namespace: str) -> None:
        self._built.discard(namespace)
        node, rel, meta = _tables(namespace)
        for table in (rel, node, meta):
            if self._exists(table):
                self._run(f"DROP TABLE {table}")

    # --- writes ----------------------------------------------------------------------------------
    def rebuild(self, namespace: str, session: StoreSession) -> dict[str, int]:
        import pyarrow as pa

        self.drop(namespace)
        node, rel, meta = _tables(namespace)
        self._run(f"CREATE NODE TABLE {node}({_NODE_COLS})")
        self._run(f"CREATE REL TABLE {rel}(FROM {node} TO {node}, {_REL_COLS})")
        self._run(f"CREATE NODE TABLE {meta}(key STRING, value STRING, PRIMARY KEY(key))")
        objects: list[Mapping[str, object]] = [node_row(o) for o in load_objects(session)]
        relations: list[Mapping[str, object]] = [rel_row(r) for r in session.list_relations(limit=ALL)]
        known = {o["id"] for o in objects}
        ends = sorted({str(r[k]) for r in relations for k in ("source_id", "target_id")} - known)
        nodes: dict[str, list[object]] = {
            c: [o[c] for o in objects]
            for c in ("id", "object_type", "kind", "status", "title", "updated_at", "version")
        }
        nodes["placeholder"] = [False] * len(objects)
        for end in ends:
            for c in nodes:
                nodes[c].append(end if c == "id" else (True if c == "placeholder" else None))
        with self._lock:
            conn = self._connection()
            if nodes["id"]:
                table = pa.table({**nodes, "version": pa.array(nodes["version"], pa.int64())})
                self._copy(conn, node, table)
            if relations:
                cols = {
                    "from": [r["source_id"] for r in relations],
                    "to": [r["target_id"] for r in relations],
                }
                cols.update({f: [r[f] for r in relations] for f in REL_FIELDS})
                self._copy(conn, rel, pa.table(cols))
        self._run(f"CREATE (m:{meta} {{key: 'built', value: 'true'}})")
        self._built.add(namespace)
        return {"objects": len(objects), "relations": len(relations), "vectors": 0}

    def _copy(self, conn: Any, table: str, arrow_rows: Any) -> None:
        # LadybugDB resolves ``FROM arrow_rows`` to the Arrow table held in this frame's local variable.
        try:
            conn.execute(f"COPY {table} FROM arrow_rows")
        except Exception as exc:
            raise BackendError(
                f"Kùzu (LadybugDB) bulk load failed: {exc}", details={"backend": self.name}
            ) from exc

    def apply(self, namespace: str, session: StoreSession, entries: Sequence[OutboxEntry]) -> dict[str, int]:
        object_ids = sorted({e.item_id for e in entries if e.kind == OBJECT})
        relation_ids = sorted({e.item_id for e in entries if e.kind == RELATION})
        return self._sync(namespace, session, object_ids, relation_ids)

    def repair(self, namespace: str, session: StoreSession, ids: dict[str, list[str]]) -> dict[str, int]:
        return self._sync(namespace, session, ids.get("objects", []), ids.get("relations", []))

    def _sync(
        self, namespace: str, session: StoreSession, object_ids: list[str], relation_ids: list[str]
    ) -> dict[str, int]:
        node, rel, _ = _tables(namespace)
        objects = session.get_objects(object_ids) if object_ids else {}
        sets = (
            "n.object_type = row.object_type, n.kind = row.kind, n.status = row.status, n.title = row.title, "
            "n.updated_at = row.updated_at, n.version = row.version, n.placeholder = false"
        )
        for chunk in batches([node_row(objects[i]) for i in object_ids if i in objects], BATCH):
            self._run(f"UNWIND $rows AS row MERGE (n:{node} {{id: row.id}}) SET {sets}", {"rows": chunk})
        gone = [i for i in object_ids if i not in objects]
        if gone:
            self._run(
                f"UNWIND $ids AS x MATCH (n:{node} {{id: x}}) SET n.placeholder = true, n.object_type = NULL, "
                "n.kind = NULL, n.status = NULL, n.title = NULL, n.updated_at = NULL, n.version = NULL",
                {"ids": gone},
            )
        rels = session.get_relations(relation_ids) if relation_ids else {}
        if relation_ids:
            self._run(f"MATCH ()-[r:{rel}]->() WHERE r.id IN $ids DELETE r", {"ids": relation_ids})
        props = ", ".join(f"{f}: row.{f}" for f in REL_FIELDS)
        for edges in batches([rel_row(rels[i]) for i in relation_ids if i in rels], BATCH):
            self._run(
                f"UNWIND $rows AS row MERGE (a:{node} {{id: row.source_id}}) ON CREATE SET a.placeholder = true "
                f"MERGE (b:{node} {{id: row.target_id}}) ON CREATE SET b.placeholder = true "
                f"CREATE (a)-[:{rel} {{{props}}}]->(b)",
                {"rows": edges},
            )
        if gone or len(rels) < len(relation_ids):
            self._run(
                f"MATCH (n:{node}) WHERE n.placeholder = true AND NOT EXISTS {{ MATCH (n)-[]-() }} DELETE n"
            )
        return {"objects": len(object_ids), "relations": len(relation_ids), "vectors": 0}

    # --- reads -----------------------------------------------------------------------------------
    def edges_of(self, namespace: str, ids: Sequence[str], limit: int) -> list[Relation]:
        node, rel, _ = _tables(namespace)
        if not self.is_built(namespace):
            return []
        cols = ", ".join(f"r.{f}" for f in REL_FIELDS)
        rows = self._run(
            f"MATCH (n:{node})-[r:{rel}]-(:{node}) WHERE n.id IN $ids WITH DISTINCT r "
            f"RETURN {cols} ORDER BY r.created_at, r.id LIMIT {int(limit)}",
            {"ids": list(ids)},
        )
        return [relation_from(r) for r in rows]

    def reader(self, namespace: str) -> KuzuReader:
        return KuzuReader(self, namespace)

    def fingerprint(self, namespace: str) -> Fingerprint:
        node, rel, _ = _tables(namespace)
        if not self._exists(node):
            return make({"objects": {}, "relations": {}})
        nodes = self._run(
            f"MATCH (n:{node}) WHERE n.placeholder = false RETURN n.id, n.object_type, n.kind, n.status, n.title, "
            "n.updated_at, n.version"
        )
        rels = self._run(
            f"MATCH ()-[r:{rel}]->() RETURN r.id, r.rel_type, r.source_id, r.target_id, r.origin_id"
        )
        return make(
            {
                "objects": {r[0]: node_digest(r[1:]) for r in nodes},
                "relations": {r[0]: f"{r[1]}|{r[2]}|{r[3]}|{r[4] or ''}" for r in rels},
            }
        )


_SHARED: dict[Path, tuple[KuzuBackend, int]] = {}
_SHARED_LOCK = threading.Lock()


class _SharedKuzu(KuzuBackend):
    """A handle on the process-wide backend of one directory (an embedded database admits one opener)."""

    def close(self) -> None:
        with _SHARED_LOCK:
            backend, users = _SHARED.get(self.path, (None, 0))
            if backend is None:
                return
            if users <= 1:
                del _SHARED[self.path]
                KuzuBackend.close(backend)
            else:
                _SHARED[self.path] = (backend, users - 1)


def shared_kuzu(path: Path) -> KuzuBackend:
    """The one backend of ``path`` in this process; each caller's ``close`` releases one use."""
    key = Path(path).resolve()
    with _SHARED_LOCK:
        backend, users = _SHARED.get(key, (None, 0))
        if backend is None:
            backend = _SharedKuzu(key)
        _SHARED[key] = (backend, users + 1)
        return backend


class KuzuReader(WalkedGraph):
    name = "kuzu"

    def __init__(self, backend: KuzuBackend, namespace: str) -> None:
        self.backend = backend
        self.namespace = namespace

    def _edges(self, ids: Sequence[str], limit: int) -> list[Relation]:
        return self.backend.edges_of(self.namespace, ids, limit)
