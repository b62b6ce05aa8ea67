"""What each memory_remember mode answers, before ``RememberService.run`` adds the envelope
(``result_type``, ``mode``, ``patch_id``, ``applied_operations``, ``audit_event_ids``).

Plain dicts at run time: the answer on the wire is the dict each handler builds, in its key order.
"""

from __future__ import annotations

from typing import TypeAlias, TypedDict

from memory_substrate.graph.extraction_trace import (
    ClaimConflict,
    EntityConflict,
    EntityNew,
    EntityRefused,
    EntityResolved,
)
from memory_substrate.json_types import JsonObject


class PossibleDuplicate(TypedDict):
    """Live unstructured knowledge that closely resembles a new claim (advisory)."""

    object_id: str
    score: float
    reasons: list[str]
    title: str
    kind: str
    status: str


# "from" is a keyword, hence the functional form.
Normalized = TypedDict("Normalized", {"field": str, "from": str, "to": str, "rule": str})


class KnowledgeCreated(TypedDict):
    status: str
    object_id: str
    object_type: str
    knowledge_status: str
    normalized: list[Normalized]
    conflicts: list[ClaimConflict]
    possible_duplicates: list[PossibleDuplicate]


class ObjectCreated(TypedDict):
    """An activity written."""

    status: str
    object_id: str
    object_type: str


class WorkItemCreated(ObjectCreated):
    work_status: str


class WorkItemUpdated(WorkItemCreated):
    version: int
    changed: list[str]


class StatusChanged(TypedDict):
    """Knowledge promoted or contested."""

    status: str
    object_id: str
    knowledge_status: str
    previous_status: str


class Superseded(TypedDict):
    status: str
    object_id: str
    superseded_by: str
    knowledge_status: str


class BatchApplied(TypedDict):
    status: str
    entry_count: int
    results: list[JsonObject]  # each entry's index and mode, then its mode's answer


class ExtractionEntities(TypedDict):
    """The trace's entity entries, as the trace holds them."""

    resolved: list[EntityResolved]
    new: list[EntityNew]
    refused: list[EntityRefused]
    conflicts: list[EntityConflict]


class ExtractionSummary(TypedDict):
    """The compact outcome of an extraction trace."""

    entities: ExtractionEntities
    facts: dict[str, int]  # outcome -> how many facts
    fact_ids: list[str]
    superseded_fact_ids: list[str]
    custom_predicates: list[str]
    procedures: dict[str, list[str]]  # outcome -> procedure ids


class ExtractionApplied(ExtractionSummary):
    status: str
    episode_id: str
    trace_id: str


# A graph snapshot's import report is a JSON object: its lists are the report's, by name.
ModeResult: TypeAlias = (
    KnowledgeCreated
    | ObjectCreated
    | WorkItemCreated
    | WorkItemUpdated
    | StatusChanged
    | Superseded
    | BatchApplied
    | ExtractionApplied
    | JsonObject
)
