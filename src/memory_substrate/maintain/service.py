"""memory_maintain: structural and lifecycle maintenance."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import Field

from memory_substrate.errors import NotAvailableError, UnsupportedModeError
from memory_substrate.runtime import Runtime
from memory_substrate.validation import Strict, parse

STRUCTURAL = ("configure", "structure", "audit", "reindex", "repair")
LIFECYCLE = (
    "promote_candidates",
    "merge_duplicates",
    "resolve_duplicates",
    "archive_source",
    "decay_stale",
    "cycle",
    "report",
)
MODES = STRUCTURAL + LIFECYCLE


class StructureInput(Strict):
    pass


class ReadOnlyOptions(Strict):
    pass


class AuditInput(Strict):
    object_id: str | None = Field(default=None, max_length=300)


class AuditOptions(Strict):
    max_items: int = Field(default=50, ge=1, le=1000)


class MaintainService:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    def run(self, mode: str, input_data: dict[str, Any], options: dict[str, Any] | None = None) -> dict[str, Any]:
        if mode not in MODES:
            raise UnsupportedModeError(f"unsupported memory_maintain mode {mode!r}; allowed: {', '.join(MODES)}")
        handler = getattr(self, f"_{mode}", None)
        if handler is None:
            raise NotAvailableError(
                f"memory_maintain mode {mode!r} is part of the contract but not available in this build yet; "
                "nothing was changed",
                details={"mode": mode},
            )
        result: dict[str, Any] = handler(input_data, options or {})
        result.setdefault("mode", mode)
        return result

    def _structure(self, input_data: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        parse(StructureInput, input_data, "input_data")
        parse(ReadOnlyOptions, options, "options")
        store = self.rt.store
        with store.read(self.rt.namespace) as session:
            rows = session.count_objects()
            segments = session.count_segments()
            relations = session.list_relations(limit=1_000_000)
            vectors = session.vector_stats()
            config = session.get_config()
            patches = session.list_patches(limit=1)
        by_type: Counter[str] = Counter()
        by_status: dict[str, Counter[str]] = {}
        by_kind: dict[str, Counter[str]] = {}
        for object_type, kind, status, n in rows:
            by_type[object_type] += n
            by_status.setdefault(object_type, Counter())[status] += n
            by_kind.setdefault(object_type, Counter())[kind] += n
        derivations = Counter(r.payload.get("relation_schema", {}).get("derivation", "unknown") for r in relations)
        return {
            "result_type": "structure_result",
            "namespace": self.rt.namespace,
            "storage": {"backend": store.backend, "location": store.location, "schema_version": store.schema_version()},
            "counts": {
                "objects": sum(by_type.values()),
                "by_object_type": dict(by_type),
                "by_status": {k: dict(v) for k, v in by_status.items()},
                "by_kind": {k: dict(v) for k, v in by_kind.items()},
                "segments": segments,
                "relations": len(relations),
                "relations_by_derivation": dict(derivations),
                "vectors": vectors,
            },
            "config": config,
            "last_patch_at": patches[0].created_at if patches else None,
            "semantic_backend": {"configured": self.rt.settings.embedder},
        }

    def _audit(self, input_data: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
        data = parse(AuditInput, input_data, "input_data")
        opts = parse(AuditOptions, options, "options")
        with self.rt.store.read(self.rt.namespace) as session:
            events = session.list_events(object_id=data.object_id, limit=opts.max_items)
            patches = session.list_patches(limit=opts.max_items) if data.object_id is None else []
            if data.object_id is not None and session.get_object(data.object_id) is None and not events:
                from memory_substrate.errors import NotFoundError

                raise NotFoundError(f"object {data.object_id} not found", details={"id": data.object_id})
        return {
            "result_type": "audit_result",
            "object_id": data.object_id,
            "events": [
                {"event_id": e.id, "patch_id": e.patch_id, "object_id": e.object_id, "action": e.action,
                 "created_at": e.created_at, "data": e.data}
                for e in events
            ],
            "patches": [
                {"patch_id": p.id, "tool": p.tool, "mode": p.mode, "reason": p.reason, "created_at": p.created_at,
                 "operations": p.operations}
                for p in patches
            ],
            "counts": {"events": len(events), "patches": len(patches)},
        }
