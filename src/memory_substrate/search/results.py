"""The typed result of a search: what the engine found, before any response is shaped from it.

``SearchEngine.find`` answers a ``SearchResult``; ``memory_query search`` shapes its tool response
from it (``search/engine.py``), and the context compiler consumes it directly (``compiler/retrieve.py``)
instead of reading ids and scores back out of a response dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_substrate.models import MemoryObject, Segment
from memory_substrate.retrieval.types import RankedSegment
from memory_substrate.search.fusion import Fused
from memory_substrate.search.sanitize import Sanitized


@dataclass(frozen=True)
class SearchPlan:
    """A query read once: its cleaned text, terms, expansions and what it names."""

    clean: Sanitized  # the question, recovered from a pasted prompt when needed (sanitize.py)
    terms: list[str]  # normalised query terms (lexical matching)
    expansions: list[str]  # extra lexical terms (synonyms, base forms)
    inferred_types: list[str]  # object types the query's words suggest: a boost, never a filter
    phrase: str  # the normalised phrase (title/summary phrase boost)
    ids: list[str]  # object ids stated in the query
    # forms of the terms that full-text rows written with the older fold hold (``text.older_forms``)
    older_forms: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ChunkMatch:
    """A segment of a matched source that one of the segment streams found."""

    segment: Segment
    lexical_score: float | None
    semantic_score: float | None


@dataclass(frozen=True)
class ObjectMatch:
    """One object of an object search: its record, its final score and how the streams found it."""

    obj: MemoryObject
    score: float  # the fused (RRF) score after the status and inferred-type adjustments
    fused: Fused  # the streams that found it: ranks and stream scores
    chunks: list[ChunkMatch] = field(default_factory=list)

    def stream_score(self, stream: str) -> float | None:
        return self.fused.scores.get(stream)


@dataclass(frozen=True)
class SegmentMatch:
    """One segment of a segment search: its complete record and its ranking."""

    segment: Segment
    ranked: RankedSegment


@dataclass(frozen=True)
class SearchResult:
    plan: SearchPlan
    unit: str  # "object" or "segment"
    filters: dict[str, list[str]]
    objects: list[ObjectMatch] = field(default_factory=list)  # unit "object", best first
    segments: list[SegmentMatch] = field(default_factory=list)  # unit "segment", best first
