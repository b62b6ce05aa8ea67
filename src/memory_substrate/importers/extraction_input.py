"""The extraction groups importers write: each is a ``memory_remember`` ``extraction`` input
(``graph.schemas.ExtractionInput`` validates it) that ``bulk.apply_extractions`` applies."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class ExtractedEntity(TypedDict):
    """An entity by name and type; a link or tag target is named only (no summary, no aliases)."""

    name: str
    type: str
    summary: NotRequired[str]
    aliases: NotRequired[list[str]]


class ExtractedFact(TypedDict):
    """A fact citing its segments: ``object`` names an entity, ``value`` is a literal."""

    subject: str
    predicate: str
    object: NotRequired[str]
    value: NotRequired[str]
    segment_ids: list[str]


class ExtractionGroup(TypedDict):
    episode_id: str
    reason: str
    memory_source: str
    scope_refs: list[str]
    entities: list[ExtractedEntity]
    facts: list[ExtractedFact]
