"""What the contract tools build: a ContextPackage (``memory-substrate.context-package.v1``),
the report of a graph.v1 export, and the plan of a profile.

Plain dicts at run time, so serialising one gives the bytes it always gave; the key order of
each is the order its builder writes them in.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memory_substrate.contracts.documents import GraphEdge
from memory_substrate.json_types import JsonObject

# --- ContextPackage ---------------------------------------------------------------------------


class ItemContent(TypedDict):
    """A package item before its token estimate: a node's or an event's fields an agent reads."""

    id: str
    item_type: str  # node | event
    kind: str
    title: str
    text: str
    status: NotRequired[str]
    created_at: NotRequired[str]
    valid_from: NotRequired[str]
    valid_until: NotRequired[str]
    confidence: NotRequired[float]
    tags: NotRequired[list[str]]
    provenance: NotRequired[JsonObject]
    attributes: NotRequired[JsonObject]
    at: NotRequired[str]
    refs: NotRequired[list[str]]
    actor: NotRequired[str]
    data: NotRequired[JsonObject]


class PackageItem(ItemContent):
    tokens: int


class OmittedEntry(TypedDict):
    id: str
    item_type: str  # node | event | edge
    reason: str  # max_items | max_tokens | endpoint_not_packed
    tokens: NotRequired[int]


class PackageEdge(GraphEdge):
    origin: str  # selected | implied


# "from" is a keyword, hence the functional form.
PackageLimits = TypedDict("PackageLimits", {"max_items": int | None, "max_tokens": int | None, "from": str})


class PackageCounts(TypedDict):
    items: int
    node_items: int
    event_items: int
    edges: int
    omitted: int


class PackageMetadata(TypedDict):
    edges: list[PackageEdge]
    omitted: list[OmittedEntry]
    limits: PackageLimits
    counts: PackageCounts


class TokenEstimate(TypedDict):
    total: int
    method: str


class DocumentRef(TypedDict):
    """Which document a package was made from, and the hash of its content."""

    id: str | None
    ref: str | None
    schema_version: str | None
    sha256: str


class PackageProvenance(TypedDict):
    generator: str
    selection: DocumentRef | None
    graph: DocumentRef | None
    profile: DocumentRef | None


class PackageContent(TypedDict):
    """A package without its id, which is the hash of this content."""

    schema_version: str
    title: str
    items: list[PackageItem]
    metadata: PackageMetadata
    token_estimate: TokenEstimate
    provenance: PackageProvenance
    purpose: NotRequired[str]


class ContextPackage(PackageContent):
    id: str


# --- graph.v1 export --------------------------------------------------------------------------


class SnapshotCounts(TypedDict):
    nodes: int
    edges: int
    events: int


class ApproximatedKind(TypedDict):
    """Objects of one type and kind that graph.v1 has no exact node kind for."""

    object_type: str
    kind: str
    node_kind: str
    count: int


class SnapshotReport(TypedDict):
    namespace: str
    snapshot_id: str
    counts: SnapshotCounts
    approximated: list[ApproximatedKind]
    left_out: dict[str, int]
    content_sha256: str


# --- profile plan -----------------------------------------------------------------------------


class Provision(TypedDict):
    """What this runtime provides for one memory kind."""

    node_kinds: list[str]
    object_types: list[str]
    write: list[str]
    read: list[str]
    notes: str


class PlannedKind(Provision):
    memory_kind: str
    declared_store: str | None
    store: str


class PlannedProfile(TypedDict):
    id: str
    title: str | None
    intent: str | None


class PlannedActivation(TypedDict):
    max_items: int | None
    max_tokens: int | None
    applied_by: str


class ProfilePlan(TypedDict):
    contract: str
    valid: bool
    diagnostics: list[JsonObject]
    launches: list[str]
    kinds: list[PlannedKind]
    profile: NotRequired[PlannedProfile]
    activation: NotRequired[PlannedActivation]
