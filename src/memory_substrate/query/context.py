"""memory_query context: a work-ready, budgeted package for a task (spec 001 tiers, compiled by
the spec-004 context compiler in ``memory_substrate.compiler``)."""

from __future__ import annotations

from typing import Any

from memory_substrate.query.schemas import ContextInput, ContextOptions
from memory_substrate.runtime import Runtime


def build_context(rt: Runtime, data: ContextInput, opts: ContextOptions) -> dict[str, Any]:
    from memory_substrate.compiler import compile_context

    return compile_context(rt, data, opts)
