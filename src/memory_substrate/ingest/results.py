"""What memory_ingest answers: the stored (or unchanged) capture and its advisory suggestions.

Each answer is built in ``ingest/service.py``, ``ingest/repeats.py`` and
``ingest/suggestions.py``; ``detail: compact`` cuts it in ``suggestions.summarise``.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict, final

from memory_substrate.ingest.adapters.repo_map import PendingDecision
from memory_substrate.ingest.captured import SkippedFile, WithheldFile
from memory_substrate.json_types import JsonObject
from memory_substrate.redaction import RedactionSummary


class EvidenceRef(TypedDict):
    source_id: str
    segment_id: str


class RankingSignals(TypedDict):
    bonuses: list[str]
    penalties: list[str]
    score_adjustment: float


class SkippedTerm(TypedDict):
    """A heading or term that did not become a concept candidate, and why."""

    title: str
    reason: str
    occurrences: int


class CandidateCounts(TypedDict):
    skipped: int
    eligible: int
    returned: int


class CandidateDiagnostics(TypedDict):
    skipped: list[SkippedTerm]
    counts: CandidateCounts


class ConceptCandidate(TypedDict):
    """A repeated heading or term worth reviewing as a concept. ``full``: the whole remember call
    (``suggested_memory.input_data``) and ``object_refs``; compact: a pointer to the maintain report
    and the ``omitted_fields``."""

    kind: str
    detail: str
    candidate_type: str
    title: str
    score: float
    occurrences: int
    ranking_signals: RankingSignals
    evidence_refs: list[EvidenceRef]
    evidence_ref_count: int
    object_ref_count: int
    suggested_memory: JsonObject
    review_guidance: JsonObject
    object_refs: NotRequired[list[str]]
    omitted_fields: NotRequired[list[str]]
    next_actions: list[str]


class CandidateSuggestion(TypedDict):
    """The part of a candidate ``suggestions._suggestion`` makes: its suggested memory and review
    guidance, with ``object_refs`` (full) or the ``omitted_fields`` (compact)."""

    suggested_memory: JsonObject
    review_guidance: JsonObject
    object_refs: NotRequired[list[str]]
    omitted_fields: NotRequired[list[str]]


class SuggestionCounts(TypedDict):
    concept_candidates: int
    concept_candidates_available: int


class MemorySuggestions(TypedDict):
    """A capture's concept candidates with the agent-extraction protocol (``detail: full``)."""

    concept_candidates: list[ConceptCandidate]
    agent_extraction: JsonObject
    candidate_diagnostics: CandidateDiagnostics
    counts: SuggestionCounts
    next_actions: list[str]


class CandidateBrief(TypedDict):
    title: str
    score: float
    occurrences: int
    segment_ids: list[str]


@final  # no full ``MemorySuggestions`` is one: ``summarise`` tells them apart by key
class CompactSuggestions(TypedDict):
    """``MemorySuggestions`` cut for ``detail: compact``: each candidate briefly, guidance once."""

    concept_candidates: list[CandidateBrief]
    suggested_memory: JsonObject
    review_guidance: JsonObject
    agent_extraction: JsonObject
    counts: SuggestionCounts
    more: JsonObject


class Extraction(TypedDict):
    """The episode's extraction, queued for the background worker."""

    status: str
    episode_id: str
    specific_facts: int


class QueuedVectors(TypedDict):
    """Vectors the background worker still makes: how many segments wait for one."""

    status: str
    segments: int


class IngestResult(TypedDict):
    """One memory_ingest answer: a stored, appended or unchanged (``status: noop``) capture."""

    result_type: str
    status: str
    requires_decision: bool
    source_id: str
    patch_id: str | None
    applied_operations: int
    audit_event_ids: list[str]
    segment_count: NotRequired[int]
    appended_messages: NotRequired[int]
    projection_count: int
    reason: NotRequired[str]
    superseded_source_id: NotRequired[str]
    extraction: NotRequired[Extraction]
    excluded_by_preflight: NotRequired[list[str]]
    pending_decisions: NotRequired[list[PendingDecision]]
    suggested_exclude_patterns: NotRequired[list[str]]
    warnings: NotRequired[list[str]]
    withheld: NotRequired[list[WithheldFile]]
    skipped: NotRequired[list[SkippedFile]]
    skipped_count: NotRequired[int]
    memory_suggestions: NotRequired[MemorySuggestions | CompactSuggestions]
    vectors: NotRequired[QueuedVectors]
    counts: NotRequired[dict[str, int]]
    redacted: NotRequired[RedactionSummary]
