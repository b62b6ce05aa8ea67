"""The modes of memory_query, declared once (``validation.Mode``): what ``QueryService`` dispatches
on, what the MCP server lists and docs/modes.md shows."""

from __future__ import annotations

from memory_substrate.compiler.inputs import ContextInput, ContextOptions
from memory_substrate.contracts.inputs import PackageInput, PackageOptions
from memory_substrate.query import graph_modes
from memory_substrate.query.inputs import (
    ExpandOptions,
    GraphOptions,
    IdInput,
    PageOptions,
    RecentInput,
    RecentOptions,
)
from memory_substrate.search.inputs import SearchInput, SearchOptions
from memory_substrate.validation import Mode

TOOL = "memory_query"


def _read(name: str, input_model: type, options_model: type, help: str) -> Mode:
    return Mode(TOOL, name, input_model, options_model, f"_{name}", help, writes=False)


MODES_DECLARED: tuple[Mode, ...] = (
    _read(
        "context",
        ContextInput,
        ContextOptions,
        "{task, scope, model, format, budget_tokens, task_class} -> content, a budgeted package",
    ),
    _read("expand", IdInput, ExpandOptions, "an object with its relations and evidence"),
    _read("page", IdInput, PageOptions, "an object or source in full"),
    _read("recent", RecentInput, RecentOptions, "{}"),
    _read(
        "search",
        SearchInput,
        SearchOptions,
        "options: max_items, filters, result_unit object|segment; retry weak ones with suggested_retry_terms",
    ),
    _read("graph", IdInput, GraphOptions, "id whole or short, or SOURCE_ID#seg-N: its neighbourhood"),
    _read("entities", graph_modes.EntitiesInput, graph_modes.EntitiesOptions, "{name|id|type}"),
    _read(
        "facts",
        graph_modes.FactsInput,
        graph_modes.FactsOptions,
        "{subject?, predicate?, object?, as_of?, include_superseded?}",
    ),
    _read("trace", graph_modes.TraceInput, graph_modes.TraceOptions, "{id}"),
    _read("package", PackageInput, PackageOptions, "a selection.v1 of ids -> ContextPackage"),
)
