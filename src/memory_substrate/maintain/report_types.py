"""What ``report`` answers, section by section, and the graph-health section the inspector shows
on its own (``health_section.py``). Plain dicts at run time, keys in the order they are built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict

from memory_substrate.json_types import JsonObject
from memory_substrate.maintain.results import (
    CycleThresholds,
    DuplicateGroupView,
    EffectiveBackends,
    RefView,
    Section,
)


# --- graph health ---------------------------------------------------------------------------
class NodeRelationCounts(TypedDict):
    nodes: int
    relations: int


class SideCounts(TypedDict):
    canonical: NodeRelationCounts
    backend: NodeRelationCounts


class RelationCount(TypedDict):
    relations: int


class HealthThresholds(TypedDict):
    sparse_min_size: int
    sparse_max_density: float


class GraphShape(TypedDict):
    records: int
    relations: int
    components: int


class SparseCluster(TypedDict):
    size: int
    relations: int
    density: float
    hub_id: str
    member_ids: list[str]


class BridgeNode(RefView):
    degree: int


class WeakScope(TypedDict):
    scope: str
    records: int
    internal_relations: int
    touching_relations: int
    components: int
    isolated_records: int


class GraphHealth(TypedDict):
    backend: str
    configured: bool
    counts: SideCounts
    missing_backend_counts: NodeRelationCounts
    extra_backend_counts: RelationCount
    outdated_backend_counts: RelationCount
    stub_node_count: int
    thresholds: HealthThresholds
    available: NotRequired[bool]  # false without networkx, and then only reason follows
    reason: NotRequired[str]
    graph: NotRequired[GraphShape]
    isolated_nodes: NotRequired[Section[RefView]]
    sparse_clusters: NotRequired[Section[SparseCluster]]
    bridge_nodes: NotRequired[Section[BridgeNode]]
    weakly_connected_scopes: NotRequired[Section[WeakScope]]
    derived_backend: NotRequired[JsonObject]  # a derived graph backend's counts, when one is configured


# --- fact-check issues ----------------------------------------------------------------------
class SimilarEntityName(TypedDict):
    issue_type: Literal["similar_entity_name"]
    name_key: str
    object_ids: list[str]
    titles: list[str]
    stub_ids: list[str]
    suggested_action: str


class StaleFact(TypedDict):
    issue_type: Literal["stale_fact"]
    object_id: str
    title: str
    kind: str
    valid_until: str | None
    suggested_action: str


class Assertion(TypedDict):
    object_id: str
    kind: str
    status: str
    value: object
    object: object
    scope_refs: list[str]


class RelationshipMismatch(TypedDict):
    issue_type: Literal["relationship_mismatch"]
    subject: str
    predicate: str
    object_ids: list[str]
    assertions: list[Assertion]
    suggested_action: str


FactCheckIssue = SimilarEntityName | StaleFact | RelationshipMismatch


# --- soft duplicates ------------------------------------------------------------------------
class ResolutionChoice(TypedDict):
    action: str
    tool: str
    mode: str


class ReviewGuidance(TypedDict):
    required_checks: list[str]
    outcomes: list[ResolutionChoice]


class SoftItem(TypedDict):
    id: str
    title: str
    kind: str
    status: str
    scope_refs: list[str]


class SupersedeInput(TypedDict):
    outcome: str
    knowledge_ids: list[str]
    canonical_knowledge_id: str
    reason: str


class ApplyTrue(TypedDict):
    apply: bool


class SuggestedResolution(TypedDict):
    tool: str
    mode: str
    input_data: SupersedeInput
    options: ApplyTrue


class SoftDuplicateEntry(TypedDict):
    object_ids: list[str]
    score: float
    reasons: list[str]
    items: list[SoftItem]
    review_guidance: ReviewGuidance
    suggested_resolution: SuggestedResolution
    next_actions: list[str]


class SoftDuplicateScan(TypedDict):
    complete: bool
    scorer: str


# --- concept candidates ---------------------------------------------------------------------
class ConceptCounts(TypedDict):
    skipped: int
    eligible: int
    returned: int
    already_in_memory: int
    sources_scanned: int


class ConceptDiagnostics(TypedDict):
    skipped: list[JsonObject]
    counts: ConceptCounts


# --- the report -----------------------------------------------------------------------------
class GraphTotals(TypedDict):
    """The knowledge graph's totals in the report's ``counts`` (graph/report.py has the section)."""

    entities: int
    custom_predicates: int
    procedures: int
    promoted_procedures: int


class ReportCounts(GraphTotals):
    objects: int
    knowledge: int
    knowledge_by_status: dict[str, int]
    candidates: int
    promotable_candidates: int
    low_evidence_candidates: int
    stale_candidates: int
    duplicate_groups: int
    soft_duplicate_candidates: int
    concept_candidates: int
    fact_check_issues: int
    fact_check_issues_by_type: dict[str, int]
    relations: int


class MaintenanceReport(TypedDict):
    result_type: str
    mode: str
    read_only: bool
    reference_time: str
    thresholds: CycleThresholds
    promotable_candidates: list[JsonObject]
    low_evidence_candidates: list[JsonObject]
    stale_candidates: list[JsonObject]
    duplicate_groups: list[DuplicateGroupView]
    soft_duplicate_candidates: list[SoftDuplicateEntry]
    soft_duplicate_scan: SoftDuplicateScan
    concept_candidates: list[JsonObject]
    candidate_diagnostics: ConceptDiagnostics
    fact_check_issues: list[FactCheckIssue]
    graph_health: GraphHealth
    knowledge_graph: Mapping[str, object]  # graph/report.py builds it
    counts: ReportCounts
    truncated: dict[str, bool]
    backends: EffectiveBackends
    next_actions: list[str]
