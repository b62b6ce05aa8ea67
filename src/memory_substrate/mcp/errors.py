"""One error shape for every MCP tool: the text of an ``isError`` result is a JSON document.

The SDK reports a failed call as ``Error executing tool <name>: <text>``, with pydantic's own
text (and a link to pydantic's docs) when the arguments fail the input schema, and with no
text at all when the tool crashed. Agents and scripts then have to scrape prose. Here every
failure of every tool registered on the server, ours or one added later, comes back as

    {"code": "memory_...", "message": "...", "details": {...}}

- a ``MemorySubstrateError`` anywhere in the cause chain: its own ``to_dict()``;
- arguments that fail the tool's input schema: ``memory_validation_error`` with one entry per
  failing field (dotted path, message, pydantic error type) and no URLs or echoed input;
- an unknown tool name: ``memory_unknown_tool`` with the tools the server lists;
- a ``ToolError`` raised on purpose with prose: ``memory_tool_error`` with that text;
- anything else (a bug): ``memory_internal_error``, with the traceback logged on the server
  and nothing of the exception's text sent to the client.

The result keeps ``isError: true``. Protocol errors (``MCPError``) pass through unchanged. The
server class that answers this way is ``MemoryMCPServer`` (memory_server.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TypedDict

from mcp.server.mcpserver.exceptions import MCPServerError, ToolError, UnexpectedToolError
from pydantic import ValidationError as PydanticValidationError

from memory_substrate.errors import MemorySubstrateError
from memory_substrate.json_types import JsonObject

UNKNOWN_TOOL = "memory_unknown_tool"
INTERNAL_ERROR = "memory_internal_error"
VALIDATION_ERROR = "memory_validation_error"
TOOL_ERROR = "memory_tool_error"


class FieldError(TypedDict):
    """One failing field of a call's arguments."""

    field: str  # dotted path; "(root)" for the arguments as a whole
    message: str
    type: str  # pydantic's error type


def field_errors(exc: PydanticValidationError, prefix: tuple[str | int, ...] = ()) -> list[FieldError]:
    """pydantic errors as ``{"field", "message", "type"}``: dotted path, no URL, no echoed input."""
    out: list[FieldError] = []
    for err in exc.errors(include_url=False, include_input=False, include_context=False):
        path = [*prefix, *err["loc"]]
        out.append(
            {"field": ".".join(str(p) for p in path) or "(root)", "message": err["msg"], "type": err["type"]}
        )
    return out


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def error_document(tool: str, exc: ToolError, known_tools: list[str]) -> tuple[JsonObject, bool]:
    """The JSON error for a failed call of ``tool``, and whether it was anticipated (not a bug)."""
    chain = _chain(exc)
    for cause in chain:
        if isinstance(cause, MemorySubstrateError):
            return cause.to_dict(), True
    for cause in chain:
        if isinstance(cause, PydanticValidationError):
            errors = field_errors(cause)
            message = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
            return {
                "code": VALIDATION_ERROR,
                "message": f"invalid arguments for {tool}: {message}",
                "details": {"tool": tool, "errors": errors},
            }, True
    if tool not in known_tools:
        return {
            "code": UNKNOWN_TOOL,
            "message": f"unknown tool {tool!r}; this server has: {', '.join(known_tools)}",
            "details": {"tool": tool, "known": known_tools},
        }, True
    if not isinstance(exc, UnexpectedToolError):
        # A ToolError raised on purpose with prose (by a tool or the SDK): keep the innermost text.
        deliberate = [c for c in chain if isinstance(c, MCPServerError)][-1]
        text = str(deliberate).removeprefix(f"Error executing tool {tool}: ")
        return {"code": TOOL_ERROR, "message": text, "details": {"tool": tool}}, True
    return {
        "code": INTERNAL_ERROR,
        "message": f"{tool} failed with an internal error; the server log has the details",
        "details": {"tool": tool},
    }, False


def error_text(document: Mapping[str, object]) -> str:
    """``document`` as the JSON text of an ``isError`` result."""
    text = json.dumps(document, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate echoed from the input: escape it, stay valid JSON
        text = json.dumps(document, ensure_ascii=True, default=str)
    return text
