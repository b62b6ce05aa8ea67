"""The shapes of ``memory_query``'s answers, where each is built (service.py, graph_modes.py,
compact_search.py).

TypedDicts are plain dicts at run time: an answer reaches the wire as the very dict it always
was. ``QueryService.run`` then shapes every answer by key (pruning, the token budget), as a
``JsonObject``. Values read from an object's free-form ``payload`` or ``metadata`` stay
``object``.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from memory_substrate.answers.view_types import CompactView, HistoryEntry, SegmentView
from memory_substrate.json_types import JsonObject


# --- search (compact_search.py) --------------------------------------------------------------
class SourceGroup(TypedDict):
    """One source of a compact segment answer, with its matching lines and their ranks."""

    id: str
    kind: NotRequired[str]
    title: NotRequired[str]
    date: NotRequired[str]
    ranks: NotRequired[list[int]]
    lines: NotRequired[list[str]]


# --- recent, page, expand, graph (service.py) ------------------------------------------------
class RecentResult(TypedDict):
    result_type: Literal["recent_result"]
    items: list[CompactView]
    count: int
    next_cursor: str | None
    applied_filters: dict[str, list[str]]


class SourceName(TypedDict):
    id: str
    kind: str
    title: str


class SegmentPage(TypedDict):
    """``page`` of one segment: the segment whole, with its source named."""

    result_type: Literal["page_result"]
    detail: Literal["compact", "full"]
    id: str
    source: SourceName
    segment: SegmentView


class PageUnavailable(TypedDict):
    result_type: Literal["page_unavailable"]
    status: Literal["unsupported"]
    id: str
    reason: str
    next_actions: list[str]


class FullPage(TypedDict):
    result_type: Literal["page_result"]
    detail: Literal["full"]
    object: JsonObject
    history: NotRequired[list[HistoryEntry]]
    segments: NotRequired[list[SegmentView]]
    segments_truncated: NotRequired[bool]


class PageContents(TypedDict, total=False):
    """What a compact page shows of an object beyond its compact view: a source's bounded index
    lists, metadata and segments, or another object's fields (each list cut to ``max_items``)."""

    payload: object
    metadata: JsonObject
    segments: list[SegmentView]
    evidence_refs: object
    subject_refs: object
    source_refs: object
    related_node_refs: object
    reason: object


class PageObject(CompactView, PageContents):
    """An object as a compact page shows it: its compact view, then its contents."""


# The fields of an object that a compact page adds when set, each list cut to ``max_items``.
PageField = Literal["evidence_refs", "subject_refs", "source_refs", "related_node_refs", "payload", "reason"]


class PageTail(TypedDict, total=False):
    """What a compact page adds after the object: a source's segment cursor (None on the last
    page), or a work item's history."""

    next_cursor: str | None
    history: list[HistoryEntry]


class CompactPage(PageTail):
    result_type: Literal["page_result"]
    detail: Literal["compact"]
    object: PageObject


class RelationView(TypedDict):
    id: str
    rel_type: str
    source_id: str
    target_id: str
    derivation: object
    relation_schema: NotRequired[object]  # compact detail leaves it out (its derivation is kept)


class Missing(TypedDict):
    """A related object the store no longer holds."""

    id: str
    missing: Literal[True]


class Related(TypedDict):
    relation: RelationView
    direction: Literal["out", "in"]
    object: CompactView | Missing


class EventRef(TypedDict):
    event_id: str
    patch_id: str
    action: str
    created_at: str


class ExpandResult(TypedDict):
    result_type: Literal["expand_result"]
    object: CompactView
    related: list[Related]
    segments: NotRequired[list[SegmentView]]
    evidence: NotRequired[list[SegmentView]]
    history: NotRequired[list[EventRef]]
    next_cursor: NotRequired[str | None]


class ExpandSegmentResult(TypedDict):
    """``expand`` of a segment: the segments around it, as lines (compact) or views (full)."""

    result_type: Literal["expand_result"]
    id: str
    object: CompactView
    date: NotRequired[str | None]
    cite: NotRequired[str]
    lines: NotRequired[list[str]]
    truncated: NotRequired[bool]
    segments: NotRequired[list[SegmentView]]


class GraphCounts(TypedDict):
    nodes: int
    edges: int


class GraphResult(TypedDict):
    result_type: Literal["graph_result"]
    root_id: str
    nodes: list[JsonObject]  # a node's fields depend on the detail asked for
    edges: list[RelationView]
    counts: GraphCounts
    truncated: bool


# --- entities, facts, trace (graph_modes.py) -------------------------------------------------
class NamedRef(TypedDict):
    id: object
    name: str | None


class FactView(TypedDict):
    id: str
    subject: NamedRef
    predicate: object
    status: str
    evidence_status: object
    valid_from: str | None
    valid_until: str | None
    confidence: float | None
    salience: object
    evidence_refs: list[JsonObject]
    object: NotRequired[NamedRef]
    value: NotRequired[object]
    superseded_by: NotRequired[object]
    supersedes: NotRequired[object]
    blocked_by: NotRequired[object]


# The links between facts a fact view shows when set.
FactLink = Literal["superseded_by", "supersedes", "blocked_by"]


class FactsResult(TypedDict):
    result_type: Literal["facts_result"]
    items: list[FactView]
    count: int
    total: int
    applied_filters: dict[str, str | bool]


class EntityView(TypedDict):
    id: str
    name: str
    type: str
    status: str
    aliases: object
    model_aliases: NotRequired[object]
    summary: str
    mentions: object
    episode_count: int
    merged_into: NotRequired[object]


class EntityWithFacts(EntityView):
    """An entity with the facts about it (``max_facts`` of them) and how many there are."""

    facts: list[FactView]
    fact_count: int


class ModelAliases(TypedDict, total=False):
    model_aliases: object


class MergedInto(TypedDict, total=False):
    merged_into: object


class EntitiesResult(TypedDict):
    result_type: Literal["entities_result"]
    items: list[EntityView | EntityWithFacts]
    count: int
    matched_by: str


class JobState(TypedDict):
    status: str
    attempts: int
    error: str | None


class TraceResult(TypedDict):
    result_type: Literal["trace_result"]
    trace: JsonObject  # the id, kind, subject and time, then whatever the trace recorded
    job: NotRequired[JobState]
