"""The one extraction schema (entities, facts, procedures) that every extractor fills: the calling
agent (memory_remember mode ``extraction``), an OpenAI-compatible model, or MCP sampling."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from memory_substrate.governance import Governance
from memory_substrate.json_types import JsonObject
from memory_substrate.taxonomy import MAX_ENTITIES_PER_EPISODE
from memory_substrate.validation import Strict

EntityType = Literal[
    "person",
    "organization",
    "project",
    "service",
    "technology",
    "pattern",
    "environment",
    "document",
    "metric",
    "decision",
]
ProcedureKind = Literal["workflow", "decision_rule", "best_practice", "convention", "troubleshooting"]
Name = Field(min_length=1, max_length=200)
Literal_ = str | int | float | bool


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


class ExtractedEntity(Strict):
    name: str = Name
    type: EntityType
    aliases: list[str] = Field(default_factory=list, max_length=20)
    # Which of the aliases are the writer's own knowledge ("SK" for Semantic Kernel) rather than
    # words of the episode: stored and matched like the others, and marked as the model's.
    model_aliases: list[str] = Field(default_factory=list, max_length=20)
    summary: str | None = Field(default=None, max_length=2000)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _no_nul(v)

    @field_validator("aliases", "model_aliases")
    @classmethod
    def _aliases(cls, v: list[str]) -> list[str]:
        out = []
        for a in v:
            a = _no_nul(a.strip())
            if not a or len(a) > 200:
                raise ValueError("each alias is 1..200 characters")
            out.append(a)
        return list(dict.fromkeys(out))


class ExtractedFact(Strict):
    subject: str = Field(
        min_length=1,
        max_length=200,
        description="An entity of this extraction (name or alias) or an existing ent: id",
    )
    predicate: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_ \-]{0,63}$")
    object: str | None = Field(default=None, max_length=200, description="An entity (name, alias or ent: id)")
    value: Literal_ | None = Field(
        default=None, description="A literal object, when the object is not an entity"
    )
    valid_from: datetime | None = None
    segment_ids: list[str] = Field(default_factory=list, max_length=50)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    salience: float | None = Field(default=None, ge=0.0, le=1.0)
    # Set by graph/grounding.py when the model's citations said nothing and the rule chose them.
    _cited_by_rule: bool = PrivateAttr(default=False)

    @model_validator(mode="after")
    def _one_object(self) -> ExtractedFact:
        if (self.object is None) == (self.value is None):
            raise ValueError("a fact has exactly one of object (an entity) or value (a literal)")
        if isinstance(self.value, str) and not self.value.strip():
            raise ValueError("value must not be empty")
        return self


class ExtractedProcedure(Strict):
    kind: ProcedureKind
    title: str = Field(min_length=1, max_length=300)
    text: str = Field(min_length=1, max_length=5000)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    segment_ids: list[str] = Field(default_factory=list, max_length=50)


class Extraction(Strict):
    """What an extractor returns for one episode."""

    entities: list[ExtractedEntity] = Field(default_factory=list, max_length=MAX_ENTITIES_PER_EPISODE)
    facts: list[ExtractedFact] = Field(default_factory=list, max_length=100)
    procedures: list[ExtractedProcedure] = Field(default_factory=list, max_length=20)


class ExtractionInput(Extraction, Governance):
    """memory_remember mode ``extraction``: the calling agent supplies the extraction itself."""

    episode_id: str = Field(min_length=1, max_length=200)


def extraction_json_schema() -> JsonObject:
    """The JSON Schema handed to models for constrained output (no episode or governance fields)."""
    return Extraction.model_json_schema()
