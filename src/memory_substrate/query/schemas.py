"""Input and option models of memory_query, per mode (options are mode-specific)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memory_substrate.models import OBJECT_TYPES
from memory_substrate.validation import Strict

ObjectType = Literal["source", "knowledge", "activity", "work_item", "node", "entity"]
Detail = Literal["compact", "full"]
Cursor = str | None  # opaque ``next_cursor`` of the previous page of the same request


class Filters(Strict):
    object_type: ObjectType | None = None
    object_types: list[ObjectType] | None = None
    kind: str | None = None
    kinds: list[str] | None = None
    status: str | None = None
    statuses: list[str] | None = None
    node_id: str | None = None
    node_ids: list[str] | None = None
    source_id: str | None = None
    source_ids: list[str] | None = None

    def merged(self) -> dict[str, list[str]]:
        """Singular and plural forms folded into one list per filter; empty filters dropped."""
        out: dict[str, list[str]] = {}
        for single, plural in (
            ("object_type", "object_types"),
            ("kind", "kinds"),
            ("status", "statuses"),
            ("node_id", "node_ids"),
            ("source_id", "source_ids"),
        ):
            values = list(getattr(self, plural) or [])
            if getattr(self, single):
                values.insert(0, getattr(self, single))
            if values:
                out[plural] = list(dict.fromkeys(values))
        return out


class SearchInput(Strict):
    query: str = Field(min_length=1, max_length=100_000)


class SearchOptions(Strict):
    max_items: int = Field(default=10, ge=1, le=200)
    filters: Filters = Field(default_factory=Filters)
    result_unit: Literal["object", "segment"] = "object"
    detail: Detail = "compact"
    cursor: Cursor = Field(default=None, max_length=200)


class IdInput(Strict):
    id: str = Field(min_length=1, max_length=300)


class PageOptions(Strict):
    max_items: int = Field(default=10, ge=1, le=500)
    include_segments: bool = False
    snippet_chars: int = Field(default=240, ge=20, le=20_000)
    detail: Detail = "compact"
    cursor: Cursor = Field(default=None, max_length=200)  # pages the segments of a source


class ExpandOptions(Strict):
    max_items: int = Field(default=6, ge=1, le=200)
    include_segments: bool = True
    snippet_chars: int = Field(default=160, ge=20, le=20_000)
    detail: Detail = "compact"
    cursor: Cursor = Field(default=None, max_length=200)  # pages the related objects


class RecentInput(Strict):
    pass


class RecentOptions(Strict):
    max_items: int = Field(default=10, ge=1, le=200)
    filters: Filters = Field(default_factory=Filters)
    detail: Detail = "compact"
    cursor: Cursor = Field(default=None, max_length=200)


class GraphOptions(Strict):
    max_items: int = Field(default=20, ge=1, le=500)
    depth: int = Field(default=1, ge=1, le=4)
    detail: Detail = "compact"


DEFAULT_CONTEXT_TYPES: tuple[ObjectType, ...] = ("knowledge", "activity", "work_item")


class ContextScope(Strict):
    object_types: list[ObjectType] = Field(default_factory=lambda: list(DEFAULT_CONTEXT_TYPES))
    scope_refs: list[str] = Field(default_factory=list)
    kinds: list[str] = Field(default_factory=list)


TaskClass = Literal["debug", "architecture", "compliance", "writing", "chat"]


class CompileSettings(Strict):
    """Compiler settings (spec 004) accepted in ``input_data`` or ``options``; unset means default."""

    model: str | None = Field(default=None, min_length=1, max_length=200)
    format: Literal["xml", "json"] | None = None
    budget_tokens: int | None = Field(default=None, ge=64, le=200_000)
    task_class: TaskClass | None = None


class ContextInput(CompileSettings):
    task: str = Field(min_length=1, max_length=100_000)
    scope: ContextScope = Field(default_factory=ContextScope)


class ContextOptions(CompileSettings):
    max_items: int = Field(default=8, ge=1, le=100)
    detail: Detail = "compact"
    # Candidate and contested knowledge are unverified: left out of the package unless asked for.
    include_unverified: bool = False
    # The structured directory of the package (spec 001's items and context_tiers) beside it.
    include_items: bool = False


assert set(OBJECT_TYPES) == set(ObjectType.__args__)  # type: ignore[attr-defined]

