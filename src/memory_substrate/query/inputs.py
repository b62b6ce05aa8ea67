"""Input and option models of the memory_query modes that read one object or a page."""

from __future__ import annotations

from pydantic import Field

from memory_substrate.search.inputs import Cursor, Detail, Filters
from memory_substrate.validation import Strict


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
