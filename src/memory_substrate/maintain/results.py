"""What each memory_maintain mode answers, key by key.

A mutating mode's result is its envelope's head, the mode's own fields, its ``counts``, then the
envelope's tail (``common.Envelope``; common.py's docstring gives the rules); the read-only modes
(``structure``, ``audit``, ``report``) and ``embed`` have shapes of their own. These are plain
dicts at run time: the keys appear on the wire in the order the builder writes them. A field
typed ``Mapping[str, object]`` holds a JSON object another package builds (the derived backends'
mirror, the embedding queue, the store's rows), passed through as it came.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, Literal, NotRequired, TypedDict, TypeVar

from memory_substrate.embed.choice import KeptDefault
from memory_substrate.json_types import JsonObject

T = TypeVar("T")

# A setting or field before and after a change; "from" is a keyword, hence the functional form.
Change = TypedDict("Change", {"from": object, "to": object})


class RefView(TypedDict):
    """An object named in a finding: enough to tell it apart and fetch it."""

    id: str
    object_type: str
    kind: str
    status: str
    title: str


# --- the envelope of a mutating mode --------------------------------------------------------
class MutationHead(TypedDict):
    result_type: str
    mode: str
    status: Literal["applied", "dry_run", "noop"]
    applied: bool
    dry_run: bool


class MutationTail(TypedDict):
    patch_id: str | None
    applied_operations: int
    audit_event_ids: list[str]
    next_actions: NotRequired[list[str]]


class MutationResult(MutationHead, MutationTail):
    """The envelope alone: what every mutating mode's result holds besides its own fields."""


# --- configure ------------------------------------------------------------------------------
class EffectiveBackends(TypedDict):
    graph_backend: str
    semantic_backend: str


class BackendCheck(TypedDict):
    name: str
    supported: bool
    native: bool
    detail: str
    install: NotRequired[str]


class BackendSwitch(TypedDict, total=False):
    """The derived backends a committed configure dropped and built (empty: none in play)."""

    dropped: list[object]
    built: Mapping[str, Mapping[str, object]]


class ConfigureCounts(TypedDict):
    changed: int


class ConfigureResult(MutationResult):
    changes: dict[str, Change]
    config: JsonObject
    effective_backends: EffectiveBackends
    backends: dict[str, BackendCheck]
    derived_backends: BackendSwitch
    warnings: list[str]
    counts: ConfigureCounts


# --- reindex and its diagnostics ------------------------------------------------------------
class ReindexCounts(TypedDict):
    objects_full_text: int
    segments_full_text: int
    object_vectors: int
    segment_vectors: int
    relations_added: int
    relations_rewritten: int
    relations_removed: int
    derived_backends_rebuilt: NotRequired[int]


class GraphBackendPlan(TypedDict):
    backend: str
    relations_expected: int


class SemanticBackendView(TypedDict):
    backend: str
    enabled: bool
    model: str | None
    reason: NotRequired[object]


class DerivedRebuild(TypedDict):
    planned: list[str]
    rebuilt: Mapping[str, Mapping[str, object]]


class ReindexResult(MutationResult):
    graph_backend: GraphBackendPlan
    semantic_backend: SemanticBackendView
    derived_backends: DerivedRebuild
    counts: ReindexCounts


class SegmentKey(TypedDict):
    source_id: str
    segment_id: str


class FullTextDiagnostics(TypedDict):
    objects_missing: int
    segments_missing: int
    sample_object_ids: list[str]
    sample_segments: list[SegmentKey]


class VectorDiagnostics(TypedDict):
    backend: str
    enabled: bool
    model: str | None
    by_model: dict[str, int]
    orphaned: int
    reason: NotRequired[object]  # without an embedder
    objects_missing: NotRequired[int]  # this and the rest: with one
    objects_stale_model: NotRequired[int]
    segments_missing: NotRequired[int]
    segments_queued: NotRequired[int]
    segments_stale_model: NotRequired[int]


class GraphDiagnostics(TypedDict):
    backend: str
    expected_relations: int
    stored_relations: int
    canonical_relations: int
    missing_relations: int
    outdated_relations: int
    extra_relations: int


