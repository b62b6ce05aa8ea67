"""memory_query context: a work-ready, budgeted package for a task (spec 001 tiers, compiled by
the spec-004 context compiler in ``memory_substrate.compiler``).

The answer states the package once. By default (``detail: "compact"``) the package text in
``content`` *is* the answer, with what an agent needs around it (format, size, budget, trace id,
task class); the structured ``items`` and ``context_tiers`` (spec 001's directory of the same
memory) come only with ``include_items: true`` or ``detail: "full"``; ``memory_query trace``
with the ``trace_id`` explains what was chosen and why. Over MCP the package also travels as a
text block of its own, unescaped (wire.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_substrate.query.schemas import ContextInput, ContextOptions
from memory_substrate.runtime import Runtime

ContextCompiler = Callable[[Runtime, ContextInput, ContextOptions], dict[str, Any]]

BUDGET_KEYS = ("budget_tokens", "budget_source", "package_entries", "candidate_items")


def build_context(compile_context: ContextCompiler, rt: Runtime, data: ContextInput, opts: ContextOptions) -> dict[str, Any]:
    """The compiler's package (``compile_context``, handed in by ``app.py``: the compiler builds on
    this package's search engine, so query does not import it), answered once when compact."""
    result = compile_context(rt, data, opts)
    if opts.detail == "full" or opts.include_items:
        return result
    return answer_once(result)


def answer_once(result: dict[str, Any]) -> dict[str, Any]:
    """The compact context answer: the package and the facts about it, nothing said twice."""
    budget = result.get("context_budget") or {}
    cls = result.get("classification") or {}
    semantic = result.get("semantic_backend") or {}
    sanitizer = result.get("query_sanitizer") or {}
    out: dict[str, Any] = {
        "result_type": result["result_type"],
        "task": result["task"],
        "format": result.get("format"),
        "token_count": result.get("token_count"),
        "context_budget": {k: budget[k] for k in BUDGET_KEYS if k in budget},
        "classification": {k: cls[k] for k in ("primary", "method", "dual_profile") if k in cls},
        "semantic_backend": {k: semantic[k] for k in ("enabled", "provider", "reason") if k in semantic},
        "trace_id": result.get("trace_id"),
        "content": result.get("content"),
    }
    if sanitizer.get("was_sanitized"):
        out["query_sanitizer"] = sanitizer
    return out
