"""The shapes of what the graph toolset answers: nodes, edges, triplets, stats and health.

Each is a plain dict on the wire (``ok`` wraps it in the envelope); these types let mypy check
every key the views in ``schemas.py`` and the tools build. A value copied from an object's
free-form ``metadata`` or ``payload`` keeps the type ``object``: the view passes it on unread.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memory_substrate.json_types import JsonObject


class TripletRef(TypedDict):
    """A fact's triplet fields as stored in its payload (ids of its entities, or a literal value)."""

    subject: object
    predicate: object
    object: object
    value: object


class EdgeView(TypedDict):
    id: str
    from_id: str
    to_id: str
    relation_type: str
    metadata: object
    derivation: object


class NodeView(TypedDict):
    """A Fact or an Entity. The keys after ``version`` belong to one node type (a fact's
    ``title`` and ``triplet``, an entity's ``name``, ``type`` and ``aliases``) or are added by the
    tool that lists the node (``depth``, ``score``, ``similarity``, ``relations``)."""

    id: str
    node_type: str
    owner_id: str
    text: str
    metadata: object
    created_at: int | None
    updated_at: int | None
    last_dedup_at: object
    ttl_days: object
    expires_at: int | None
    source: object
    status: str
    lifecycle_status: str
    kind: str
    version: int
    title: NotRequired[str]
    triplet: NotRequired[TripletRef]
    name: NotRequired[str]
    type: NotRequired[object]
    aliases: NotRequired[object]
    depth: NotRequired[int]
    score: NotRequired[float]
    similarity: NotRequired[float | None]
    relations: NotRequired[list[EdgeView]]


class NodeRef(TypedDict):
    """A node on a trace that could not be read (only its id is known)."""

    id: str


class TracePath(TypedDict):
    length: int
    nodes: list[NodeView | NodeRef]
    edges: list[EdgeView]


class TripletView(TypedDict):
    id: str
    owner_id: str
    subject: object
    subject_id: object
    predicate: object
    object_value: object
    object_id: object
    status: str
    lifecycle_status: str
    valid_from: int | None
    valid_until: int | None
    metadata: object
    fact_id: object
    created_at: int | None
    supersedes: NotRequired[object]
    superseded_by: NotRequired[object]
    blocked_by: NotRequired[object]
    superseded: NotRequired[list[str]]


class HistoryEntry(TypedDict):
    """One version of a node in ``get_node_change_history``."""

    version: object
    action: str
    changed_at: int | None
    patch_id: str
    event_id: str
    changes: JsonObject
    previous: NotRequired[NodeView]


class GraphAttributes(TypedDict):
    """What a graph-toolset write keeps under ``metadata.graph`` of the object."""

    node_type: str
    source: str
    metadata: JsonObject
    ttl_days: float | None
    type_label: NotRequired[object]


class SearchBody(TypedDict):
    """What ``search`` answers (and caches) besides the envelope."""

    results: list[NodeView]
    facts: list[NodeView]
    entities: list[NodeView]
    count: int
    semantic: bool


class GraphStats(TypedDict):
    owner_id: str
    facts: int
    entities: int
    facts_by_status: dict[str, int]
    entities_by_status: dict[str, int]
    relations: int
    relations_by_type: dict[str, int]
    expired_hidden: int
    with_ttl: int
    vectors: dict[str, int]


class HealthDetails(TypedDict):
    """Why each component of ``health_check`` is healthy or not: a message, or what it reported
    (the embedder's model and dimensions, the semantic status's reason, the vector counts)."""

    store: object
    embeddings: object
    vector_index: dict[str, int] | str
    falkordb: str
    config: NotRequired[str]


class CacheStats(TypedDict):
    enabled: bool
    size: int
    maxsize: int
    hits: int
    misses: int


class TTLCacheStats(CacheStats):
    ttl: float


class CacheHealth(TypedDict):
    embeddings: CacheStats
    search: TTLCacheStats