class DerivedDiagnostics(TypedDict, total=False):
    """Drift per configured derived backend; empty when only built-in backends are configured."""

    outbox_pending: int
    last_sync_error: str
    backends: Mapping[str, Mapping[str, object]]
    error: Mapping[str, object]


class DerivedIndexes(TypedDict):
    full_text: FullTextDiagnostics
    vectors: VectorDiagnostics
    graph: GraphDiagnostics
    stale: bool
    next_actions: list[str]
    derived_backends: NotRequired[DerivedDiagnostics]


# --- repair ---------------------------------------------------------------------------------
class UnresolvedReference(TypedDict):
    kind: str
    object_id: str
    field: NotRequired[str]
    missing_id: object  # an evidence ref's source id, as stored


class RemovedRelation(TypedDict):
    id: str
    rel_type: str
    source_id: str
    target_id: str
    reason: str


class Repairs(TypedDict):
    stub_node_ids: list[str]
    removed_relations: list[RemovedRelation]
    stored_json: list[Mapping[str, object]]


class RepairCounts(TypedDict):
    derived_backends_out_of_line: int
    stub_nodes_created: int
    relations_removed: int
    unresolved_references: int
    stored_json_rewritten: int
    stored_json_unreadable: int


class RepairResult(MutationResult):
    repairs: Repairs
    unresolved_references: list[UnresolvedReference]
    derived_backends_repaired: Mapping[str, object]
    derived_indexes: DerivedIndexes
    counts: RepairCounts


class StoredJsonHealth(TypedDict):
    rows: int
    repairable: int
    sample: list[Mapping[str, object]]
    problem: str


# --- the lifecycle steps and their modes ----------------------------------------------------
class PromoteCounts(TypedDict):
    candidates_checked: int
    promoted: int


class PromoteStep(TypedDict):
    promoted_knowledge_ids: list[str]
    counts: PromoteCounts


class Claim(TypedDict):
    subject: object
    predicate: object
    value: object
    object: object


class DuplicateGroupView(TypedDict):
    canonical_knowledge_id: str
    duplicate_knowledge_ids: list[str]
    object_ids: list[str]
    kind: str
    claim: Claim
    scope_refs: list[str]
    statuses: dict[str, str]


class MergedGroup(DuplicateGroupView):
    superseded_knowledge_ids: list[str]
    evidence_refs_moved: int


class MergeCounts(TypedDict):
    groups: int
    superseded: int
    evidence_refs_moved: int


class MergeStep(TypedDict):
    groups: list[MergedGroup]
    counts: MergeCounts


class DecayCounts(TypedDict):
    expired: int
    stale: int


class DecayStep(TypedDict):
    expired_knowledge_ids: list[str]
    stale_knowledge_ids: list[str]
    counts: DecayCounts


class PromoteThresholds(TypedDict):
    min_confidence: float
    min_evidence: int


class CycleThresholds(PromoteThresholds):
    stale_after_days: int


class PromoteResult(MutationResult):
    promoted_knowledge_ids: list[str]
    counts: PromoteCounts
    thresholds: PromoteThresholds
    reference_time: str


class MergeDuplicatesResult(MutationResult):
    groups: list[MergedGroup]
    counts: MergeCounts


class DecayResult(MutationResult):
    expired_knowledge_ids: list[str]
    stale_knowledge_ids: list[str]
    counts: DecayCounts
    reference_time: str
    stale_after_days: int


class CycleSteps(TypedDict):
    promote_candidates: PromoteStep
    merge_duplicates: MergeStep
    decay_stale: DecayStep


class CycleCounts(PromoteCounts, MergeCounts, DecayCounts):
    """Every step's counts side by side (no two steps share a name)."""


class CycleResult(MutationResult):
    steps: CycleSteps
    counts: CycleCounts
    thresholds: CycleThresholds
    reference_time: str


# --- resolve_duplicates, archive_source, expire, merge_entities ------------------------------
class ResolveCounts(TypedDict):
    superseded: int
    updated: int
    contested: int
    evidence_refs_moved: int


