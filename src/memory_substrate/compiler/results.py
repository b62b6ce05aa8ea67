"""The shapes of what a compile builds: the package's header, the strategies' notes, the trace,
and the ``context`` answer in its compact and its full form.

TypedDicts are plain dicts at run time: an answer or a trace is the very dict it always was,
and mypy checks each key where it is built. Keys that are Python keywords (``class``) take the
functional form.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from memory_substrate.answers.view_types import CompactView
from memory_substrate.json_types import JsonObject


# --- the package (render.py, budget.py) -------------------------------------------------------
class PackageHeader(TypedDict, total=False):
    """What the package's root states about the task before any recalled item: a compile always
    names the task's class; a package renders with any of these, or none."""

    task_class: str
    secondary_class: str
    coverage: str


class ObjectFields(TypedDict):
    """A knowledge element's attributes in the package (``render.object_fields``)."""

    id: str
    type: str
    kind: str
    status: str
    evidence_status: NotRequired[object]
    valid_from: NotRequired[str]
    procedure_kind: NotRequired[object]
    evidence: NotRequired[list[str]]


class ObjectEntry(ObjectFields):
    """A knowledge element of a JSON package: its attributes and its text."""

    text: str


# --- what the strategies noted (retrieve.py, episodes.py) --------------------------------------
class EntityMatch(TypedDict):
    id: str
    match: float


class StreamDepths(TypedDict):
    full_text: int
    vector: int


class CompileNotes(TypedDict, total=False):
    """What the strategies learnt about the task: the coverage gate reads it, the trace carries
    the ``TRACED`` part of it."""

    entities: list[EntityMatch]
    entities_asked: list[str]
    facts_below_floor: int
    procedures_below_floor: int
    open_work_listed: int
    streams: StreamDepths
    answer_type: str
    episode_match: float
    word_coverage: float
    participants_named: list[str]
    code_names_unseen: list[str]
    coverage: Literal["unjudged", "covered", "weak"]
    coverage_by: str


# The notes the trace carries, in the order it lists them.
TracedNote = Literal[
    "answer_type",
    "streams",
    "coverage",
    "coverage_by",
    "open_work_listed",
    "episode_match",
    "word_coverage",
    "participants_named",
    "code_names_unseen",
]


# --- the trace (trace.py) ------------------------------------------------------------------
# One strategy of the compile: run (``found``) or left out (``skipped``, with why).
ProfileEntry = TypedDict(
    "ProfileEntry",
    {
        "class": str,
        "strategy": str,
        "why": NotRequired[str],
        "skipped": NotRequired[str],
        "found": NotRequired[int],
    },
)


class CandidateTrace(TypedDict):
    """One candidate as the trace lists it (``Candidate.trace_entry``)."""

    id: str
    kind: str
    memory_type: str
    strategies: list[str]
    profile: str
    status: str
    similarity: float
    scores: NotRequired[dict[str, float]]
    score: NotRequired[float]
    reason: NotRequired[str]
    tokens: NotRequired[int]


class CandidatesTrace(TypedDict):
    found: int
    selected_count: int
    rejected_count: int
    rejected_by_reason: dict[str, int]
    selected: list[CandidateTrace]
    rejected: list[CandidateTrace]


ClassRef = TypedDict("ClassRef", {"class": str, "confidence": float})


class ClassificationView(TypedDict):
    """How the task was classified (``Classification.to_dict``)."""

    primary: ClassRef
    secondary: ClassRef | None
    dual_profile: bool
    method: str
    scores: dict[str, float]
    cues: dict[str, list[str]]


class CompileTrace(TypedDict):
    """A compile's trace before the strategies' notes join it (``trace.build``)."""

    task: str
    model: str | None
    classification: ClassificationView
    profiles: list[ProfileEntry]
    candidates: CandidatesTrace
    token_count: int
    budget_tokens: int
    budget_source: str
    format: str
    latency_ms: dict[str, float]


# --- the answer (compile.py) -----------------------------------------------------------------
class AnswerBudget(TypedDict):
    budget_tokens: int
    budget_source: str
    package_entries: int
    candidate_items: int


class AnswerClassification(TypedDict):
    primary: ClassRef
    method: str
    dual_profile: bool


class ContextAnswer(TypedDict):
    """The compact ``context`` answer: the package in ``content`` and the facts about it."""

    result_type: Literal["context_result"]
    task: str
    format: str
    token_count: int
    context_budget: AnswerBudget
    classification: AnswerClassification
    semantic_backend: JsonObject
    trace_id: str
    content: str
    query_sanitizer: NotRequired[dict[str, object]]


class SelectedItem(CompactView):
    """A selected object in the full answer's ``items``: how it was found, and its scores."""

    retrieval_sources: list[str]
    scores: dict[str, float]


class OpenWorkItem(CompactView):
    """Open work in scope that the full answer's ``items`` list after the selected objects."""

    retrieval_sources: list[str]


ContextItem = SelectedItem | OpenWorkItem


class Section(TypedDict):
    """A tier of the directory: the ids of ``field`` it lists, and how many."""

    field: str
    count: int
    ids: list[str]


class Hint(TypedDict):
    tool: str
    mode: str
    input_data: dict[str, str]
    why: str


class PolicyTier(TypedDict):
    resource: str
    snippets: list[str]


class ActiveTask(TypedDict):
    task: str
    scope: JsonObject


class ContextTiers(TypedDict):
    policy: PolicyTier
    active_task: ActiveTask
    decisions: Section
    procedures: Section
    evidence: Section
    open_work: Section
    deep_search_hints: list[Hint]


class ResultBudget(TypedDict):
    max_items: int
    returned_items: int
    candidate_items: int
    detail: str
    budget_tokens: int
    budget_source: str
    token_count: int
    package_entries: int


class ContextResult(TypedDict):
    """The full ``context`` answer (``detail: "full"`` or ``include_items``): the package with
    its structured directory."""

    result_type: Literal["context_result"]
    task: str
    items: list[ContextItem]
    context_tiers: ContextTiers
    context_budget: ResultBudget
    normalized_terms: list[str]
    semantic_backend: JsonObject
    query_sanitizer: dict[str, object]
    classification: ClassificationView
    format: str
    token_count: int
    trace_id: str
    content: str
    latency_ms: dict[str, float]
