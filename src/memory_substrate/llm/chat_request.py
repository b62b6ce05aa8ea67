"""The body of an OpenAI-compatible ``/chat/completions`` request, as ``openai_compat.py`` sends it."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from memory_substrate.json_types import JsonObject


class StreamOptions(TypedDict):
    include_usage: bool


class JsonSchemaFormat(TypedDict):
    name: str
    schema: JsonObject


class ResponseFormat(TypedDict):
    type: str  # json_schema | json_object
    json_schema: NotRequired[JsonSchemaFormat]


class ChatRequest(TypedDict):
    model: str
    messages: list[dict[str, str]]
    temperature: float
    stream: bool
    stream_options: NotRequired[StreamOptions]
    max_tokens: NotRequired[int]
    response_format: NotRequired[ResponseFormat]  # always sent; set after the optional fields
