"""What ``POST /hooks/{client}`` answers (mcp/hooks_route.py): the line the hook prints, with the
context it injected or the capture's answer."""

from __future__ import annotations

from typing import TypedDict

from memory_substrate.json_types import JsonObject


class InjectedContext(TypedDict):
    """The context a context event injected: its text and the ids of what it holds."""

    text: str
    ids: list[str]


class ContextAnswer(TypedDict):
    """A context event's answer (``injection`` None when nothing was injected)."""

    output: str
    injection: InjectedContext | None


class CaptureAnswer(TypedDict):
    """A capture event's answer: memory_ingest's answer as ``result``."""

    output: str
    result: JsonObject


HookAnswer = ContextAnswer | CaptureAnswer
