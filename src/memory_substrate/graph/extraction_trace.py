"""The shapes of what an extraction records: the per-episode trace ``ExtractionApplier`` builds,
the windows a model run asked (``window_run.py``), the run's trace and report (``extract.py``).

They are plain dicts at run time (``TypedDict``): the trace is stored as it is built, and a
model-run trace is the applier's traces merged key by key with the run's own facts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, Required, TypedDict

from memory_substrate.json_types import JsonObject


class DroppedItem(TypedDict):
    """An item of a model's answer that was not kept, and why."""

    item: str
    reason: str
    value: NotRequired[str | list[str]]  # the item as the model wrote it (clipped), or the names dropped


class Citation(TypedDict):
    """What the evidence rule (``grounding.py``) did to one claim's citations."""

    item: str
    cited: int
    unknown_segments_removed: NotRequired[list[str]]
    rule: NotRequired[str]
    segment_ids: NotRequired[list[str]]


class Windowing(TypedDict):
    """How an episode was cut into windows (``extraction_prompt.plan``)."""

    windows: int
    overlap_turns: int
    max_chars: int
    turns: int
    clipped_segments: list[str]


class RepairNote(TypedDict):
    items: int
    finish_reason: str | None


class WindowTrace(TypedDict, total=False):
    """One window's request, what its answer yielded, and its error when nothing usable came back."""

    part: Required[list[int]]
    segments: Required[list[str]]
    turns: Required[int]
    max_tokens: Required[int]
    attempts: int
    retried: list[str]
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    items: int
    dropped: list[DroppedItem]
    grounding: list[Citation]
    truncated: bool
    split: list[WindowTrace]
    repair: RepairNote
    error: JsonObject  # a ``MemorySubstrateError.to_dict()``


# ``pass`` is a keyword, hence the functional form.
ResolutionConflict = TypedDict("ResolutionConflict", {"pass": str, "reason": str, "entity_ids": list[str]})
EntityResolved = TypedDict(
    "EntityResolved", {"name": str, "entity_id": str, "pass": str, "confidence": float}
)
EntityConflict = TypedDict(
    "EntityConflict", {"name": str, "type": str, "pass": str, "reason": str, "entity_ids": list[str]}
)


class Candidate(TypedDict):
    """An entity the semantic pass of resolution weighed, and its score."""

    entity_id: str
    score: float


class EntityNew(TypedDict):
    name: str
    entity_id: str
    type: str


class EntityRefused(TypedDict):
    name: str
    type: str
    reason: str


class EntityOutcomes(TypedDict):
    extracted: int
    resolved: list[EntityResolved]
    new: list[EntityNew]
    refused: list[EntityRefused]
    conflicts: list[EntityConflict]


class ClaimConflict(TypedDict):
    """A live claim a new one met when it settled (``claims.settle``)."""

    object_id: str
    title: str
    outcome: NotRequired[str]
    status: NotRequired[str]


class FactWritten(TypedDict):
    fact_id: str
    title: str
    status: str
    evidence_status: str


class FactHistory(FactWritten):
    superseded_by: str | None


class FactContested(FactWritten):
    conflicts: list[ClaimConflict]


class FactReinforced(TypedDict):
    fact_id: str
    title: str


class FactSuperseded(TypedDict):
    fact_id: str
    title: str
    superseded_by: str


class FactOutcomes(TypedDict):
    extracted: int
    created: list[FactWritten]
    reinforced: list[FactReinforced]
    superseded: list[FactSuperseded]
    contested: list[FactContested]
    history: list[FactHistory]


class ProcedureOutcome(TypedDict):
    """What one observation of a procedure did (``procedures.observe``)."""

    outcome: str  # created | merged | merged_and_promoted | already_observed
    procedure_id: str
    confidence: float | None
    observations: object  # as stored: an imported procedure's count is whatever the import wrote


class ProcedureOutcomes(TypedDict):
    extracted: int
    created: list[ProcedureOutcome]
    merged: list[ProcedureOutcome]
    promoted: list[ProcedureOutcome]


class ObjectKeptAsLiteral(TypedDict):
    """A fact whose object names no entity: the object is kept as a literal value."""

    kind: str
    object: str


TraceError = ObjectKeptAsLiteral | JsonObject  # the latter a ``MemorySubstrateError.to_dict()``


class ExtractionTrace(TypedDict):
    """``ExtractionApplier.apply``'s trace of one extraction of one episode."""

    episode_id: str
    extractor: str
    entities: EntityOutcomes
    facts: FactOutcomes
    custom_predicates: list[str]
    evidence_strengths: dict[str, int]
    procedures: ProcedureOutcomes
    errors: list[TraceError]
    redacted: NotRequired[Mapping[str, object]]  # ``Redactions.summary()``, when it held a secret
    dropped: NotRequired[list[DroppedItem]]
    latency_ms: NotRequired[float]
    patch_id: NotRequired[str]


class ExtractionRunTrace(TypedDict, total=False):
    """A model run's trace of one episode: the applier's traces of its windows merged (absent when
    no window yielded an item), with the run's windows, drops and errors."""

    episode_id: str
    extractor: str
    entities: EntityOutcomes
    facts: FactOutcomes
    custom_predicates: list[str]
    evidence_strengths: dict[str, int]
    procedures: ProcedureOutcomes
    errors: list[TraceError]
    redacted: Mapping[str, object]
    dropped: list[DroppedItem]
    latency_ms: float
    prompt_version: str
    windowing: Windowing
    window_runs: list[WindowTrace]
    patch_id: str


class DroppedExample(TypedDict):
    item: str
    reason: str


class LeftOut(TypedDict):
    """For a run's report: what was dropped (a few examples) and the windows cut at the token cap."""

    dropped: int
    dropped_examples: list[DroppedExample]
    truncated_windows: int


class ExtractRun(TypedDict):
    """``extract_one``'s report of one episode."""

    episode_id: str
    status: str
    outcome: str  # done | partial | failed
    trace_id: str
    entities: NotRequired[int]
    facts: NotRequired[int]
    windows: NotRequired[int]
    dropped: int
    dropped_examples: list[DroppedExample]
    truncated_windows: int
    error: NotRequired[JsonObject]


class ExtractResult(TypedDict, total=False):
    """``memory_maintain extract``'s result (``extract.drain``)."""

    result_type: Required[str]
    mode: Required[str]
    apply: Required[bool]
    dry_run: Required[bool]
    queue: Required[dict[str, int]]
    episodes: Required[list[str]]
    status: str
    extractor: str | None
    runs: list[ExtractRun]
    counts: dict[str, int]
