"""The MCP surface: four tools, three resources, two prompts (graph tools opt-in). Thin: validate, call, shape."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, get_args

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field
from pydantic.config import JsonDict

from memory_substrate.app import Memory
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.governance import MemorySource
from memory_substrate.json_types import JsonObject
from memory_substrate.mcp import texts
from memory_substrate.mcp.bulkhead import Bulkhead, is_heavy_read, is_slow
from memory_substrate.mcp.memory_server import MemoryMCPServer
from memory_substrate.validation import Mode, check_input
from memory_substrate.wire import outcome_result

if TYPE_CHECKING:
    from memory_substrate.llm.sampling import SamplingExtractor

# What a tool of the four calls on ``Memory``: (mode, input_data, options) -> the JSON answer.
ToolCall = Callable[[str, JsonObject, JsonObject], JsonObject]

INSTRUCTIONS = (
    "Long-term memory for agents. Start a task with memory_query context; capture evidence with "
    "memory_ingest; write durable memory with memory_remember (reason, memory_source, scope_refs "
    "required); maintain with memory_maintain. Read memory://policy for the rules."
)


def _no_titles(schema: JsonDict) -> None:
    """Pydantic's generated titles restate the field names, and ``additionalProperties: true`` on
    an open object is JSON Schema's default; an agent pays for each one."""
    schema.pop("title", None)
    properties = schema.get("properties", {})
    # A model's schema holds its properties as an object of property schemas, each an object.
    for prop in properties.values() if isinstance(properties, dict) else ():
        if not isinstance(prop, dict):
            continue
        prop.pop("title", None)
        if prop.get("additionalProperties") is True:
            del prop["additionalProperties"]


def input_data_description(modes: Sequence[Mode]) -> str:
    """What ``input_data`` holds, per mode, generated from the modes' input models."""
    from memory_substrate.modes_reference import required_by_mode

    return f"Required by mode: {required_by_mode(list(modes))}."


def _args_model(name: str, modes: Sequence[Mode]) -> type[BaseModel]:
    mode_type = Literal[tuple(m.name for m in modes)]  # type: ignore[valid-type]

    class Args(BaseModel):
        # input_data stays an open object here: each mode's own model validates it in the service,
        # whose errors name the field (memory_validation_error). The schema says what each mode requires.
        model_config = ConfigDict(extra="forbid", json_schema_extra=_no_titles)
        mode: mode_type  # type: ignore[valid-type]
        input_data: JsonObject = Field(description=input_data_description(modes))
        options: JsonObject = Field(default_factory=dict)

    Args.__name__ = f"{name.title().replace('_', '')}Args"
    return Args


TOOLSETS = ("substrate", "graph", "all")
GRAPH_INSTRUCTIONS = (
    "Graph memory (spec 002): Fact and Entity nodes, typed edges and triplets. Responses are "
    '{"success": true, ...} or {"success": false, "error", "error_code"}.'
)


def build_server(memory: Memory, toolset: str = "substrate", *, bound: bool = False) -> MCPServer:
    """An MCP server over one ``Memory`` (one store, one namespace). Every tool error, on every
    tool registered here, is a JSON {code, message, details} (mcp/errors.py).

    ``toolset``: ``substrate`` (four tools, resources, prompts), ``graph`` (the graph toolset's
    18 tools) or ``all``. ``bound``: the graph tools may reach only ``memory``'s namespace
    (HTTP, where a token is bound to one); otherwise ``owner_id`` may name any namespace.
    """
    if toolset not in TOOLSETS:
        raise ValueError(f"unknown toolset {toolset!r}; choose one of {', '.join(TOOLSETS)}")
    if toolset == "graph":
        server: MemoryMCPServer = MemoryMCPServer(
            "memory-substrate", instructions=GRAPH_INSTRUCTIONS, version=_version()
        )
    else:
        server = MemoryMCPServer("memory-substrate", instructions=INSTRUCTIONS, version=_version())
    if toolset != "graph":
        _register_substrate(server, memory)
    if toolset != "substrate":
        from memory_substrate.graphmem.service import GraphMemory
        from memory_substrate.graphmem.tools import register_graph_tools

        register_graph_tools(server, GraphMemory(memory, bound=bound))
    return server


