"""A candidate of the context package: one fact, piece of knowledge, procedure or captured turn,
with where it came from and (once ranked) its four scores or the reason it was left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from memory_substrate.compiler.results import CandidateTrace
from memory_substrate.models import MemoryObject, Segment
from memory_substrate.util import parse_time

IMPORT_STAMP = timedelta(hours=1)


@dataclass
class Candidate:
    key: str  # object id, or "source_id#segment_id" for a captured turn
    memory_type: str  # episodic | semantic | procedural
    strategy: str  # graph | episode_recall | fact_lookup | procedure_assist (the provenance)
    similarity: float  # 0..1, the strategy's own match strength
    profile: str  # the task class whose profile retrieved it
    obj: MemoryObject | None = None
    segment: Segment | None = None
    strategies: list[str] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    rejected: str | None = None
    tokens: int = 0
    # When what it describes was last seen, where that is not its own write time: a procedure's
    # latest episode (retrieve.py), so a procedure extracted today from March chats is as old as they are.
    seen_at: str | None = None
    # A turn that is the evidence of superseded knowledge: what replaced the claim, as the package
    # shows it after the turn ('superseded by know:c74d41 "Orders database runs PostgreSQL 17"').
    superseded_mark: str | None = None

    @property
    def kind(self) -> str:
        if self.segment is not None:
            return "turn"
        assert self.obj is not None
        return self.obj.kind if self.obj.object_type == "knowledge" else self.obj.object_type

    @property
    def status(self) -> str:
        return self.obj.status if self.obj is not None else "captured"

    @property
    def occurred_at(self) -> str | None:
        """When it happened, if that is known: a turn's message time (else when its conversation
        was captured), a fact's valid_from, else when it was written, unless it was imported.
        The time a file, a code chunk or an imported fact was read in is not when anything
        happened: giving those full recency let a fresh import outrank every older conversation
        (None scores recency 0, like anything older than 90 days)."""
        if self.segment is not None:
            meta = self.segment.metadata
            if meta.get("created_at"):
                return str(meta["created_at"])
            return (self.segment.created_at or None) if meta.get("role") or meta.get("name") else None
        obj = self.obj
        assert obj is not None
        if self.seen_at:
            return self.seen_at
        if obj.memory_source == "imported":
            # An import stamps what has no time of its own with the capture's time: only a
            # valid_from from before the import is an event time.
            if (
                obj.valid_from
                and obj.created_at
                and parse_time(obj.valid_from) < parse_time(obj.created_at) - IMPORT_STAMP
            ):
                return obj.valid_from
            return None
        return obj.valid_from or obj.updated_at or obj.created_at or None

    def trace_entry(self) -> CandidateTrace:
        entry: CandidateTrace = {
            "id": self.key,
            "kind": self.kind,
            "memory_type": self.memory_type,
            "strategies": self.strategies or [self.strategy],
            "profile": self.profile,
            "status": self.status,
            "similarity": round(self.similarity, 4),
        }
        if self.scores:
            entry["scores"] = {k: round(v, 4) for k, v in self.scores.items()}
            entry["score"] = round(self.score, 4)
        if self.rejected:
            entry["reason"] = self.rejected
        if self.tokens:
            entry["tokens"] = self.tokens
        return entry
