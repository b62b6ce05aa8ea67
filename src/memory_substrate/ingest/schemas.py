"""Input and option models of memory_ingest."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from memory_substrate.validation import Strict


class Message(Strict):
    role: str = Field(min_length=1, max_length=64)
    content: str = Field(min_length=1, max_length=200_000)
    name: str | None = Field(default=None, max_length=200)
    created_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Origin(Strict):
    host: str | None = Field(default=None, max_length=200)
    project: str | None = Field(default=None, max_length=500)


class ConversationInput(Strict):
    title: str = Field(default="Conversation", min_length=1, max_length=500)
    messages: list[Message] = Field(min_length=1, max_length=20_000)
    origin: Origin | None = None
    thread_id: str | None = Field(
        default=None, min_length=1, max_length=200,
        description="Identifies the conversation across captures; without it, title and origin do. "
        "A capture that extends an earlier one of the same thread appends its new messages.",
    )


def _no_nul(path: str) -> str:
    # The OS cannot name a file with a NUL in it; say so instead of failing deep in os.stat.
    if "\x00" in path:
        raise ValueError("a path cannot contain a NUL character")
    return path


LocalPath = Annotated[str, Field(min_length=1, max_length=4096), AfterValidator(_no_nul)]


class PathInput(Strict):
    path: LocalPath
    title: str | None = Field(default=None, max_length=500)


class RepoInput(Strict):
    path: LocalPath
    include_patterns: list[str] = Field(default_factory=list, max_length=200)
    exclude_patterns: list[str] = Field(default_factory=list, max_length=200)


class WebInput(Strict):
    url: str = Field(min_length=1, max_length=4096)


class IngestOptions(Strict):
    force: bool = False
    # compact (default): counts, the first ``max_items`` of each list and of the concept
    # candidates, shared guidance once; full: every list whole, each candidate in spec 001's shape.
    detail: Literal["compact", "full"] = "compact"
    max_items: int = Field(default=5, ge=1, le=200)