class ResolveOutcome(TypedDict, total=False):
    """The fields one outcome adds: supersede the first two, keep_both the third, contest the last."""

    canonical_knowledge_id: str
    superseded_knowledge_ids: list[str]
    field_changes: dict[str, dict[str, Change]]
    contested_knowledge_ids: list[str]


class ResolveResult(MutationResult):
    outcome: str
    knowledge_ids: list[str]
    score: float
    reasons: list[str]
    canonical_knowledge_id: NotRequired[str]
    superseded_knowledge_ids: NotRequired[list[str]]
    field_changes: NotRequired[dict[str, dict[str, Change]]]
    contested_knowledge_ids: NotRequired[list[str]]
    counts: ResolveCounts


class ArchiveCounts(TypedDict):
    sources_archived: int
    stale: int
    partially_affected: int


class ArchiveSourceResult(MutationResult):
    source_id: str
    source_status: Change
    stale_knowledge_ids: list[str]
    partially_affected_knowledge_ids: list[str]
    reason: str
    counts: ArchiveCounts


class ExpiredItem(TypedDict):
    id: str
    object_type: str
    kind: str
    title: str
    status_was: str
    expires_at: object


class ExpireCounts(TypedDict):
    expired: int
    with_ttl: int


class ExpireResult(MutationResult):
    items: list[ExpiredItem]
    reference_time: str
    counts: ExpireCounts


class ClaimConflict(TypedDict):
    fact_id: str
    conflicts_with: str
    predicate: object


class MergeEntitiesCounts(TypedDict):
    facts_moved: int
    aliases_added: int
    conflicts: int


class MergeEntitiesResult(MutationResult):
    source_entity_id: str
    target_entity_id: str
    aliases_added: list[str]
    moved_fact_ids: list[str]
    conflicting_facts: list[ClaimConflict]
    counts: MergeEntitiesCounts


# --- read-only views and embed --------------------------------------------------------------
class StorageView(TypedDict):
    backend: str
    location: str
    schema_version: int


class StructureCounts(TypedDict):
    objects: int
    by_object_type: dict[str, int]
    by_status: dict[str, dict[str, int]]
    by_kind: dict[str, dict[str, int]]
    segments: int
    relations: int
    relations_by_derivation: dict[object, int]
    vectors: dict[str, int]


class EmbedderInUse(TypedDict):
    configured: str
    provider: str
    kept: NotRequired[KeptDefault]


class StructureResult(TypedDict):
    result_type: str
    namespace: str
    storage: StorageView
    counts: StructureCounts
    config: JsonObject
    last_patch_at: str | None
    semantic_backend: EmbedderInUse
    deferred_vectors: Mapping[str, object]
    derived_backends: NotRequired[JsonObject]


class AuditEventView(TypedDict):
    event_id: str
    patch_id: str
    object_id: str
    action: str
    created_at: str
    data: JsonObject


class AuditPatchView(TypedDict):
    patch_id: str
    tool: str
    mode: str
    created_at: str
    reason: str | None
    operations: int


class AuditCounts(TypedDict):
    events: int
    patches: int


class AuditResult(TypedDict):
    result_type: str
    object_id: str | None
    events: list[AuditEventView]
    patches: list[AuditPatchView]
    counts: AuditCounts
    next_cursor: str | None


class EmbedDrain(TypedDict, total=False):
    """What an applied embed did: the jobs requeued first, then the drain's totals (none in a dry run)."""

    requeued: int
    embedded: int
    jobs: int
    failed: int
    error: object  # the first failure, which stopped the drain


class EmbedResult(TypedDict):
    result_type: str
    apply: bool
    dry_run: bool
    status: str
    requeued: NotRequired[int]
    embedded: NotRequired[int]
    jobs: NotRequired[int]
    failed: NotRequired[int]
    error: NotRequired[object]
    queue: Mapping[str, object]


class Section(TypedDict, Generic[T]):
    """A graph-health finding: how many, the first ``max_items``, and whether that cut any."""

    count: int
    items: list[T]
    truncated: bool
