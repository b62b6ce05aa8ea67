"""What a tool result looks like on the wire: the structured object plus its compact JSON text."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent

from memory_substrate.tokens import wire_json


def tool_result(value: dict[str, Any]) -> CallToolResult:
    """Structured content plus its compact JSON text (the SDK's default text is indented)."""
    return CallToolResult(content=[TextContent(type="text", text=wire_json(value))], structured_content=value)
