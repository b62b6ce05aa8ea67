"""The shapes of the portable contract documents (graph, selection, profile) once their JSON
Schema has passed them.

A document arrives as caller JSON (``JsonObject``); ``validate`` checks it against the shipped
schema, and only then does the code read it as one of these. Optional keys of a schema are
``NotRequired`` here; free-form parts (``attributes``, ``provenance``, ``data``, ``metadata``)
stay ``JsonObject``.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memory_substrate.json_types import JsonObject


class GraphNode(TypedDict):
    id: str
    kind: str
    title: str
    text: NotRequired[str]
    status: NotRequired[str]
    tags: NotRequired[list[str]]
    created_at: NotRequired[str]
    valid_from: NotRequired[str]
    valid_until: NotRequired[str]
    confidence: NotRequired[float]
    provenance: NotRequired[JsonObject]
    attributes: NotRequired[JsonObject]


class GraphEdge(TypedDict):
    id: str
    kind: str
    source: str
    target: str
    weight: NotRequired[float]
    attributes: NotRequired[JsonObject]


class GraphEvent(TypedDict):
    id: str
    kind: str
    at: str
    refs: list[str]
    actor: NotRequired[str]
    text: NotRequired[str]
    data: NotRequired[JsonObject]


class GraphDocument(TypedDict):
    """``markitect.memory.graph.v1``."""

    schema_version: str
    id: str
    title: NotRequired[str]
    description: NotRequired[str]
    nodes: list[GraphNode]
    edges: NotRequired[list[GraphEdge]]
    events: NotRequired[list[GraphEvent]]
    metadata: NotRequired[JsonObject]


class SelectionDocument(TypedDict):
    """``markitect.memory.selection.v1``: ``graph`` and ``profile`` are a path or the document inline."""

    schema_version: str
    id: str
    title: NotRequired[str]
    purpose: NotRequired[str]
    graph: str | JsonObject
    profile: NotRequired[str | JsonObject]
    nodes: list[str]
    edges: NotRequired[list[str]]
    events: NotRequired[list[str]]
    include_implied_edges: NotRequired[bool]
    metadata: NotRequired[JsonObject]


class ProfileActivation(TypedDict, total=False):
    max_items: int
    max_tokens: int


class ProfileDocument(TypedDict):
    """``markitect.memory.profile.v1``."""

    schema_version: str
    id: str
    title: NotRequired[str]
    intent: NotRequired[str]
    memory_kinds: list[str]
    stores: NotRequired[dict[str, str]]
    activation: NotRequired[ProfileActivation]
    metadata: NotRequired[JsonObject]
