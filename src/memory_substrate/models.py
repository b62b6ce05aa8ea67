"""The one domain model every surface maps onto. No persistence methods here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory_substrate.json_types import JsonObject

# One lifecycle vocabulary for knowledge (and the subset other families use).
KNOWLEDGE_STATUSES = ("candidate", "active", "contested", "superseded", "stale", "archived", "expired")
LIVE_KNOWLEDGE_STATUSES = ("candidate", "active", "contested")
OBJECT_TYPES = ("source", "knowledge", "activity", "work_item", "node", "entity")
RELATION_DERIVATIONS = ("canonical_relation", "field_reference", "evidence_ref", "structured_payload")


@dataclass
class MemoryObject:
    """Any addressable memory record: source, knowledge, activity, work item or node."""

    id: str
    object_type: str
    kind: str
    status: str
    title: str
    summary: str = ""
    created_at: str = ""
    updated_at: str = ""
    version: int = 1
    memory_source: str | None = None
    confidence: float | None = None
    reason: str | None = None
    scope_refs: list[str] = field(default_factory=list)
    subject_refs: list[str] = field(default_factory=list)
    source_refs: list[str] = field(default_factory=list)
    related_node_refs: list[str] = field(default_factory=list)
    evidence_refs: list[dict[str, Any]] = field(default_factory=list)
    payload: JsonObject = field(default_factory=dict)
    metadata: JsonObject = field(default_factory=dict)
    valid_from: str | None = None
    valid_until: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # A copy one level deep is enough for JSON and for callers that edit the top-level lists
        # and dicts; ``dataclasses.asdict`` deep-copies recursively and dominated write profiles.
        return {
            k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
            for k, v in self.__dict__.items()
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryObject:
        return cls(**data)


@dataclass
class Segment:
    """One piece of captured evidence inside a source (a message, a chunk, a page)."""

    source_id: str
    id: str  # "seg-N", unique within its source
    ordinal: int
    text: str
    locator: dict[str, Any]
    hash: str
    metadata: JsonObject = field(default_factory=dict)
    created_at: str = ""
    # The ranker's normalised terms (``retrieval.segment_terms``: ``retrieval.terms.lexical_document``
    # of the text, a code symbol's summary weighted), stored at ingest. Read only by light reads
    # (ranking); None elsewhere and on rows stored without them. Not part of an export: it is
    # derived from ``text`` and ``metadata``.
    terms: str | None = field(default=None, compare=False, repr=False)
    # ``analysis.main_language`` of the text, stored at ingest so a search does not run
    # the language detector on each of its candidates: "" when the text's language cannot be
    # told, None where it was not read (full reads) or not stored (older rows).
    language: str | None = field(default=None, compare=False, repr=False)


@dataclass
class Relation:
    """A typed, directed edge. ``payload.relation_schema`` records how it was derived."""

    id: str
    rel_type: str
    source_id: str
    target_id: str
    origin_id: str | None = None  # the object whose write derived this relation
    payload: JsonObject = field(default_factory=dict)
    created_at: str = ""


@dataclass
class AuditEvent:
    id: str
    patch_id: str
    object_id: str
    action: str  # create | update | status_change | relate | unrelate | ...
    created_at: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class PatchRecord:
    id: str
    tool: str
    mode: str
    reason: str | None
    created_at: str
    operations: int
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass
class SearchDoc:
    """Normalised text handed to the store's full-text index (built outside storage)."""

    title: str
    summary: str
    body: str
    meta: str


@dataclass
class ObjectHead:
    """What ranking needs of an object, read without decoding its whole record (search candidates)."""

    id: str
    object_type: str
    kind: str
    status: str
    title: str
    summary: str


@dataclass
class TextHit:
    object_id: str
    score: float


@dataclass
class SegmentHit:
    source_id: str
    segment_id: str
    score: float


@dataclass
class Job:
    """A unit of background work on one target (today: extracting one episode)."""

    id: str
    kind: str  # "extract"
    target_id: str
    status: str  # pending | running | done | failed
    attempts: int = 0
    created_at: str = ""
    updated_at: str = ""
    error: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Trace:
    """An audit trace of one extraction run or one context compile (operational record, not memory)."""

    id: str
    kind: str  # "extraction" | "compile"
    subject_id: str | None
    created_at: str
    data: dict[str, Any] = field(default_factory=dict)
