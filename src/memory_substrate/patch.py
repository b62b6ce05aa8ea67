"""Every write is one patch: objects, segments, relations, vectors and audit events, in one
transaction. The patch writes through the open session as it goes (so governance later in the
same batch sees earlier entries) and records itself last; any error rolls the whole thing back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from memory_substrate.embed.base import Embedder, Vector
from memory_substrate.indexing import (
    claim_key,
    derived_relations,
    embed_objects,
    embed_segments,
    embedding_text,
    keyed_vectors,
    lookup_keys,
    referenced_node_ids,
    search_doc,
    segment_search_text,
    segment_vector_id,
    stub_node,
)
from memory_substrate.json_types import JsonObject
from memory_substrate.models import AuditEvent, MemoryObject, PatchRecord, Relation, Segment
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import new_id, now_iso

# Segment vectors made before a write, in the segments' order: a model's batch, or a list in which
# None leaves a segment's vector to the background worker (``graph.deferred``).
PreparedVectors: TypeAlias = Sequence[Vector | None] | npt.NDArray[np.float32]


class Patch:
    def __init__(
        self,
        session: StoreSession,
        *,
        tool: str,
        mode: str,
        reason: str | None,
        embedder: Embedder | None,
        prepared: dict[str, Vector] | None = None,
    ) -> None:
        self.session = session
        self.id = new_id("patch")
        self.tool = tool
        self.mode = mode
        self.reason = reason
        self.embedder = embedder
        self.events: list[AuditEvent] = []
        self.operations = 0
        self.created_ids: list[str] = []
        self.committed: PatchRecord | None = None  # set by commit()
        self._pending_vectors: list[MemoryObject] = []
        # Vectors embedded before the write session opened, by embedding text: a writer should not
        # hold the namespace's write lock while a model runs.
        self.prepared: dict[str, Vector] = prepared or {}
        self.deferred_segments: dict[str, list[str]] = {}  # source id -> segments whose vectors come later

    def _event(self, object_id: str, action: str, data: JsonObject) -> None:
        self.events.append(AuditEvent(new_id("event"), self.id, object_id, action, now_iso(), data))
        self.operations += 1

    def create(self, obj: MemoryObject, *, derive: bool = True) -> MemoryObject:
        ts = now_iso()
        obj = replace(obj, created_at=obj.created_at or ts, updated_at=ts, version=1)
        self.session.insert_object(obj, search_doc(obj), claim_key(obj))
        keys = lookup_keys(obj)
        if keys:
            self.session.set_object_keys(obj.id, keys)
        self.created_ids.append(obj.id)
        self._event(
            obj.id, "create", {"object_type": obj.object_type, "kind": obj.kind, "status": obj.status}
        )
        if derive:
            self._ensure_nodes(obj)
            self._sync_relations(obj, initial=True)
        self._pending_vectors.append(obj)
        return obj

    def update(
        self,
        obj: MemoryObject,
        *,
        action: str,
        changes: Mapping[str, object],
        derive: bool = True,
        embed: bool = True,
    ) -> MemoryObject:
        """Write a new version; ``embed=False`` when title and summary (the embedded text) are unchanged."""
        obj = replace(obj, updated_at=now_iso(), version=obj.version + 1)
        self.session.update_object(obj, search_doc(obj), claim_key(obj))
        self.session.set_object_keys(obj.id, lookup_keys(obj))
        self._event(obj.id, action, {"changes": changes, "version": obj.version})
        if derive:
            self._ensure_nodes(obj)
            self._sync_relations(obj, initial=False)
        if embed:
            self._pending_vectors.append(obj)
        return obj

    def set_status(self, obj: MemoryObject, status: str, reason: str | None, **extra: object) -> MemoryObject:
        changes: JsonObject = {"status": {"from": obj.status, "to": status}, "reason": reason, **extra}
        return self.update(
            replace(obj, status=status), action="status_change", changes=changes, derive=False, embed=False
        )

    def record(self, object_id: str, action: str, data: JsonObject) -> None:
        """An audit event for a change that is not an object write (a relation, a deletion)."""
        self._event(object_id, action, data)

    def relate(self, rels: Sequence[Relation], *, object_id: str) -> None:
        """Write canonical relations (not derived from an object's fields), audited on ``object_id``."""
        self.session.insert_relations(rels)
        for rel in rels:
            self._event(object_id, "relate", {"relation": asdict(rel)})

    def unrelate(self, rels: Sequence[Relation], *, object_id: str) -> None:
        self.session.delete_relations([r.id for r in rels])
        for rel in rels:
            self._event(object_id, "unrelate", {"relation": asdict(rel)})

    def delete(self, obj: MemoryObject, reason: str | None) -> None:
        """Remove an object and its derived rows; the audit event keeps its last state."""
        self.session.delete_object(obj.id)
        self._pending_vectors = [o for o in self._pending_vectors if o.id != obj.id]
        self._event(obj.id, "delete", {"reason": reason, "snapshot": obj.to_dict()})

    def add_segments(
        self,
        segments: Sequence[Segment],
        *,
        vectors: bool = True,
        prepared_vectors: PreparedVectors | None = None,
    ) -> None:
        """Insert segments; their vectors come from ``prepared_vectors`` (same order) when given.
        A prepared vector that is None is left for later (``graph.deferred``): its segment's id is
        kept in ``deferred_segments`` for the caller to queue."""
        self.session.insert_segments((s, *segment_search_text(s)) for s in segments)
        self.operations += len(segments)
        if vectors and self.embedder is not None and segments:
            if prepared_vectors is not None and len(prepared_vectors) == len(segments):
                rows = []
                for s, v in zip(segments, prepared_vectors, strict=True):
                    if v is None:
                        self.deferred_segments.setdefault(s.source_id, []).append(s.id)
                    else:
                        rows.append((segment_vector_id(s.source_id, s.id), v))
            else:
                rows = embed_segments(self.embedder, segments)
            if rows:
                self.session.upsert_vectors(self.embedder.name, "segment", rows)

    def _ensure_nodes(self, obj: MemoryObject) -> None:
        """Refs to nodes that do not exist yet become stub nodes, so the graph has no dangling edge."""
        refs = referenced_node_ids(obj)
        if not refs:
            return
        existing = self.session.get_objects(refs)
        for ref in refs:
            if ref in existing:
                continue
            self.create(stub_node(ref, obj.id), derive=False)

    def _sync_relations(self, obj: MemoryObject, *, initial: bool) -> None:
        if not initial:
            self.session.delete_relations_from_origin(obj.id)
        rels = derived_relations(obj, now_iso())
        if rels:
            self.session.insert_relations(rels)

    def commit(self, summary: JsonObject | None = None) -> PatchRecord:
        """Embed what was written and record the patch with its audit events."""
        if self.embedder is not None and self._pending_vectors:
            latest = {o.id: o for o in self._pending_vectors}
            ready = [
                (o.id, self.prepared[embedding_text(o)])
                for o in latest.values()
                if embedding_text(o) in self.prepared
            ]
            rest = [o for o in latest.values() if embedding_text(o) not in self.prepared]
            rows = ready + embed_objects(self.embedder, rest)
            self.session.upsert_vectors(self.embedder.name, "object", rows)
            for owner_type, keyed in keyed_vectors(self.embedder, list(latest.values())).items():
                self.session.upsert_vectors(self.embedder.name, owner_type, keyed)
        record = PatchRecord(
            id=self.id,
            tool=self.tool,
            mode=self.mode,
            reason=self.reason,
            created_at=now_iso(),
            operations=self.operations,
            summary=summary or {},
        )
        self.session.record_patch(record, self.events)
        self.committed = record
        return record

    @property
    def event_ids(self) -> list[str]:
        return [e.id for e in self.events]
