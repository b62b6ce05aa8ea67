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

The result keeps ``isError: true``. Protocol errors (``MCPError``) pass through unchanged.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import MCPServerError, ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, InputRequiredResult, TextContent
from mcp.types import Tool as MCPTool
from pydantic import ValidationError as PydanticValidationError

from memory_substrate.errors import MemorySubstrateError

logger = logging.getLogger("memory_substrate.mcp")

UNKNOWN_TOOL = "memory_unknown_tool"
INTERNAL_ERROR = "memory_internal_error"
VALIDATION_ERROR = "memory_validation_error"
TOOL_ERROR = "memory_tool_error"


def field_errors(exc: PydanticValidationError, prefix: tuple[str | int, ...] = ()) -> list[dict[str, Any]]:
    """pydantic errors as ``{"field", "message", "type"}``: dotted path, no URL, no echoed input."""
    out = []
    for err in exc.errors(include_url=False, include_input=False, include_context=False):
        path = [*prefix, *err["loc"]]
        out.append({"field": ".".join(str(p) for p in path) or "(root)", "message": err["msg"], "type": err["type"]})
    return out


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def error_document(tool: str, exc: ToolError, known_tools: list[str]) -> tuple[dict[str, Any], bool]:
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


def _dumps(document: dict[str, Any]) -> str:
    text = json.dumps(document, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate echoed from the input: escape it, stay valid JSON
        text = json.dumps(document, ensure_ascii=True, default=str)
    return text


def _untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its top-level ``title`` (a copy: the SDK keeps the tool's own)."""
    return {k: v for k, v in schema.items() if k != "title"}


class MemoryMCPServer(MCPServer):
    """``MCPServer`` whose tool errors are JSON documents (see the module docstring). Tools named
    in ``envelope_tools`` (the spec-002 graph toolset) answer every failure, the SDK's own
    argument validation included, in their ``{"success": false, "error", "error_code"}`` envelope."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.envelope_tools: set[str] = set()
        # tool name -> how its input schema is rewritten for tools/list (validation is unaffected)
        self.published_schemas: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        # tool name -> the argument names it accepts (None until read from its schema)
        self.strict_tools: dict[str, frozenset[str] | None] = {}

    def forbid_unknown_arguments(self, name: str) -> None:
        """Refuse a call of tool ``name`` that passes an argument its input schema does not name
        (``memory_validation_error`` naming it, as for any schema failure), and publish
        ``additionalProperties: false``: the SDK's argument model ignores unknown keys, so a
        misplaced ``root`` beside ``args`` would be dropped without a word."""
        self.strict_tools[name] = None
        earlier = self.published_schemas.get(name)
        self.published_schemas[name] = lambda schema: {**(earlier(schema) if earlier else schema),
                                                      "additionalProperties": False}

    async def _unknown_arguments(self, name: str, arguments: dict[str, Any]) -> list[str]:
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
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            if unknown := await self._unknown_arguments(name, arguments):
                # The schema failure the SDK would raise with extra="forbid", answered like the others.
                refused = PydanticValidationError.from_exception_data(
                    name, [{"type": "extra_forbidden", "loc": (k,), "input": arguments[k]} for k in unknown])
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

                code = document["code"] if document["code"] in (VALIDATION_ERROR, INTERNAL_ERROR) else VALIDATION_ERROR
                if code == INTERNAL_ERROR:
                    logger.error("tool %r raised an unexpected exception", name, exc_info=exc)
                    code = "memory_service_error"
                return envelope_result(fail(document["message"], code))
            if anticipated:
                logger.debug("tool %r failed: %s", name, document["code"])
            else:
                logger.error("tool %r raised an unexpected exception", name, exc_info=exc)
            return CallToolResult(content=[TextContent(type="text", text=_dumps(document))], is_error=True)
