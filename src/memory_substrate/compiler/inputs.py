"""Input and option models of memory_query context: the task, its scope and the compile settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memory_substrate.search.inputs import Detail, ObjectType
from memory_substrate.validation import Strict

DEFAULT_CONTEXT_TYPES: tuple[ObjectType, ...] = ("knowledge", "activity", "work_item")


class ContextScope(Strict):
    object_types: list[ObjectType] = Field(default_factory=lambda: list(DEFAULT_CONTEXT_TYPES))
    scope_refs: list[str] = Field(default_factory=list)
    kinds: list[str] = Field(default_factory=list)


TaskClass = Literal["debug", "architecture", "compliance", "writing", "chat"]


class CompileSettings(Strict):
    """Compiler settings accepted in ``input_data`` or ``options``; unset means default."""

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
    # The structured directory of the package (its items and context_tiers) beside it.
    include_items: bool = False
