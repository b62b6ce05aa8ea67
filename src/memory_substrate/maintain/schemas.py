"""Input and option models of memory_maintain, one pair per mode. Unknown fields fail."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import Field, StrictBool, field_validator, model_validator

from memory_substrate.validation import Strict

GraphBackend = Literal["file", "kuzu", "falkordb"]
# "lancedb" is the name the contract lists; "builtin" names this project's own vectors in the store.
SemanticBackend = Literal["lancedb", "builtin"]


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


class Empty(Strict):
    pass


class ReadOnlyOptions(Strict):
    pass


class ApplyOptions(Strict):
    """Options of every mutating mode: without ``apply=true`` nothing is written."""

    apply: StrictBool = False


# --- structural ------------------------------------------------------------------------
class AuditInput(Strict):
    object_id: str | None = Field(default=None, max_length=300)


class AuditOptions(Strict):
    max_items: int = Field(default=5, ge=1, le=1000)
    detail: Literal["compact", "full"] = "compact"  # compact: patch reasons cut to a snippet
    cursor: str | None = Field(default=None, max_length=200)


class ConfigureInput(Strict):
    graph_backend: GraphBackend | None = None
    semantic_backend: SemanticBackend | None = None
    # The namespace's context budget: what memory_query context compiles to by default.
    token_budget: int | None = Field(default=None, ge=64, le=200_000)


class ReindexOptions(ApplyOptions):
    graph_backend: GraphBackend | None = None
    semantic_backend: SemanticBackend | None = None
    # Re-embed every object and segment even when its vector already comes from the current model.
    reembed: StrictBool = False


# --- lifecycle -------------------------------------------------------------------------
class TimeInput(Strict):
    reference_time: datetime | None = None

    @field_validator("reference_time")
    @classmethod
    def _tz(cls, value: datetime | None) -> datetime | None:
        return _aware(value)


class PromoteInput(TimeInput):
    min_confidence: float = Field(default=0.75, ge=0.0, le=1.0)
    min_evidence: int = Field(default=1, ge=0, le=1000)


class DecayInput(TimeInput):
    stale_after_days: int = Field(default=30, ge=0, le=36_500)


class CycleInput(PromoteInput):
    stale_after_days: int = Field(default=30, ge=0, le=36_500)


class ReportInput(CycleInput):
    pass


class ReportOptions(Strict):
    max_items: int = Field(default=10, ge=1, le=1000)
    detail: Literal["compact", "full"] = "compact"  # compact: sections cut to the response budget
    # Concept candidates are mined from the most recently updated active sources.
    concept_sources: int = Field(default=20, ge=0, le=500)


class ArchiveSourceInput(Strict):
    source_id: str = Field(min_length=1, max_length=300)
    reason: str | None = Field(default=None, min_length=1, max_length=4000)


class DuplicateUpdate(Strict):
    knowledge_id: str = Field(min_length=1, max_length=300)
    scope_refs: list[str] | None = Field(default=None, min_length=1, max_length=50)
    title: str | None = Field(default=None, min_length=1, max_length=500)
    summary: str | None = Field(default=None, min_length=1, max_length=20_000)

    @field_validator("scope_refs")
    @classmethod
    def _scopes(cls, refs: list[str] | None) -> list[str] | None:
        if refs is None:
            return None
        for ref in refs:
            if not ref.startswith("scope:") or len(ref) < 7:
                raise ValueError(f"scope refs look like 'scope:<name>', got {ref!r}")
        return list(dict.fromkeys(refs))

    @model_validator(mode="after")
    def _something(self) -> DuplicateUpdate:
        if self.scope_refs is None and self.title is None and self.summary is None:
            raise ValueError("an update changes at least one of scope_refs, title, summary")
        return self


class ResolveDuplicatesInput(Strict):
    outcome: Literal["supersede", "keep_both", "contest"]
    knowledge_ids: list[str] = Field(min_length=2, max_length=2)
    canonical_knowledge_id: str | None = Field(default=None, min_length=1, max_length=300)
    # Whitespace is stripped first, so a blank reason is rejected like an empty one.
    reason: str = Field(min_length=1, max_length=4000)
    updates: list[DuplicateUpdate] = Field(default_factory=list, max_length=2)

    @model_validator(mode="after")
    def _consistent(self) -> ResolveDuplicatesInput:
        if len(set(self.knowledge_ids)) != len(self.knowledge_ids):
            raise ValueError("knowledge_ids must name two different knowledge items")
        if self.outcome == "supersede":
            if self.canonical_knowledge_id is None:
                raise ValueError("outcome 'supersede' needs canonical_knowledge_id")
            if self.canonical_knowledge_id not in self.knowledge_ids:
                raise ValueError("canonical_knowledge_id must be one of knowledge_ids")
        elif self.canonical_knowledge_id is not None:
            raise ValueError("canonical_knowledge_id is only used with outcome 'supersede'")
        if self.updates and self.outcome != "keep_both":
            raise ValueError("updates are only used with outcome 'keep_both'")
        seen: set[str] = set()
        for update in self.updates:
            if update.knowledge_id not in self.knowledge_ids:
                raise ValueError(f"update for {update.knowledge_id} is not one of knowledge_ids")
            if update.knowledge_id in seen:
                raise ValueError(f"two updates for {update.knowledge_id}")
            seen.add(update.knowledge_id)
        return self


# --- knowledge graph ---------------------------------------------------------------------
class ExtractInput(Strict):
    episode_ids: list[str] | None = Field(default=None, max_length=500)
    limit: int = Field(default=20, ge=1, le=1000)


class EmbedInput(Strict):
    # Segments to embed in this call (whole captures, so a little more); None: all that wait.
    limit: int | None = Field(default=None, ge=1, le=10_000_000)
    retry_failed: StrictBool = False  # put jobs parked after failing back in the queue first


class ExtractOptions(ApplyOptions):
    # "llm": the OpenAI-compatible model of MEMORY_SUBSTRATE_LLM_*; "sampling": the connected MCP client.
    extractor: Literal["llm", "sampling"] = "llm"