# What each tool is for; the modes and their one-line help come from the mode declarations
# (``<service>/modes.py``, read through ``modes_reference``), so the two cannot disagree.
INTROS = {
    "memory_ingest": "Capture evidence as a source with addressable segments; review it, then memory_remember "
    "what is durable.",
    "memory_query": "Read memory.",
    "memory_remember": f"Write durable memory under governance: memory_source is {'|'.join(get_args(MemorySource))}; "
    "scope_refs e.g. ['scope:project'].",
    "memory_maintain": "Maintain memory. Modes that write change state only with options.apply=true.",
}
TITLES = {
    "memory_ingest": "Ingest evidence",
    "memory_query": "Query memory",
    "memory_remember": "Remember",
    "memory_maintain": "Maintain memory",
}


def describe_tool(tool: str, modes: Sequence[Mode]) -> str:
    """The tool's description: its purpose, then each mode with its help (read-only ones marked
    where the tool also writes). docs/modes.md has every field."""
    mixed = any(m.writes for m in modes) and not all(m.writes for m in modes)
    lines = [f"{m.name}{' (read-only)' if mixed and not m.writes else ''}: {m.help}" for m in modes]
    return f"{INTROS[tool]} Modes: " + "; ".join(lines) + "."


def _annotations(tool: str, modes: Sequence[Mode]) -> ToolAnnotations:
    writes = any(m.writes for m in modes)
    return ToolAnnotations(
        title=TITLES[tool],
        read_only_hint=not writes,
        destructive_hint=tool == "memory_maintain",
        idempotent_hint=not writes,
        open_world_hint=tool == "memory_ingest",
    )


def _register_substrate(server: MemoryMCPServer, memory: Memory) -> None:
    from memory_substrate.modes_reference import declared

    # One server serves one namespace, so its bulkhead is that namespace's (mcp/bulkhead.py).
    bulkhead = Bulkhead(
        memory.namespace, concurrency=memory.settings.slow_concurrency, queue=memory.settings.slow_queue
    )
    heavy = Bulkhead(
        memory.namespace,
        concurrency=memory.settings.heavy_read_concurrency,
        queue=memory.settings.heavy_read_queue,
        what="heavy reads (inputs or budgets this large)",
    )
    calls: dict[str, ToolCall] = {
        "memory_ingest": memory.ingest,
        "memory_query": memory.query,
        "memory_remember": memory.remember,
        "memory_maintain": memory.maintain,
    }

    for name, modes in declared().items():
        _register_tool(server, memory, name, modes, calls[name], bulkhead, heavy)
    _register_texts(server)


def _register_tool(
    server: MemoryMCPServer,
    memory: Memory,
    name: str,
    modes: Sequence[Mode],
    call: ToolCall,
    bulkhead: Bulkhead,
    heavy: Bulkhead,
) -> None:
    """One tool over ``call``: inputs checked first, slow modes and heavy reads through their
    bulkheads, everything else on a worker thread."""
    model = _args_model(name, modes)
    description = describe_tool(name, modes)

    async def tool(args: model, ctx: Context) -> dict[str, Any]:  # type: ignore[valid-type]
        a: Any = args
        try:
            check_input(a.input_data, "input_data")  # before anything, sampling included (app.py checks too)
            check_input(a.options, "options")
            work: Callable[[], JsonObject] = lambda: call(a.mode, a.input_data, a.options)  # noqa: E731
            if name == "memory_maintain" and a.mode == "extract" and a.options.get("extractor") == "sampling":
                extractor = sampling_extractor(ctx)
                work = lambda: memory.maintain(a.mode, a.input_data, a.options, extractor=extractor)  # noqa: E731
            if is_slow(name, a.mode):
                return outcome_result(await bulkhead.run(name, a.mode, work))  # type: ignore[return-value]
            if is_heavy_read(name, a.input_data, a.options):
                return outcome_result(await heavy.run(name, a.mode, work))  # type: ignore[return-value]
            return outcome_result(await anyio.to_thread.run_sync(work))  # type: ignore[return-value]
        except MemorySubstrateError as exc:
            # MemoryMCPServer finds the cause and answers with its to_dict() as JSON.
            raise ToolError(exc.message) from exc

    tool.__name__ = name
    # Annotations are strings under postponed evaluation; give the SDK the real types.
    tool.__annotations__ = {"args": model, "ctx": Context, "return": dict[str, Any]}
    tool.__doc__ = description
    server.add_tool(tool, name=name, description=description, annotations=_annotations(name, modes))
    server.forbid_unknown_arguments(name)  # only ``args``: the root, say, is never a tool argument


