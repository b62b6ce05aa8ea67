"""The ``memory_ingest`` conversation input a captured transcript becomes (``to_conversation``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject


class ConversationMessage(TypedDict):
    """One turn as a message: ``name`` is the client of an assistant turn, ``created_at`` the
    turn's timestamp; ``metadata`` holds the turn's kind and tool, and on the first message the
    session's metadata."""

    role: str
    content: str
    metadata: JsonObject
    name: NotRequired[str]
    created_at: NotRequired[str]


class ConversationOrigin(TypedDict):
    host: str  # the client
    project: str  # the session's working directory


class ConversationInput(TypedDict):
    """The session is the thread; ``origin`` only when the transcript names a working directory."""

    thread_id: str
    title: str
    messages: list[ConversationMessage]
    origin: NotRequired[ConversationOrigin]
