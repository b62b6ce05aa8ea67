"""The modes of memory_maintain, declared once (``validation.Mode``): what ``MaintainService``
dispatches on, what the MCP server lists and docs/modes.md shows. ``writes``: the mode can
change state (with ``options.apply=true``); the others only read."""

from __future__ import annotations

from memory_substrate.maintain import schemas
from memory_substrate.maintain.merge_entities import MergeEntitiesInput
from memory_substrate.validation import Mode

TOOL = "memory_maintain"


def _mode(name: str, input_model: type, options_model: type, help: str, *, writes: bool = True) -> Mode:
    return Mode(TOOL, name, input_model, options_model, f"_{name}", help, writes=writes)


MODES_DECLARED: tuple[Mode, ...] = (
    _mode("configure", schemas.ConfigureInput, schemas.ApplyOptions, "derived backends, token budget"),
    _mode("structure", schemas.Empty, schemas.ReadOnlyOptions, "dangling references", writes=False),
    _mode("audit", schemas.AuditInput, schemas.AuditOptions, "patches and audit events", writes=False),
    _mode("reindex", schemas.Empty, schemas.ReindexOptions, "rebuild derived indexes"),
    _mode("repair", schemas.Empty, schemas.ApplyOptions, "fix damaged derived indexes"),
    _mode("promote_candidates", schemas.PromoteInput, schemas.ApplyOptions, "promote qualifying candidates"),
    _mode("merge_duplicates", schemas.Empty, schemas.ApplyOptions, "merge exact duplicates"),
    _mode(
        "resolve_duplicates",
        schemas.ResolveDuplicatesInput,
        schemas.ApplyOptions,
        "settle possible duplicates",
    ),
    _mode("archive_source", schemas.ArchiveSourceInput, schemas.ApplyOptions, "archive a source"),
    _mode("decay_stale", schemas.DecayInput, schemas.ApplyOptions, "lower stale trust"),
    _mode("expire", schemas.TimeInput, schemas.ApplyOptions, "archive expired (TTL)"),
    _mode("cycle", schemas.CycleInput, schemas.ApplyOptions, "upkeep in one run"),
    _mode("report", schemas.ReportInput, schemas.ReportOptions, "a namespace's state", writes=False),
    _mode("embed", schemas.EmbedInput, schemas.ApplyOptions, "make queued vectors"),
    _mode("extract", schemas.ExtractInput, schemas.ExtractOptions, "knowledge graph of episodes, by a model"),
    _mode("merge_entities", MergeEntitiesInput, schemas.ApplyOptions, "merge same-named entities"),
)
