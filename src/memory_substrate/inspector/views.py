"""What each inspector page is handed (``data``): plain dicts with known keys, for the templates.

A value the page shows as the store or a trace holds it (a payload's field, a trace's task) is
``object``: the templates print it, nothing here relies on its type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from memory_substrate.json_types import JsonObject


class PageContext(TypedDict):
    """What every namespace page's frame shows: the namespace, the others, the page, its base URL."""

    ns: str
    namespaces: list[str]
    active: str
    base: str


class ObjectRow(TypedDict):
    id: str
    object_type: str
    kind: str
    status: str
    title: str
    summary: str
    updated_at: str
    confidence: float | None
    memory_source: str | None


# --- overview ------------------------------------------------------------------------------
class StorageInfo(TypedDict):
    backend: str
    location: str
    schema_version: int


class ObjectCounts(TypedDict):
    objects: int
    by_object_type: dict[str, int]
    by_status: dict[str, dict[str, int]]  # object type -> status -> count
    segments: int
    relations: int
    relations_capped: bool  # more relations than the overview scans


class HealthCounts(TypedDict):
    relations_by_derivation: dict[str, int]
    stub_nodes: int
    contested: int
    candidates: int
    superseded: int


class QueuedJob(TypedDict):
    episode_id: str
    title: str
    status: str
    attempts: int
    updated_at: str
    error: str | None


class Overview(TypedDict):
    storage: StorageInfo
    counts: ObjectCounts
    entities_by_type: dict[str, int]
    knowledge_by_kind: dict[str, int]
    health: HealthCounts
    jobs: dict[str, int]  # extraction jobs by status
    queue: list[QueuedJob]
    last_patch_at: str | None


class HealthReport(TypedDict):
    graph_health: Mapping[str, object]  # memory_maintain report's section, as it is built


class CachedHealthReport(HealthReport):
    cached: bool
    computed_at: str
    age_s: float
    compute_ms: float


# --- search --------------------------------------------------------------------------------
class SearchRow(TypedDict):
    """A search item in one shape for both units (values as ``memory_query search`` gives them)."""

    link_id: str | None
    object_type: str
    kind: str
    status: str
    title: str
    excerpt: str | None
    locator: object
    retrieval_sources: list[str]
    retrieval_ranks: dict[str, int]
    rank_score: float | None
    lexical_score: float | None
    semantic_score: float | None


class SearchResults(TypedDict):
    items: list[SearchRow]
    count: int


# --- entities and facts ----------------------------------------------------------------------
class EntityRow(TypedDict):
    id: str
    title: str
    kind: str
    status: str
    mentions: object
    aliases: object


class EntityDetailRow(ObjectRow):
    aliases: object
    metadata: JsonObject


class TimelineRow(TypedDict):
    fact: JsonObject
    label: str
    left: float  # percent of the axis
    width: float
    open: bool  # no valid_until yet
    superseded: bool


class Timeline(TypedDict):
    rows: list[TimelineRow]
    start: str | None
    end: str | None


class EntityView(TypedDict):
    entity: EntityDetailRow
    timeline: Timeline
    facts: list[JsonObject]  # memory_query facts items, each with the entity's ``role``


# --- neighbourhood graph ------------------------------------------------------------------------
class NodeData(TypedDict):
    id: str
    label: str
    type: str
    kind: str
    status: str
    focus: bool


class GraphNode(TypedDict):
    data: NodeData


class EdgeData(TypedDict):
    id: str
    source: str
    target: str
    label: str
    derivation: str


class GraphEdge(TypedDict):
    data: EdgeData


class Neighbourhood(TypedDict):
    """The graph around the focus, in cytoscape's element shape."""

    focus: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool


# --- objects, sources, log -------------------------------------------------------------------------
class RelationRow(TypedDict):
    rel_type: str
    source_id: str
    target_id: str
    derivation: str


class ObjectEvent(TypedDict):
    id: str
    action: str
    patch_id: str
    created_at: str
    data: str  # pretty-printed JSON


class ObjectDetail(TypedDict):
    object: ObjectRow
    json: str
    relations: list[RelationRow]
    events: list[ObjectEvent]


class SourceRow(ObjectRow):
    segment_count: object
    uri: object


class SourcesPage(TypedDict):
    rows: list[SourceRow]
    page: int
    has_next: bool


class SourceDetailRow(ObjectRow):
    uri: object
    payload: str  # pretty-printed JSON
    frontmatter: object


class SegmentRow(TypedDict):
    id: str
    ordinal: int
    text: str
    locator: Mapping[str, object]
    locator_json: str
    metadata: JsonObject


class SourceView(TypedDict):
    source: SourceDetailRow
    segments: list[SegmentRow]
    total: int
    page: int
    has_next: bool


class PatchEvent(TypedDict):
    id: str
    action: str
    object_id: str
    created_at: str
    data: str  # pretty-printed JSON


class PatchRow(TypedDict):
    id: str
    tool: str
    mode: str
    reason: str | None
    created_at: str
    operations: int
    events: list[PatchEvent]


class PatchLog(TypedDict):
    patches: list[PatchRow]


# --- traces and procedures ---------------------------------------------------------------------
class CandidateRow(TypedDict):
    """A compile candidate; its fields as the trace stored them, wherever it kept them."""

    id: str
    title: object
    dims: dict[str, float]
    score: float | None
    selected: object
    reason: object
    strategies: str


class TraceRow(TypedDict):
    id: str
    kind: str
    subject_id: str | None
    created_at: str
    task: object
    candidates: int


class TraceHead(TypedDict):
    id: str
    kind: str
    subject_id: str | None
    created_at: str
    task: object
    found: int


class TraceView(TypedDict):
    trace: TraceHead
    candidates: list[CandidateRow]
    dimensions: tuple[str, ...]
    json: str


class ProcedureRow(ObjectRow):
    procedure_kind: object
    text: object
    observation_count: object
    source_episodes: object
