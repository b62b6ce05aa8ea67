"""Input and option models of the portable-contract tool modes (memory_remember ``graph_snapshot``,
memory_query ``package``). Kept apart from the validators so that loading the tools stays cheap."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, field_validator

from memory_substrate.governance import check_scope_refs
from memory_substrate.json_types import JsonObject
from memory_substrate.validation import Strict

NAMESPACE_GRAPH = "memory://namespace"


class GraphSnapshotInput(Strict):
    """input_data of memory_remember ``graph_snapshot``."""

    snapshot: JsonObject  # a graph.v1 document, checked by its JSON Schema on import
    # Scopes for nodes whose tags carry none ("scope:<name>" tags are kept as scopes).
    scope_refs: list[str] = Field(default_factory=lambda: ["scope:imported"], min_length=1, max_length=50)
    reason: str | None = Field(default=None, min_length=1, max_length=4000)

    @field_validator("scope_refs")
    @classmethod
    def _scopes(cls, refs: list[str]) -> list[str]:
        return check_scope_refs(refs)


class PackageInput(Strict):
    """input_data of memory_query ``package``: a selection.v1 document whose ``graph`` is
    ``memory://namespace`` (this namespace; the default) or an inline graph.v1 document."""

    selection: JsonObject  # checked by the selection.v1 JSON Schema when packed


class PackageOptions(Strict):
    max_items: int | None = Field(default=None, ge=1, le=10_000)
    max_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    # Add the history (audit events) of the selected objects as event items.
    include_history: StrictBool = False
    # compact: items keep only the attributes an agent reads (type, kind, claim payload,
    # evidence, locator); full: every attribute of the exported node (metadata, repo maps...).
    detail: Literal["compact", "full"] = "compact"
