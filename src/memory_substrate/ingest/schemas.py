"""Input and option models of memory_ingest."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidatorFunctionWrapHandler, field_validator
from pydantic import ValidationError as PydanticValidationError

from memory_substrate.json_types import JsonObject
from memory_substrate.validation import Strict


class Message(Strict):
    role: str = Field(min_length=1, max_length=64)
    content: str = Field(min_length=1, max_length=200_000)
    name: str | None = Field(default=None, max_length=200)
    created_at: datetime | None = None
    metadata: JsonObject = Field(default_factory=dict)


class Origin(Strict):
    host: str | None = Field(default=None, max_length=200)
    project: str | None = Field(default=None, max_length=500)


# Messages validated per call of the validator. One pydantic call holds the GIL until it returns
# (20,000 messages: 0.1-0.3 s, during which no other namespace's search in the same server runs a
# line of Python); between pieces the interpreter may hand the GIL to another thread.
MESSAGE_PIECE = 500
MAX_MESSAGES = 20_000


class ConversationInput(Strict):
    title: str = Field(default="Conversation", min_length=1, max_length=500)
    messages: list[Message] = Field(min_length=1, max_length=MAX_MESSAGES)
    origin: Origin | None = None
    thread_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Identifies the conversation across captures; without it, title and origin do. "
        "A capture that extends an earlier one of the same thread appends its new messages.",
    )

    @field_validator("messages", mode="wrap")
    @classmethod
    def _in_pieces(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> list[Message]:
        if not isinstance(value, list) or not MESSAGE_PIECE < len(value) <= MAX_MESSAGES:
            return handler(value)  # type: ignore[no-any-return]
        try:
            done = [
                m
                for start in range(0, len(value), MESSAGE_PIECE)
                for m in handler(value[start : start + MESSAGE_PIECE])
            ]
        except PydanticValidationError:
            # Once more whole, so each error names the message's index in the whole list.
            return handler(value)  # type: ignore[no-any-return]
        # Validated instances pass through at C speed; this applies the list's own limits.
        return handler(done)  # type: ignore[no-any-return]


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
    # candidates, shared guidance once; full: every list whole, each candidate with all its fields.
    detail: Literal["compact", "full"] = "compact"
    max_items: int = Field(default=5, ge=1, le=200)
