"""What a tool result looks like on the wire: the structured object plus its compact JSON text."""

from __future__ import annotations

from collections.abc import Mapping

from mcp.types import CallToolResult, TextContent

from memory_substrate.tokens import wire_json

# Results whose main field is a text meant to be read as it is (a compiled context package): the
# field travels as a text block of its own, unescaped, after the JSON of everything else. The
# structured content still holds the whole object.
TEXT_FIELDS = {"context_result": "content"}


def tool_result(value: Mapping[str, object]) -> CallToolResult:
    """Structured content plus its compact JSON text (the SDK's default text is indented).

    ``value`` is any result type; every result is a dict at run time, handed to the SDK as it is."""
    structured = value if isinstance(value, dict) else dict(value)
    field = TEXT_FIELDS.get(str(value.get("result_type")))
    text = value.get(field) if field else None
    if isinstance(text, str) and text:
        rest = {k: v for k, v in value.items() if k != field}
        return CallToolResult(
            content=[TextContent(type="text", text=wire_json(rest)), TextContent(type="text", text=text)],
            structured_content=structured,
        )
    return CallToolResult(
        content=[TextContent(type="text", text=wire_json(value))], structured_content=structured
    )


FAILED = "failed"


def outcome_result(value: Mapping[str, object]) -> CallToolResult:
    """``tool_result``, except that a run whose work failed (``status: failed``, with the
    ``error`` that says why) is an ``isError`` result: its text is the error document (docs/errors.md)
    with the whole result as its ``details``, so a client that checks ``isError`` sees it."""
    error = value.get("error")
    if value.get("status") != FAILED or not isinstance(error, dict):
        return tool_result(value)
    document = {
        "code": error.get("code", "memory_error"),
        "message": error.get("message", ""),
        "details": value,
    }
    return CallToolResult(content=[TextContent(type="text", text=wire_json(document))], is_error=True)
