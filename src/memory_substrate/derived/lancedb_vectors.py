"""LanceDB mirror of the vectors of objects and segments, one table per (namespace, owner type,
model), with an ANN index once a table is large enough to need one.

Small tables are searched exactly (LanceDB's flat scan), so a fresh namespace answers exactly as
the built-in vectors do; from ``ANN_MIN_ROWS`` rows a full build adds an IVF-HNSW-SQ index
(cosine) and searches probe ``NPROBES`` partitions and re-rank ``REFINE`` x k candidates exactly. Rows
added after the index are searched by a flat scan until the next build (LanceDB merges both).
State (built, tables, dimensions) lives in ``state_<hash>.json`` beside the tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.derived.base import Fingerprint, vector_digest
from memory_substrate.derived.fingerprint import make
from memory_substrate.errors import BackendError
from memory_substrate.storage.base import StoreSession
from memory_substrate.storage.outbox import OutboxEntry

ANN_MIN_ROWS = 20_000
NPROBES = 20
REFINE = 10
BATCH = 5000
COMPACT_EVERY = 200  # incremental applies per table between compactions (each apply adds fragments)


def _h(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def table_name(owner_type: str, namespace: str, model: str) -> str:
    """A LanceDB table name for any owner type: letters, digits and ``_`` only (``entity:document``
    owner types included), with a digest of the owner type so that two never share a name."""
    safe = re.sub(r"[^A-Za-z0-9_]+", "_", owner_type).strip("_")[:40] or "owner"
    suffix = "" if safe == owner_type else f"_{_h(owner_type)[:8]}"
    return f"{safe}{suffix}_{_h(namespace)}_{_h(model)}"


def _quote(ids: Sequence[str]) -> str:
    return ", ".join("'" + i.replace("'", "''") + "'" for i in ids)


class LanceDBBackend:
    name = "lancedb"
    families: tuple[str, ...] = ("vectors",)
    owner_types: tuple[str, ...] = ("object", "segment")

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: Any = None
        self._lock = threading.RLock()
        self._tables: dict[str, Any] = {}
        self._applies: dict[str, int] = {}

    def _conn(self) -> Any:
        if self._db is None:
            # Lance logs routine notes ("dataset will be created") as warnings on stderr; keep errors only
            # unless the user chose a level.
            os.environ.setdefault("LANCE_LOG", "error")
            import lancedb

            self.path.mkdir(parents=True, exist_ok=True)
            try:
                self._db = lancedb.connect(str(self.path))
            except Exception as exc:
                raise BackendError(
                    f"cannot open LanceDB at {self.path}: {exc}", details={"backend": self.name}
                ) from exc
        return self._db

    def close(self) -> None:
        self._tables.clear()
        self._db = None

    # --- state -----------------------------------------------------------------------------------
    def _state_path(self, namespace: str) -> Path:
        return self.path / f"state_{_h(namespace)}.json"

    def _state(self, namespace: str) -> dict[str, Any]:
        path = self._state_path(namespace)
        return json.loads(path.read_text()) if path.exists() else {"built": False, "tables": {}}

    def _save(self, namespace: str, state: dict[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self._state_path(namespace).with_suffix(".tmp")
        tmp.write_text(json.dumps(state, sort_keys=True))
        tmp.replace(self._state_path(namespace))

    def is_built(self, namespace: str) -> bool:
        return bool(self._state(namespace).get("built"))

    def drop(self, namespace: str) -> None:
        with self._lock:
            state = self._state(namespace)
            for info in state["tables"].values():
                self._tables.pop(info["name"], None)
                self._conn().drop_table(info["name"], ignore_missing=True)
            self._state_path(namespace).unlink(missing_ok=True)

    def _table(self, namespace: str, state: dict[str, Any], owner_type: str, model: str, dim: int) -> Any:
        import pyarrow as pa

        key = f"{owner_type}|{model}"
        info = state["tables"].get(key)
        if info is not None and info["dim"] == dim:
            return self._open(info["name"])
        name = table_name(owner_type, namespace, model)
        schema = pa.schema([pa.field("id", pa.string()), pa.field("vector", pa.list_(pa.float32(), dim))])
        self._tables[name] = self._conn().create_table(name, schema=schema, mode="overwrite")
        state["tables"][key] = {
            "name": name,
            "dim": dim,
            "owner_type": owner_type,
            "model": model,
            "indexed": False,
        }
        self._save(namespace, state)
        return self._tables[name]

    def _open(self, name: str) -> Any:
        if name not in self._tables:
            self._tables[name] = self._conn().open_table(name)
        return self._tables[name]

    @staticmethod
    def _arrow(rows: Sequence[tuple[str, npt.NDArray[np.float32]]], dim: int) -> Any:
        import pyarrow as pa

        flat = (
            np.concatenate([np.asarray(v, dtype=np.float32) for _, v in rows])
            if rows
            else np.zeros(0, np.float32)
        )
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dim)
        return pa.table({"id": [oid for oid, _ in rows], "vector": vectors})

    # --- writes ----------------------------------------------------------------------------------
    def rebuild(self, namespace: str, session: StoreSession) -> dict[str, int]:
        with self._lock:
            self.drop(namespace)
            state: dict[str, Any] = {"built": False, "tables": {}}
            pending: dict[tuple[str, str], list[tuple[str, npt.NDArray[np.float32]]]] = {}
            total = 0

            def flush(key: tuple[str, str]) -> None:
                rows = pending.pop(key, [])
                if rows:
                    dim = int(rows[0][1].shape[0])
                    self._table(namespace, state, key[0], key[1], dim).add(self._arrow(rows, dim))

            for owner_type, owner_id, model, vec in session.iter_vectors(batch_size=BATCH):
                pending.setdefault((owner_type, model), []).append((owner_id, vec))
                total += 1
                if len(pending[(owner_type, model)]) >= BATCH:
                    flush((owner_type, model))
            for key in list(pending):
                flush(key)
            for info in state["tables"].values():
                table = self._open(info["name"])
                if table.count_rows() >= ANN_MIN_ROWS:
                    self._index(table, info)
            state["built"] = True
            self._save(namespace, state)
        return {"objects": 0, "relations": 0, "vectors": total}

    def _index(self, table: Any, info: dict[str, Any]) -> None:
        from lancedb.index import IvfHnswSq

        # IVF partitions of ~4k rows, each an HNSW graph over scalar-quantised vectors: in the
        # bench this keeps recall@10 near 0.99 where IVF-PQ stayed below 0.8, and builds faster.
        config = IvfHnswSq(distance_type="cosine", num_partitions=max(1, table.count_rows() // 4096))
        try:
            table.create_index("vector", config=config, replace=True)
        except Exception as exc:
            raise BackendError(f"LanceDB index build failed: {exc}", details={"backend": self.name}) from exc
        info["indexed"] = True

    def apply(self, namespace: str, session: StoreSession, entries: Sequence[OutboxEntry]) -> dict[str, int]:
        wanted: dict[tuple[str, str], set[str]] = {}
        for e in entries:
            if e.kind.startswith("vector:"):
                wanted.setdefault((e.kind.split(":", 1)[1], e.detail), set()).add(e.item_id)
        return {"objects": 0, "relations": 0, "vectors": self._sync(namespace, session, wanted)}

    def _sync(self, namespace: str, session: StoreSession, wanted: dict[tuple[str, str], set[str]]) -> int:
        done = 0
        with self._lock:
            state = self._state(namespace)
            for (owner_type, model), ids in sorted(wanted.items()):
                found = session.get_vectors(model, owner_type, sorted(ids))
                # An owner keeps one vector: drop it from every table of its owner type, then add the current one.
                for info in state["tables"].values():
                    if info["owner_type"] == owner_type:
                        self._open(info["name"]).delete(f"id IN ({_quote(sorted(ids))})")
                by_dim: dict[int, list[tuple[str, npt.NDArray[np.float32]]]] = {}
                for oid, vec in sorted(found.items()):
                    by_dim.setdefault(int(vec.shape[0]), []).append((oid, vec))
                for dim, rows in by_dim.items():
                    table = self._table(namespace, state, owner_type, model, dim)
                    table.add(self._arrow(rows, dim))
                    done += len(rows)
                    self._maybe_compact(table)
        return done

    def _maybe_compact(self, table: Any) -> None:
        """Small appends and deletes each leave a fragment; merge them (and fold new rows into the
        ANN index) every ``COMPACT_EVERY`` applies so search does not slow down over time."""
        n = self._applies.get(table.name, 0) + 1
        self._applies[table.name] = n
        if n % COMPACT_EVERY == 0:
            table.optimize()

    def repair(self, namespace: str, session: StoreSession, ids: dict[str, list[str]]) -> dict[str, int]:
        wanted: dict[tuple[str, str], set[str]] = {}
        owners = {t: dict(session.vector_owners(t)) for t in self.owner_types}
        state = self._state(namespace)
        for key in ids.get("vectors", []):
            owner_type, owner_id = key.split(":", 1)
            models = {i["model"] for i in state["tables"].values() if i["owner_type"] == owner_type}
            if owner_id in owners.get(owner_type, {}):
                models.add(owners[owner_type][owner_id])
            for model in models:
                wanted.setdefault((owner_type, model), set()).add(owner_id)
        return {"objects": 0, "relations": 0, "vectors": self._sync(namespace, session, wanted)}

    # --- reads -----------------------------------------------------------------------------------
    def vector_search(
        self, namespace: str, model: str, query: npt.NDArray[np.float32], *, owner_type: str, limit: int
    ) -> list[tuple[str, float]]:
        info = self._state(namespace)["tables"].get(f"{owner_type}|{model}")
        if info is None or info["dim"] != query.shape[0]:
            return []
        with self._lock:
            search = self._open(info["name"]).search(
                np.asarray(query, dtype=np.float32), vector_column_name="vector"
            )
            search = search.metric("cosine").select(["id", "_distance"]).limit(limit)
            if info.get("indexed"):
                search = search.nprobes(NPROBES).refine_factor(REFINE)
            try:
                rows = search.to_list()
            except Exception as exc:
                raise BackendError(f"LanceDB search failed: {exc}", details={"backend": self.name}) from exc
        hits = [(r["id"], 1.0 - float(r["_distance"])) for r in rows]
        return sorted(hits, key=lambda h: (-h[1], h[0]))

    def fingerprint(self, namespace: str) -> Fingerprint:
        vectors: dict[str, str] = {}
        with self._lock:
            for info in self._state(namespace)["tables"].values():
                data = self._open(info["name"]).to_arrow()
                ids = data.column("id").to_pylist()
                matrix = (
                    data.column("vector").combine_chunks().flatten().to_numpy().reshape(len(ids), info["dim"])
                )
                for oid, vec in zip(ids, matrix, strict=True):
                    vectors[f"{info['owner_type']}:{oid}"] = vector_digest(info["model"], vec)
        return make({"vectors": vectors})

    def reader(self, namespace: str) -> LanceDBReader:
        return LanceDBReader(self, namespace)


class LanceDBReader:
    """The vector port over one namespace's LanceDB tables."""

    name = "lancedb"

    def __init__(self, backend: LanceDBBackend, namespace: str) -> None:
        self.backend = backend
        self.namespace = namespace

    def vector_search(
        self, model: str, query: npt.NDArray[np.float32], *, owner_type: str, limit: int
    ) -> list[tuple[str, float]]:
        return self.backend.vector_search(self.namespace, model, query, owner_type=owner_type, limit=limit)
