"""The shapes importers return and read: an import's report, an export's counts, and each
extraction group's outcome as ``bulk.apply_extractions`` gives it back."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memory_substrate.json_types import JsonObject
from memory_substrate.remember.results import ExtractionEntities


class ImportNotes(TypedDict, total=False):
    """What an importer adds to its report beside the counts (the MCP memory importer's mappings)."""

    predicate_mapping: dict[str, str]  # relationType -> the canonical predicate it was mapped onto
    type_mapping: dict[str, str]  # entityType -> our entity type ("... (no match)" for the fallback)


class ImportResult(TypedDict):
    result_type: str
    format: str
    path: str
    status: str
    patches: int
    counts: dict[str, int]
    skipped_count: int
    skipped: list[JsonObject]  # each {"reason": ..., and where: line, path, name, ...}
    predicate_mapping: NotRequired[dict[str, str]]
    type_mapping: NotRequired[dict[str, str]]


class ExportCounts(TypedDict):
    entities: int
    relations: int
    observations: int
    merged: int
    merged_names: NotRequired[list[str]]


class AppliedGroup(TypedDict):
    """One applied extraction group: its summary, as ``memory_remember`` answers it, and its patch."""

    status: str
    episode_id: str
    trace_id: str
    entities: ExtractionEntities
    facts: dict[str, int]  # outcome (created, reinforced, contested, ...) -> how many facts
    fact_ids: list[str]
    superseded_fact_ids: list[str]
    custom_predicates: list[str]
    procedures: dict[str, list[str]]
    patch_id: str
