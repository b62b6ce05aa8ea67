"""The modes of memory_query, declared once (``validation.Mode``): what ``QueryService`` dispatches
on, what the MCP server lists and docs/modes.md shows."""

from __future__ import annotations

from memory_substrate.contracts.inputs import PackageInput, PackageOptions
from memory_substrate.query import graph_modes as G
from memory_substrate.query import schemas as Q
from memory_substrate.validation import Mode

TOOL = "memory_query"


def _read(name: str, input_model: type, options_model: type, help: str) -> Mode:
    return Mode(TOOL, name, input_model, options_model, f"_{name}", help, writes=False)


MODES_DECLARED: tuple[Mode, ...] = (
    _read("context", Q.ContextInput, Q.ContextOptions,
          "{task, scope, model, format, budget_tokens, task_class} -> content, a budgeted package"),
    _read("expand", Q.IdInput, Q.ExpandOptions, "an object with its relations and evidence"),
    _read("page", Q.IdInput, Q.PageOptions, "an object or source in full"),
    _read("recent", Q.RecentInput, Q.RecentOptions, "{}"),
    _read("search", Q.SearchInput, Q.SearchOptions,
          "options: max_items, filters, result_unit object|segment; retry weak ones with suggested_retry_terms"),
    _read("graph", Q.IdInput, Q.GraphOptions,
          "id whole or short, or SOURCE_ID#seg-N: its neighbourhood"),
    _read("entities", G.EntitiesInput, G.EntitiesOptions, "{name|id|type}"),
    _read("facts", G.FactsInput, G.FactsOptions, "{subject?, predicate?, object?, as_of?, include_superseded?}"),
    _read("trace", G.TraceInput, G.TraceOptions, "{id}"),
    _read("package", PackageInput, PackageOptions, "a selection.v1 of ids -> ContextPackage"),
)
