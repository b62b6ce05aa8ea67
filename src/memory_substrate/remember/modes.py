"""The modes of memory_remember, declared once (``validation.Mode``): what ``RememberService``
dispatches on, what the MCP server lists and docs/modes.md shows."""

from __future__ import annotations

from memory_substrate.contracts.inputs import GraphSnapshotInput
from memory_substrate.graph.schemas import ExtractionInput
from memory_substrate.remember import schemas
from memory_substrate.validation import Mode, NoOptions

TOOL = "memory_remember"


def _write(name: str, input_model: type, help: str) -> Mode:
    return Mode(TOOL, name, input_model, NoOptions, f"_{name}", help, writes=True)


MODES_DECLARED: tuple[Mode, ...] = (
    _write("activity", schemas.ActivityInput, "what was done"),
    _write("knowledge", schemas.KnowledgeInput, "a durable fact, decision, procedure..."),
    _write("work_item", schemas.WorkItemInput, "a task to do, or with work_item_id its update"),
    _write("promote", schemas.PromoteInput, "a candidate becomes active"),
    _write("supersede", schemas.SupersedeInput, "a new version replaces an old one"),
    _write("contest", schemas.ContestInput, "mark knowledge disputed"),
    _write("batch", schemas.BatchInput, "applies all entries or none"),
    _write(
        "extraction",
        ExtractionInput,
        "entities, facts, procedures: the knowledge graph of an ingested conversation",
    ),
    _write(
        "graph_snapshot", GraphSnapshotInput, "a markitect.memory.graph.v1 snapshot, imported in one patch"
    ),
)
