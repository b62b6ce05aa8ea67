"""memory_remember: governed creates and lifecycle writes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from memory_substrate import traces
from memory_substrate.contracts.inputs import GraphSnapshotInput
from memory_substrate.errors import (
    BatchEntryError,
    ConflictError,
    DuplicateError,
    MemorySubstrateError,
    NotFoundError,
    ValidationError,
)
from memory_substrate.expiry import is_expired
from memory_substrate.graph import jobs
from memory_substrate.graph.apply import ExtractionApplier, Governance
from memory_substrate.graph.claims import apply_settlement, settle, trust_of
from memory_substrate.graph.extraction_trace import ExtractionTrace
from memory_substrate.graph.procedures import promotable, promotion_gap
from memory_substrate.graph.schemas import ExtractionInput
from memory_substrate.indexing import claim_key, claim_value
from memory_substrate.json_types import JsonObject
from memory_substrate.models import LIVE_KNOWLEDGE_STATUSES, MemoryObject
from memory_substrate.patch import Patch
from memory_substrate.redaction import Redactions, redact_fields
from memory_substrate.remember import schemas
from memory_substrate.remember.evidence import check_evidence
from memory_substrate.remember.modes import MODES_DECLARED
from memory_substrate.remember.results import (
    BatchApplied,
    ExtractionApplied,
    ExtractionSummary,
    KnowledgeCreated,
    ModeResult,
    Normalized,
    ObjectCreated,
    StatusChanged,
    Superseded,
    WorkItemCreated,
    WorkItemUpdated,
)
from memory_substrate.remember.similarity import possible_duplicates
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.validation import mode_of, parse

MODES = tuple(m.name for m in MODES_DECLARED)
INPUT_MODELS = {m.name: m.input_model for m in MODES_DECLARED}  # batch entries parse by their mode


def input_model(mode: str, input_data: JsonObject) -> type[BaseModel]:
    """The input model of ``mode`` for this input: ``work_item`` with a ``work_item_id`` is an
    update of that item, without one a new item."""
    if mode == "work_item" and isinstance(input_data, dict) and "work_item_id" in input_data:
        return schemas.WorkItemUpdate
    return INPUT_MODELS[mode]


def _scopes_overlap(a: list[str], b: list[str]) -> bool:
    return bool(set(a) & set(b))


def _require_refs_exist(session: StoreSession, refs: list[str], field: str, object_type: str) -> None:
    found = session.get_objects(refs)
    for ref in refs:
        obj = found.get(ref)
        if obj is None or obj.object_type != object_type:
            raise NotFoundError(
                f"{field}: {object_type} {ref} not found", details={"id": ref, "field": field}
            )


def _get_knowledge(session: StoreSession, knowledge_id: str, field: str) -> MemoryObject:
    obj = session.get_object(knowledge_id)
    if obj is None or obj.object_type != "knowledge":
        raise NotFoundError(f"{field}: knowledge {knowledge_id} not found", details={"id": knowledge_id})
    return obj


class RememberService:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    def run(self, mode: str, input_data: JsonObject, options: JsonObject | None = None) -> JsonObject:
        declared = mode_of(MODES_DECLARED, mode)
        parse(declared.options_model, options or {}, "options")
        data = parse(input_model(mode, input_data), input_data, "input_data")
        found = Redactions()
        redact_fields(data, found)  # after parsing: a marker longer than its secret breaks no length limit
        reason = getattr(data, "reason", None)
        with self.rt.write("memory_remember", mode, reason) as (_session, patch):
            result = self._handler(mode)(patch, data)
            record = patch.commit({"mode": mode})
        answer: JsonObject = {
            "result_type": "remember_result",
            "mode": mode,
            **result,
            "patch_id": record.id,
            "applied_operations": record.operations,
            "audit_event_ids": patch.event_ids,
        }
        return found.report(answer)

    def _handler(self, mode: str) -> Callable[[Patch, BaseModel], ModeResult]:
        # Each handler takes its own mode's input model, which ``parse`` built from the mode's name.
        handler: Callable[[Patch, BaseModel], ModeResult] = getattr(
            self, mode_of(MODES_DECLARED, mode).handler
        )
        return handler

    # --- batch ------------------------------------------------------------------
    def _batch(self, patch: Patch, data: schemas.BatchInput) -> BatchApplied:
        parsed = []
        for i, entry in enumerate(data.entries):
            try:
                model = input_model(entry.mode, entry.input_data)
                parsed.append((entry.mode, parse(model, entry.input_data, f"entries[{i}].input_data")))
            except ValidationError as exc:
                raise BatchEntryError(
                    f"batch entry {i} ({entry.mode}) is invalid; nothing was written: {exc.message}",
                    details={"entry_index": i, "entry_mode": entry.mode, "error": exc.to_dict()},
                ) from None
        results: list[JsonObject] = []
        for i, (mode, item) in enumerate(parsed):
            try:
                results.append({"index": i, "mode": mode, **self._handler(mode)(patch, item)})
            except MemorySubstrateError as exc:
                raise BatchEntryError(
                    f"batch entry {i} ({mode}) failed; nothing was written: {exc.message}",
                    details={"entry_index": i, "entry_mode": mode, "error": exc.to_dict()},
                ) from None
        return {"status": "applied", "entry_count": len(results), "results": results}

    # --- creates ------------------------------------------------------------------
    def _base(self, object_type: str, data: schemas.GovernedCreate, status: str) -> MemoryObject:
        from memory_substrate.util import new_id

        return MemoryObject(
            id=new_id(object_type),
            object_type=object_type,
            kind=data.kind,
            status=status,
            title=data.title,
            summary=data.summary,
            memory_source=data.memory_source,
            reason=data.reason,
            scope_refs=list(data.scope_refs),
            metadata=dict(data.metadata),
        )

    def _knowledge(self, patch: Patch, data: schemas.KnowledgeInput) -> KnowledgeCreated:
        session = patch.session
        requested = data.status or "active"
        status = requested
        normalized: list[Normalized] = []
        if data.memory_source == "agent_inferred" and requested == "active":
            status = "candidate"
            normalized.append(
                {
                    "field": "status",
                    "from": "active",
                    "to": "candidate",
                    "rule": "agent_inferred_claims_start_as_candidates",
                }
            )
        elif data.kind == "procedure" and requested == "active":
            # Procedures earn trust through observation (graph/procedures.py): a written one
            # is a candidate until promoted with evidence from 3 episodes and confidence >= 0.8.
            status = "candidate"
            normalized.append(
                {
                    "field": "status",
                    "from": "active",
                    "to": "candidate",
                    "rule": "procedures_start_as_candidates",
                }
            )
        if data.valid_from and data.valid_until and data.valid_until <= data.valid_from:
            raise ValidationError("input_data.valid_until must be after valid_from")
        evidence = check_evidence(session, data.evidence_refs)
        payload = data.payload.model_dump(exclude_none=False) if data.payload else {}
        if payload and not (payload.get("subject") or payload.get("predicate")):
            # An all-empty payload is the unstructured form.
            payload = {k: v for k, v in payload.items() if v not in (None, {}, [])}
        obj = replace(
            self._base("knowledge", data, status),
            subject_refs=list(dict.fromkeys(data.subject_refs)),
            evidence_refs=evidence,
            payload=payload,
            confidence=data.confidence,
            valid_from=data.valid_from.isoformat() if data.valid_from else None,
            valid_until=data.valid_until.isoformat() if data.valid_until else None,
        )
        settled = settle(session, obj)
        if settled.duplicate_of is not None:
            other = settled.duplicate_of
            raise DuplicateError(
                f"exact duplicate of {other.id}: same kind, scope, subject, predicate and value",
                details={"existing_id": other.id, "existing_status": other.status},
            )
        created = patch.create(settled.obj)
        apply_settlement(patch, created, settled)
        return {
            "status": "created",
            "object_id": created.id,
            "object_type": "knowledge",
            "knowledge_status": created.status,
            "normalized": normalized,
            "conflicts": settled.conflicts,
            "possible_duplicates": possible_duplicates(session, created),
        }

    def _activity(self, patch: Patch, data: schemas.ActivityInput) -> ObjectCreated:
        _require_refs_exist(patch.session, data.source_refs, "source_refs", "source")
        obj = replace(
            self._base("activity", data, "recorded"),
            source_refs=list(dict.fromkeys(data.source_refs)),
            related_node_refs=list(dict.fromkeys(data.related_node_refs)),
        )
        created = patch.create(obj)
        return {"status": "created", "object_id": created.id, "object_type": "activity"}

    def _work_item(
        self, patch: Patch, data: schemas.WorkItemInput | schemas.WorkItemUpdate
    ) -> WorkItemCreated | WorkItemUpdated:
        if isinstance(data, schemas.WorkItemUpdate):
            return _update_work_item(patch, data, self.rt.clock())
        _require_refs_exist(patch.session, data.source_refs, "source_refs", "source")
        obj = replace(
            self._base("work_item", data, data.status),
            source_refs=list(dict.fromkeys(data.source_refs)),
            related_node_refs=list(dict.fromkeys(data.related_node_refs)),
            payload={"priority": data.priority} if data.priority else {},
        )
        created = patch.create(obj)
        return {
            "status": "created",
            "object_id": created.id,
            "object_type": "work_item",
            "work_status": created.status,
        }

    def _graph_snapshot(self, patch: Patch, data: GraphSnapshotInput) -> JsonObject:
        from memory_substrate.remember.snapshot_import import import_snapshot  # loads the schema validators

        return import_snapshot(patch, data.snapshot, data.scope_refs, data.reason)

    # --- lifecycle ----------------------------------------------------------------
    def _promote(self, patch: Patch, data: schemas.PromoteInput) -> StatusChanged:
        obj = _get_knowledge(patch.session, data.knowledge_id, "knowledge_id")
        if obj.status == "active":
            raise ConflictError(f"knowledge {obj.id} is already active", details={"id": obj.id})
        if obj.status not in ("candidate", "contested", "stale"):
            raise ConflictError(
                f"knowledge {obj.id} is {obj.status} and cannot be promoted", details={"id": obj.id}
            )
        if obj.kind == "procedure" and not promotable(obj):
            raise ConflictError(
                f"procedure {obj.id} has not earned promotion: it needs 3 distinct episodes (observed in or cited "
                "as evidence) and confidence >= 0.8",
                details={"id": obj.id, **promotion_gap(obj)},
            )
        key = claim_key(obj)
        if key:
            rivals = [
                o.id
                for o in patch.session.find_by_claim(key)
                if o.id != obj.id
                and o.status in LIVE_KNOWLEDGE_STATUSES
                and _scopes_overlap(o.scope_refs, obj.scope_refs)
                and claim_value(o) != claim_value(obj)
            ]
            if rivals:
                raise ConflictError(
                    f"knowledge {obj.id} conflicts with live claims {', '.join(rivals)}; supersede or contest them first",
                    details={"id": obj.id, "conflicting_ids": rivals},
                )
        if obj.kind == "procedure":
            obj = replace(
                obj, metadata={**obj.metadata, "evidence_status": "promoted"}
            )  # as graph/procedures.py does
        elif (
            obj.metadata.get("evidence_status") == "deprecated"
        ):  # decayed, now reviewed: back to what it was
            meta = {k: v for k, v in obj.metadata.items() if k != "evidence_status_before_decay"}
            meta["evidence_status"] = obj.metadata.get("evidence_status_before_decay")
            obj = replace(obj, metadata={k: v for k, v in meta.items() if v is not None})
        updated = patch.set_status(obj, "active", data.reason)
        return {
            "status": "promoted",
            "object_id": updated.id,
            "knowledge_status": "active",
            "previous_status": obj.status,
        }

    def _contest(self, patch: Patch, data: schemas.ContestInput) -> StatusChanged:
        obj = _get_knowledge(patch.session, data.knowledge_id, "knowledge_id")
        if obj.status not in ("candidate", "active", "stale"):
            raise ConflictError(
                f"knowledge {obj.id} is {obj.status} and cannot be contested", details={"id": obj.id}
            )
        updated = patch.set_status(obj, "contested", data.reason)
        return {
            "status": "contested",
            "object_id": updated.id,
            "knowledge_status": "contested",
            "previous_status": obj.status,
        }

    def _supersede(self, patch: Patch, data: schemas.SupersedeInput) -> Superseded:
        if data.old_knowledge_id == data.new_knowledge_id:
            raise ValidationError("input_data: old_knowledge_id and new_knowledge_id must differ")
        old = _get_knowledge(patch.session, data.old_knowledge_id, "old_knowledge_id")
        new = _get_knowledge(patch.session, data.new_knowledge_id, "new_knowledge_id")
        if old.status == "superseded":
            raise ConflictError(f"knowledge {old.id} is already superseded", details={"id": old.id})
        if new.status not in LIVE_KNOWLEDGE_STATUSES:
            raise ConflictError(
                f"knowledge {new.id} is {new.status}; only live knowledge can supersede",
                details={"id": new.id},
            )
        if trust_of(new) < trust_of(old):
            raise ConflictError(
                f"knowledge {new.id} is less trusted than {old.id} ({new.memory_source} < {old.memory_source}); "
                "a lower-trust claim cannot supersede a higher-trust one",
                details={"id": old.id, "superseded_by": new.id},
            )
        # The old claim names its successor, as a superseded graph fact does (graph/claims.py): a
        # package that recalls the old claim's turns marks them with it.
        patch.set_status(
            replace(old, metadata={**old.metadata, "superseded_by": new.id}),
            "superseded",
            data.reason,
            superseded_by=new.id,
        )
        meta = dict(new.metadata)
        meta["supersedes"] = old.id
        patch.update(
            replace(new, metadata=meta),
            action="supersede",
            changes={"supersedes": old.id, "reason": data.reason},
        )
        return {
            "status": "superseded",
            "object_id": old.id,
            "superseded_by": new.id,
            "knowledge_status": "superseded",
        }

    # --- extraction (the calling agent supplies its own extraction) --------------------------
    def _extraction(self, patch: Patch, data: ExtractionInput) -> ExtractionApplied:
        gov = Governance(
            reason=data.reason,
            memory_source=data.memory_source,
            scope_refs=list(data.scope_refs),
            extractor="agent",
        )
        trace = ExtractionApplier(patch, self.rt.embedder_or_none()).apply(data.episode_id, data, gov)
        trace["patch_id"] = patch.id
        record = traces.record(patch.session, "extraction", data.episode_id, trace)
        jobs.finish(patch.session, data.episode_id, trace_id=record.id, extractor="agent")
        return {"status": "applied", "episode_id": data.episode_id, "trace_id": record.id, **summarize(trace)}


# A procedure trace's outcome lists, in the order the trace holds them.
PROCEDURE_OUTCOMES: tuple[Literal["created", "merged", "promoted"], ...] = ("created", "merged", "promoted")


def summarize(trace: ExtractionTrace) -> ExtractionSummary:
    """The compact outcome of an extraction trace (the trace itself has every detail)."""
    ents, facts, procs = trace["entities"], trace["facts"], trace["procedures"]
    return {
        "entities": {
            "resolved": ents["resolved"],
            "new": ents["new"],
            "refused": ents["refused"],
            "conflicts": ents["conflicts"],
        },
        "facts": {k: len(v) for k, v in facts.items() if isinstance(v, list)},
        "fact_ids": [
            f["fact_id"] for group in (facts["created"], facts["contested"], facts["history"]) for f in group
        ],
        "superseded_fact_ids": [f["fact_id"] for f in facts["superseded"]],
        "custom_predicates": trace["custom_predicates"],
        "procedures": {k: [p["procedure_id"] for p in procs[k]] for k in PROCEDURE_OUTCOMES},
    }


def _update_work_item(patch: Patch, data: schemas.WorkItemUpdate, now: datetime) -> WorkItemUpdated:
    """One audited version of the item with the given fields changed; the audit event keeps each
    change's old and new value, so ``memory_query page`` can show the item's history. Any status
    may follow any other (work is reopened as often as it is closed); an update that changes
    nothing is refused, so every event in the history is a change."""
    obj = patch.session.get_object(data.work_item_id)
    if obj is None or obj.object_type != "work_item" or is_expired(obj, now):
        # an expired item no read shows is not there to update either
        raise NotFoundError(
            f"work_item_id: work item {data.work_item_id} not found", details={"id": data.work_item_id}
        )
    if data.source_refs is not None:
        _require_refs_exist(patch.session, data.source_refs, "source_refs", "source")
    sources = list(dict.fromkeys(data.source_refs)) if data.source_refs is not None else None
    related = list(dict.fromkeys(data.related_node_refs)) if data.related_node_refs is not None else None
    new: JsonObject = {
        "status": data.status,
        "priority": data.priority,
        "title": data.title,
        "summary": data.summary,
        "source_refs": sources,
        "related_node_refs": related,
    }
    old: JsonObject = {
        "status": obj.status,
        "priority": obj.payload.get("priority"),
        "title": obj.title,
        "summary": obj.summary,
        "source_refs": obj.source_refs,
        "related_node_refs": obj.related_node_refs,
    }
    changes = {f: {"from": old[f], "to": v} for f, v in new.items() if v is not None and v != old[f]}
    if not changes:
        raise ConflictError(
            f"work item {obj.id} already has these values; nothing to change",
            details={"id": obj.id, "fields": data.changed_fields()},
        )
    payload = {**obj.payload, "priority": data.priority} if "priority" in changes else obj.payload
    updated = replace(
        obj,
        status=data.status or obj.status,
        title=data.title or obj.title,
        summary=data.summary or obj.summary,
        source_refs=sources if sources is not None else obj.source_refs,
        related_node_refs=related if related is not None else obj.related_node_refs,
        payload=payload,
    )  # the item keeps the reason it was written for; the update's reason is in its audit event
    refs_changed = "source_refs" in changes or "related_node_refs" in changes
    text_changed = "title" in changes or "summary" in changes
    written = patch.update(
        updated,
        action="work_item_update",
        changes={**changes, "reason": data.reason},
        derive=refs_changed,
        embed=text_changed,
    )
    return {
        "status": "updated",
        "object_id": written.id,
        "object_type": "work_item",
        "work_status": written.status,
        "version": written.version,
        "changed": sorted(changes),
    }