def _register_texts(server: MemoryMCPServer) -> None:
    """The policy, playbook and API summary as resources; the task-start and review prompts."""

    @server.resource(
        "memory://policy",
        name="policy",
        title="Memory policy",
        mime_type="text/markdown",
        description="Rules for reading and writing durable memory.",
    )
    def policy() -> str:
        return texts.POLICY

    @server.resource(
        "memory://agent-playbook",
        name="agent-playbook",
        title="Agent playbook",
        mime_type="text/markdown",
        description="Step-by-step: query, ingest, review, remember (agent_extraction.v1).",
    )
    def playbook() -> str:
        return texts.PLAYBOOK

    @server.resource(
        "memory://mcp-api-summary",
        name="mcp-api-summary",
        title="API summary",
        mime_type="text/markdown",
        description="Tools, modes, options and error codes at a glance.",
    )
    def api_summary() -> str:
        return texts.API_SUMMARY

    @server.prompt(
        name="memory_task_start", description="Query memory (with query expansion) before starting a task."
    )
    def memory_task_start(task: str) -> str:
        return texts.TASK_START.format(task=task)

    @server.prompt(
        name="memory_review", description="End-of-task memory review, including possible_duplicates handling."
    )
    def memory_review(summary: str = "(describe what was done)") -> str:
        return texts.REVIEW.format(summary=summary)


def sampling_extractor(ctx: Context) -> SamplingExtractor:
    """An extractor that asks the connected client's model (MCP sampling), or a typed error when
    the client does not offer sampling."""
    import warnings

    from mcp import types

    from memory_substrate.errors import NotAvailableError
    from memory_substrate.llm.sampling import SamplingExtractor

    caps = ctx.client_capabilities
    if caps is None or caps.sampling is None:
        raise NotAvailableError(
            "this MCP client does not offer sampling; configure MEMORY_SUBSTRATE_LLM_BASE_URL/MODEL or use "
            "memory_remember mode extraction",
            details={"extractor": "sampling"},
        )
    session = ctx.session
    request_id = ctx.request_id  # sampling rides on the tool call's own channel

    async def _ask(system: str, user: str, max_tokens: int) -> str:
        from mcp.shared.exceptions import NoBackChannelError

        try:
            return await _sample(system, user, max_tokens)
        except NoBackChannelError:
            raise NotAvailableError(
                "this connection has no channel for sampling requests (the 2026-07-28 protocol removed them); "
                "sampling works on handshake-era connections only",
                details={"extractor": "sampling"},
            ) from None

    async def _sample(system: str, user: str, max_tokens: int) -> str:
        with warnings.catch_warnings():
            # Sampling is deprecated in the protocol (SEP-2577) but still offered by clients; we use it
            # only on explicit request.
            warnings.simplefilter("ignore")
            result = await session.create_message(
                [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=user))],
                max_tokens=max_tokens,
                system_prompt=system,
                temperature=0.0,
                related_request_id=request_id,
            )
        content = result.content
        return content.text if isinstance(content, types.TextContent) else ""

    def ask(system: str, user: str, max_tokens: int) -> str:
        return anyio.from_thread.run(_ask, system, user, max_tokens)

    info = getattr(getattr(session, "client_params", None), "client_info", None)
    return SamplingExtractor(ask, client_name=getattr(info, "name", None) or "client")


def _version() -> str:
    from memory_substrate.version import __version__

    return __version__
