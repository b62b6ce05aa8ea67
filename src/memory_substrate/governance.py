"""The governance fields every durable write carries, shared by memory_remember, the
knowledge graph's extraction input and the portable contracts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from memory_substrate.validation import Strict

MemorySource = Literal["user_declared", "human_curated", "agent_inferred", "system_generated", "imported"]


def check_scope_refs(refs: list[str]) -> list[str]:
    """Scope refs look like ``scope:<name>``; duplicates are dropped, order kept."""
    for ref in refs:
        if not ref.startswith("scope:") or len(ref) < 7:
            raise ValueError(f"scope refs look like 'scope:<name>', got {ref!r}")
    return list(dict.fromkeys(refs))


class Governance(Strict):
    """The governance fields every durable write carries."""

    reason: str = Field(min_length=1, max_length=4000)
    memory_source: MemorySource
    scope_refs: list[str] = Field(min_length=1, max_length=50)

    @field_validator("scope_refs")
    @classmethod
    def _scopes(cls, refs: list[str]) -> list[str]:
        return check_scope_refs(refs)
