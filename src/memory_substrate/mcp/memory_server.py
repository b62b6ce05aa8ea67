"""The MCP server class every toolset is registered on (``MemoryMCPServer``).

It answers every tool failure in one JSON shape (errors.py), or in the graph toolset's envelope
for the tools named in ``envelope_tools``; refuses arguments a tool's input schema does not name
where asked to; and publishes input and output schemas without the SDK's per-tool titles.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, InputRequiredResult, TextContent
from mcp.types import Tool as MCPTool
from pydantic import ValidationError as PydanticValidationError

from memory_substrate.json_types import JsonObject
from memory_substrate.mcp.errors import INTERNAL_ERROR, VALIDATION_ERROR, error_document, error_text

logger = logging.getLogger("memory_substrate.mcp")


def _untitled(schema: JsonObject) -> JsonObject:
    """``schema`` without its top-level ``title`` (a copy: the SDK keeps the tool's own)."""
    return {k: v for k, v in schema.items() if k != "title"}


class MemoryMCPServer(MCPServer):
    """``MCPServer`` whose tool errors are JSON documents (the shape errors.py describes). Tools named
    in ``envelope_tools`` (the graph toolset) answer every failure, the SDK's own
    argument validation included, in their ``{"success": false, "error", "error_code"}`` envelope."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.envelope_tools: set[str] = set()
        # tool name -> how its input schema is rewritten for tools/list (validation is unaffected)
        self.published_schemas: dict[str, Callable[[JsonObject], JsonObject]] = {}
        # tool name -> the argument names it accepts (None until read from its schema)
        self.strict_tools: dict[str, frozenset[str] | None] = {}

    def forbid_unknown_arguments(self, name: str) -> None:
        """Refuse a call of tool ``name`` that passes an argument its input schema does not name
        (``memory_validation_error`` naming it, as for any schema failure), and publish
        ``additionalProperties: false``: the SDK's argument model ignores unknown keys, so a
        misplaced ``root`` beside ``args`` would be dropped without a word."""
        self.strict_tools[name] = None
        earlier = self.published_schemas.get(name)
        self.published_schemas[name] = lambda schema: {
            **(earlier(schema) if earlier else schema),
            "additionalProperties": False,
        }

    async def _unknown_arguments(self, name: str, arguments: Mapping[str, object]) -> list[str]:
        if name not in self.strict_tools:
            return []
        allowed = self.strict_tools[name]
        if allowed is None:  # the tool's own argument names, read once from its schema
            tool = next((t for t in await super().list_tools() if t.name == name), None)
            allowed = frozenset((tool.input_schema.get("properties") or {}) if tool is not None else ())
            self.strict_tools[name] = allowed
        return sorted(set(arguments) - allowed)

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        for tool in tools:
            rewrite = self.published_schemas.get(tool.name)
            if rewrite is not None:
                tool.input_schema = rewrite(copy.deepcopy(tool.input_schema))
            # The SDK titles each schema after its tool ("memory_queryArguments", "get_nodeDictOutput"):
            # the tool's name again, paid for in every session's context. Validation ignores titles.
            tool.input_schema = _untitled(tool.input_schema)
            if tool.output_schema is not None:
                tool.output_schema = _untitled(tool.output_schema)
        return tools

    async def call_tool(
        self, name: str, arguments: JsonObject, context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            if unknown := await self._unknown_arguments(name, arguments):
                # The schema failure the SDK would raise with extra="forbid", answered like the others.
                refused = PydanticValidationError.from_exception_data(
                    name, [{"type": "extra_forbidden", "loc": (k,), "input": arguments[k]} for k in unknown]
                )
                raise ToolError(f"Error executing tool {name}: unknown arguments") from refused
            return await super().call_tool(name, arguments, context)
        except MCPError:
            raise
        except ToolError as exc:
            known = sorted(t.name for t in await super().list_tools())
            document, anticipated = error_document(name, exc, known)
            if name in self.envelope_tools:
                from memory_substrate.graphmem.errors import fail
                from memory_substrate.graphmem.tools import envelope_result

                found = document["code"]
                code = (
                    found
                    if isinstance(found, str) and found in (VALIDATION_ERROR, INTERNAL_ERROR)
                    else VALIDATION_ERROR
                )
                if code == INTERNAL_ERROR:
                    logger.error("tool %r raised an unexpected exception", name, exc_info=exc)
                    code = "memory_service_error"
                return envelope_result(fail(str(document["message"]), code))
            if anticipated:
                logger.debug("tool %r failed: %s", name, document["code"])
            else:
                logger.error("tool %r raised an unexpected exception", name, exc_info=exc)
            return CallToolResult(
                content=[TextContent(type="text", text=error_text(document))], is_error=True
            )
