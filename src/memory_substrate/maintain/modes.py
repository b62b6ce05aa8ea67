"""The modes of memory_maintain, declared once (``validation.Mode``): what ``MaintainService``
dispatches on, what the MCP server lists and docs/modes.md shows. ``writes``: the mode can
change state (with ``options.apply=true``); the others only read."""

from __future__ import annotations

from memory_substrate.maintain import schemas as S
from memory_substrate.maintain.merge_entities import MergeEntitiesInput
from memory_substrate.validation import Mode

TOOL = "memory_maintain"


def _mode(name: str, input_model: type, options_model: type, help: str, *, writes: bool = True) -> Mode:
    return Mode(TOOL, name, input_model, options_model, f"_{name}", help, writes=writes)


MODES_DECLARED: tuple[Mode, ...] = (
    _mode("configure", S.ConfigureInput, S.ApplyOptions, "derived backends, token budget"),
    _mode("structure", S.Empty, S.ReadOnlyOptions, "dangling references", writes=False),
    _mode("audit", S.AuditInput, S.AuditOptions, "patches and audit events", writes=False),
    _mode("reindex", S.Empty, S.ReindexOptions, "rebuild derived indexes"),
    _mode("repair", S.Empty, S.ApplyOptions, "fix damaged derived indexes"),
    _mode("promote_candidates", S.PromoteInput, S.ApplyOptions, "promote qualifying candidates"),
    _mode("merge_duplicates", S.Empty, S.ApplyOptions, "merge exact duplicates"),
    _mode("resolve_duplicates", S.ResolveDuplicatesInput, S.ApplyOptions, "settle possible duplicates"),
    _mode("archive_source", S.ArchiveSourceInput, S.ApplyOptions, "archive a source"),
    _mode("decay_stale", S.DecayInput, S.ApplyOptions, "lower stale trust"),
    _mode("expire", S.TimeInput, S.ApplyOptions, "archive expired (TTL)"),
    _mode("cycle", S.CycleInput, S.ApplyOptions, "upkeep in one run"),
    _mode("report", S.ReportInput, S.ReportOptions, "a namespace's state", writes=False),
    _mode("embed", S.EmbedInput, S.ApplyOptions, "make queued vectors"),
    _mode("extract", S.ExtractInput, S.ExtractOptions, "knowledge graph of episodes, by a model"),
    _mode("merge_entities", MergeEntitiesInput, S.ApplyOptions, "merge same-named entities"),
)
