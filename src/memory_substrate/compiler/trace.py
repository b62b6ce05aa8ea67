"""The per-compile audit trace: what was asked, how it was classified, which profiles
ran, every candidate found with its four scores (selected) or its rejection reason, the compiled
size and format, and the latency of each stage. Written as a ``compile`` trace row in its own
short write session, after the compile's read snapshot has closed, and read back with ``memory_query`` mode ``trace``."""

from __future__ import annotations

from collections import Counter

from memory_substrate import traces
from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.results import ClassificationView, CompileTrace, ProfileEntry
from memory_substrate.json_types import JsonObject
from memory_substrate.redaction import redact_text
from memory_substrate.runtime import Runtime

MAX_REJECTED = 200  # the rest are counted by reason, not listed


def build(
    *,
    task: str,
    model: str | None,
    classification: ClassificationView,
    profiles: list[ProfileEntry],
    found: int,
    selected: list[Candidate],
    rejected: list[Candidate],
    token_count: int,
    budget_tokens: int,
    budget_source: str,
    fmt: str,
    latency_ms: dict[str, float],
    extra: JsonObject,
) -> JsonObject:
    """The trace: what the compile decided, then ``extra`` (the strategies' notes) after it."""
    reasons = Counter((c.rejected or "").split(" (")[0] for c in rejected)
    trace: CompileTrace = {
        "task": redact_text(task)[:2000],  # redacted whole: a cut could leave a secret's head unrecognised
        "model": model,
        "classification": classification,
        "profiles": profiles,
        "candidates": {
            "found": found,
            "selected_count": len(selected),
            "rejected_count": len(rejected),
            "rejected_by_reason": dict(reasons.most_common()),
            "selected": [c.trace_entry() for c in selected],
            "rejected": [c.trace_entry() for c in rejected[:MAX_REJECTED]],
        },
        "token_count": token_count,
        "budget_tokens": budget_tokens,
        "budget_source": budget_source,
        "format": fmt,
        "latency_ms": {k: round(v, 2) for k, v in latency_ms.items()},
    }
    return {**trace, **extra}


def record(rt: Runtime, data: JsonObject) -> str:
    """The trace's id; the row is written in its own write transaction once the compile's read
    snapshot has closed (``Runtime.after_snapshot``), never inside the request's reads."""
    trace = traces.new_trace("compile", None, data)

    def write() -> None:
        with rt.write("memory_query", "context", None, embed=False) as (session, _patch):
            session.record_trace(trace)

    rt.after_snapshot(write)
    return trace.id
