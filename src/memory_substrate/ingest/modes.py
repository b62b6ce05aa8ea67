"""The modes of memory_ingest, declared once (``validation.Mode``): what ``IngestService``
dispatches on, what the MCP server lists and docs/modes.md shows. Each mode's capture is
``_capture``: a conversation is parsed here, the other modes by their adapter (``bridge.py``)."""

from __future__ import annotations

from memory_substrate.ingest import schemas
from memory_substrate.validation import Mode

TOOL = "memory_ingest"


def _capture(name: str, input_model: type, help: str) -> Mode:
    return Mode(TOOL, name, input_model, schemas.IngestOptions, "_capture", help, writes=True)


MODES_DECLARED: tuple[Mode, ...] = (
    _capture("repo", schemas.RepoInput, "a source-code repository (a path)"),
    _capture("file", schemas.PathInput, "one text file"),
    _capture("markdown", schemas.PathInput, "a Markdown file"),
    _capture("web", schemas.WebInput, "a web page (a URL)"),
    _capture("pdf", schemas.PathInput, "a PDF file"),
    _capture(
        "conversation",
        schemas.ConversationInput,
        "{title, messages: [{role, content, name?, created_at?, metadata?}], origin?}",
    ),
)
