"""Input models of memory_remember, one per mode."""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from memory_substrate.governance import Governance
from memory_substrate.json_types import JsonObject
from memory_substrate.validation import Strict

KIND_PATTERN = r"^[a-z][a-z0-9_\-]{0,63}$"


class EvidenceRef(Strict):
    source_id: str = Field(min_length=1, max_length=200)
    segment_id: str | None = Field(default=None, max_length=200)
    locator: JsonObject | None = None
    hash: str | None = Field(default=None, max_length=128)


class StructuredPayload(Strict):
    # Extra keys are allowed in a payload (it is the caller's structured data); the claim
    # fields themselves are typed.
    model_config = ConfigDict(extra="allow")
    subject: str | None = Field(default=None, max_length=500)
    predicate: str | None = Field(default=None, max_length=200)
    value: builtins.object = None  # any JSON value (``object`` is a field of this model)
    object: str | None = Field(default=None, max_length=500)
    metadata: JsonObject = Field(default_factory=dict)

    @model_validator(mode="after")
    def _pairs(self) -> StructuredPayload:
        if bool(self.subject) != bool(self.predicate):
            raise ValueError("a structured payload needs both subject and predicate")
        return self


WorkStatus = Literal["open", "in_progress", "blocked", "done", "cancelled"]
Priority = Literal["low", "medium", "high", "urgent"]


class GovernedCreate(Governance):
    kind: str = Field(pattern=KIND_PATTERN)
    title: str = Field(min_length=1, max_length=500)
    summary: str = Field(min_length=1, max_length=20_000)
    metadata: JsonObject = Field(default_factory=dict)


class KnowledgeInput(GovernedCreate):
    subject_refs: list[str] = Field(default_factory=list, max_length=50)
    evidence_refs: list[EvidenceRef] = Field(default_factory=list, max_length=100)
    payload: StructuredPayload | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    status: Literal["active", "candidate"] | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None


class ActivityInput(GovernedCreate):
    source_refs: list[str] = Field(default_factory=list, max_length=100)
    related_node_refs: list[str] = Field(default_factory=list, max_length=100)


class WorkItemInput(GovernedCreate):
    source_refs: list[str] = Field(default_factory=list, max_length=100)
    related_node_refs: list[str] = Field(default_factory=list, max_length=100)
    status: WorkStatus = "open"
    priority: Priority | None = None


class WorkItemUpdate(Strict):
    """An update of an existing work item: ``memory_remember work_item`` with ``work_item_id``.
    Only the fields given change; every change is one audited patch (the object's history)."""

    work_item_id: str = Field(min_length=1, max_length=200)
    reason: str = Field(min_length=1, max_length=4000)
    status: WorkStatus | None = None
    priority: Priority | None = None
    title: str | None = Field(default=None, min_length=1, max_length=500)
    summary: str | None = Field(default=None, min_length=1, max_length=20_000)
    source_refs: list[str] | None = Field(default=None, max_length=100)
    related_node_refs: list[str] | None = Field(default=None, max_length=100)

    @model_validator(mode="after")
    def _changes_something(self) -> WorkItemUpdate:
        if not self.changed_fields():
            raise ValueError(
                "a work item update needs at least one of status, priority, title, summary, source_refs, "
                "related_node_refs"
            )
        return self

    def changed_fields(self) -> list[str]:
        return [f for f in UPDATABLE_WORK_FIELDS if getattr(self, f) is not None]


UPDATABLE_WORK_FIELDS = ("status", "priority", "title", "summary", "source_refs", "related_node_refs")


class PromoteInput(Strict):
    knowledge_id: str = Field(min_length=1)
    reason: str = Field(min_length=1, max_length=4000)


class ContestInput(PromoteInput):
    pass


class SupersedeInput(Strict):
    old_knowledge_id: str = Field(min_length=1)
    new_knowledge_id: str = Field(min_length=1)
    reason: str = Field(min_length=1, max_length=4000)


class BatchEntry(Strict):
    mode: Literal["activity", "knowledge", "work_item", "promote", "supersede", "contest"]
    input_data: JsonObject  # parsed by the input model of ``mode``


class BatchInput(Strict):
    entries: list[BatchEntry] = Field(min_length=1, max_length=500)
