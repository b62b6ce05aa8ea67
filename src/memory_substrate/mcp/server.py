"""The spec-001 MCP surface: four tools, three resources, two prompts. Thin: validate, call, shape."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from memory_substrate.app import Memory
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.mcp import texts

INSTRUCTIONS = (
    "Long-term memory for agents. Start a task with memory_query context; capture evidence with "
    "memory_ingest; write durable memory with memory_remember (reason, memory_source, scope_refs "
    "required); maintain with memory_maintain. Read memory://policy for the rules."
)


def _args_model(name: str, modes: tuple[str, ...]) -> type[BaseModel]:
    mode_type = Literal[modes]  # type: ignore[valid-type]

    class Args(BaseModel):
        model_config = ConfigDict(extra="forbid", title=f"{name}_args")
        mode: mode_type = Field(description="One of: " + ", ".join(modes))  # type: ignore[valid-type]
        input_data: dict[str, Any] = Field(description="Mode-specific input; required even when empty ({}).")
        options: dict[str, Any] = Field(default_factory=dict, description="Mode-specific options.")

    Args.__name__ = f"{name.title().replace('_', '')}Args"
    return Args


def _tool_error(exc: MemorySubstrateError) -> ToolError:
    return ToolError(json.dumps({"error": exc.to_dict()}, ensure_ascii=False, default=str))


def build_server(memory: Memory) -> MCPServer:
    """An MCP server over one ``Memory`` (one store, one namespace)."""
    from memory_substrate.ingest.service import MODES as INGEST_MODES
    from memory_substrate.maintain.service import MODES as MAINTAIN_MODES
    from memory_substrate.query.service import MODES as QUERY_MODES
    from memory_substrate.remember.service import MODES as REMEMBER_MODES

    server: MCPServer = MCPServer("memory-substrate", instructions=INSTRUCTIONS, version=_version())

    def register(
        name: str,
        modes: tuple[str, ...],
        call: Callable[[str, dict[str, Any], dict[str, Any]], dict[str, Any]],
        description: str,
        annotations: ToolAnnotations,
    ) -> None:
        model = _args_model(name, modes)

        async def tool(args: model) -> dict[str, Any]:  # type: ignore[valid-type]
            a: Any = args
            try:
                return await anyio.to_thread.run_sync(call, a.mode, a.input_data, a.options)
            except MemorySubstrateError as exc:
                raise _tool_error(exc) from None

        tool.__name__ = name
        # Annotations are strings under postponed evaluation; give the SDK the real types.
        tool.__annotations__ = {"args": model, "return": dict[str, Any]}
        tool.__doc__ = description
        server.add_tool(tool, name=name, description=description, annotations=annotations)

    register(
        "memory_ingest",
        INGEST_MODES,
        memory.ingest,
        "Capture evidence (repo, file, markdown, web, pdf, conversation) as a source with addressable "
        "segments. It does not decide what is durable: review the evidence, then use memory_remember. "
        "Conversation: input_data {title, messages: [{role, content, name?, created_at?, metadata?}], origin?}.",
        ToolAnnotations(title="Ingest evidence", read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True),
    )
    register(
        "memory_query",
        QUERY_MODES,
        memory.query,
        "Read memory. search {query} (options: max_items, filters, result_unit object|segment); context {task, scope, model, format, budget_tokens, task_class} -> content, a budgeted package; "
        "page {id}; expand {id}; recent {}; graph {id}. Retry weak searches with suggested_retry_terms.",
        ToolAnnotations(title="Query memory", read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
    )
    register(
        "memory_remember",
        REMEMBER_MODES,
        memory.remember,
        "Write durable memory under governance. knowledge/activity/work_item need kind, title, summary, reason, "
        "memory_source (user_declared|human_curated|agent_inferred|system_generated|imported) and scope_refs "
        "(e.g. ['scope:project']). Lifecycle: promote, supersede, contest. batch applies all entries or none.",
        ToolAnnotations(title="Remember", read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False),
    )
    register(
        "memory_maintain",
        MAINTAIN_MODES,
        memory.maintain,
        "Maintain memory: structure, audit, report (read-only); configure, reindex, repair, promote_candidates, "
        "merge_duplicates, resolve_duplicates, archive_source, decay_stale, cycle change state only with options.apply=true.",
        ToolAnnotations(title="Maintain memory", read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False),
    )

    @server.resource("memory://policy", name="policy", title="Memory policy", mime_type="text/markdown",
                     description="Rules for reading and writing durable memory.")
    def policy() -> str:
        return texts.POLICY

    @server.resource("memory://agent-playbook", name="agent-playbook", title="Agent playbook", mime_type="text/markdown",
                     description="Step-by-step: query, ingest, review, remember (agent_extraction.v1).")
    def playbook() -> str:
        return texts.PLAYBOOK

    @server.resource("memory://mcp-api-summary", name="mcp-api-summary", title="API summary", mime_type="text/markdown",
                     description="Tools, modes, options and error codes at a glance.")
    def api_summary() -> str:
        return texts.API_SUMMARY

    @server.prompt(name="memory_task_start", description="Query memory (with query expansion) before starting a task.")
    def memory_task_start(task: str) -> str:
        return texts.TASK_START.format(task=task)

    @server.prompt(name="memory_review", description="End-of-task memory review, including possible_duplicates handling.")
    def memory_review(summary: str = "(describe what was done)") -> str:
        return texts.REVIEW.format(summary=summary)

    return server


def _version() -> str:
    from memory_substrate import __version__

    return __version__
