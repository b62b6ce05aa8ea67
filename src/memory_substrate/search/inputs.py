"""Inputs of a search: the query, its options and the filters every read shares."""

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


assert set(OBJECT_TYPES) == set(ObjectType.__args__)  # type: ignore[attr-defined]
