"""MCP registration of the graph toolset's 18 tools. Thin: each tool calls one domain function.

Every call runs in a worker thread and is caught at this boundary: the client always gets the
toolset's envelope, never a traceback (errors.py). An envelope with ``success: false`` is an MCP
error result (``isError: true``, the envelope as its structured content and text), so a client
that checks ``isError`` never takes it for a success. Arguments that do not match a tool's JSON
schema (a string where an integer belongs, a required one missing) are refused by the SDK
before the tool runs; the server answers those in the same envelope too (``envelope_tools`` of
mcp/memory_server.py), naming the argument.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from memory_substrate.graphmem import health, nodes, relations, search, triplets
from memory_substrate.graphmem.errors import VALIDATION, fail, from_exception
from memory_substrate.graphmem.service import GraphMemory
from memory_substrate.ids import expand_short_ids
from memory_substrate.json_types import JsonObject
from memory_substrate.redaction import Redactions, redact_value
from memory_substrate.validation import check_input
from memory_substrate.wire import tool_result

OWNER = " owner_id = namespace."
READ = ToolAnnotations(read_only_hint=True)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True)

TOOLS: list[tuple[str, Callable[..., JsonObject], ToolAnnotations, str]] = [
    (
        "create_node",
        nodes.create_node,
        WRITE,
        "Create a Fact (text) or Entity (text = name; type from metadata.type). status active|outdated|archived; "
        "expires_at (ms) wins over ttl_days. auto_link adds SIMILAR_TO edges to facts above semantic_threshold; "
        "links: [{node_id, node_type, relation_type}].",
    ),
    ("get_node", nodes.get_node, READ, "Get one node by id."),
    (
        "update_node",
        nodes.update_node,
        WRITE,
        "Update a node's text, source, metadata, status, ttl_days/expires_at or entity_type. "
        "versioning=true keeps the whole previous version in the history.",
    ),
    (
        "delete_node",
        nodes.delete_node,
        DESTROY,
        "Delete a node and its edges (an entity's triplets too). Audited: history stays.",
    ),
    (
        "get_node_change_history",
        nodes.get_node_change_history,
        READ,
        "A node's versions and changes, newest first.",
    ),
    (
        "search",
        search.search,
        READ,
        "Search facts and entities (lexical + semantic). node_types ['Fact','Entity']; status filter; "
        "include_outdated; similarity_threshold filters on cosine similarity.",
    ),
    (
        "find_similar",
        search.find_similar,
        READ,
        "Facts semantically similar to a fact, with the edges between them.",
    ),
    ("mark_outdated", nodes.mark_outdated, WRITE, "Mark a node outdated, with a reason."),
    (
        "create_triplet",
        triplets.create_triplet,
        WRITE,
        "Record subject-predicate-object between entities (names or ids; new names create entities). "
        "A new object for the same subject and predicate supersedes the old one. fact_id links a source fact.",
    ),
    (
        "search_triplets",
        triplets.search_triplets,
        READ,
        "Current triplets matching subject, predicate and/or object_value.",
    ),
    (
        "create_relation",
        relations.create_relation,
        WRITE,
        "Typed edge from_id -> to_id (e.g. RELATED_TO, FOLLOWS_FROM, CONTRADICTS, MENTIONS_ENTITY, DESCRIBES, "
        "REFERENCES). properties: edge metadata.",
    ),
    (
        "delete_relation",
        relations.delete_relation,
        DESTROY,
        "Delete edges from_id -> to_id (one relation_type if given).",
    ),
    (
        "get_context",
        relations.get_context,
        READ,
        "Subgraph around a node: nodes and edges up to depth, max_nodes.",
    ),
    ("get_trace", relations.get_trace, READ, "Up to max_paths paths between two nodes, shortest first."),
    (
        "create_summary_fact",
        relations.create_summary_fact,
        WRITE,
        "Create a Fact summarising fact_ids, with SUMMARIZES edges to each.",
    ),
    ("test_connection", health.test_connection, READ, "Check the store is reachable."),
    ("get_stats", health.get_stats, READ, "Counts of facts, entities, relations and vectors."),
    (
        "health_check",
        health.health_check,
        READ,
        "Store, embeddings and vector index health, with cache statistics.",
    ),
]


WRITES = frozenset(name for name, _fn, hints, _doc in TOOLS if not hints.read_only_hint)


def _signature(fn: Callable[..., JsonObject]) -> inspect.Signature:
    """The domain function's keyword parameters without ``g``, with evaluated annotations."""
    hints = typing.get_type_hints(fn)
    params = [
        p.replace(annotation=hints[p.name], kind=inspect.Parameter.KEYWORD_ONLY)
        for p in inspect.signature(fn).parameters.values()
        if p.name != "g"
    ]
    return inspect.Signature(params, return_annotation=JsonObject)


def _tool(g: GraphMemory, name: str, fn: Callable[..., JsonObject]) -> Callable[..., object]:
    def call(kwargs: JsonObject) -> JsonObject:
        if g.config_error is not None and name not in ("test_connection", "health_check"):
            return fail(g.config_error, VALIDATION)
        try:
            for arg, value in kwargs.items():
                check_input(value, arg)
            found = Redactions()
            if name in WRITES:  # every text a write keeps passes the one secret scan (redaction.py)
                kwargs = redact_value(kwargs, found)
            # short ids (ids.py) become full ones in the caller's namespace, before the tool runs
            (kwargs,) = expand_short_ids(lambda: g.read(g.namespace(_owner(kwargs))), kwargs)
            envelope = fn(g, **kwargs)
            return found.report(envelope) if envelope.get("success") is not False else envelope
        except Exception as exc:  # the tool boundary: nothing escapes as a traceback
            return from_exception(exc, name)

    async def tool(**kwargs: object) -> CallToolResult:
        return envelope_result(await anyio.to_thread.run_sync(call, kwargs))

    tool.__name__ = name
    tool.__signature__ = _signature(fn)  # type: ignore[attr-defined]
    return tool


def _owner(kwargs: JsonObject) -> str | None:
    """The ``owner_id`` argument; the tool's pydantic model has checked it is a string or absent."""
    owner = kwargs.get("owner_id")
    return owner if isinstance(owner, str) else None


def envelope_result(envelope: JsonObject) -> CallToolResult:
    """The MCP result of a graph-toolset envelope: an error result (``isError``) when it failed."""
    result = tool_result(envelope)
    if envelope.get("success") is False:
        result.is_error = True
    return result


def compact_schema(schema: JsonObject) -> JsonObject:
    """The same JSON schema in fewer characters: no generated titles, ``X | None`` as a type
    list, no ``default: null``. Eighteen tools must fit an agent's context (docs/graph-toolset.md)."""
    schema.pop("title", None)
    properties = schema.get("properties", {})
    for prop in properties.values() if isinstance(properties, dict) else ():
        if isinstance(prop, dict):
            _compact_property(prop)
    return schema


def _compact_property(prop: JsonObject) -> None:
    prop.pop("title", None)
    options = prop.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = next(o for o in options if o != {"type": "null"})
        if isinstance(other, dict) and isinstance(other.get("type"), str):
            del prop["anyOf"]
            prop.update(other)
            prop["type"] = [other["type"], "null"]
    if "default" in prop and prop["default"] is None:
        del prop["default"]


def register_graph_tools(server: MCPServer, g: GraphMemory) -> None:
    """Add the tools with the SDK's public ``add_tool``. On a ``MemoryMCPServer`` (mcp/memory_server.py)
    they also answer argument errors in their envelope, and tools/list publishes their schemas
    compacted (argument validation still uses each tool's pydantic model: no behaviour changes)."""
    envelope_tools = getattr(server, "envelope_tools", None)
    published = getattr(server, "published_schemas", None)
    for name, fn, hints, description in TOOLS:
        if envelope_tools is not None:
            envelope_tools.add(name)
        if published is not None:
            published[name] = compact_schema
        doc = description + ("" if name in ("test_connection", "health_check") else OWNER)
        server.add_tool(_tool(g, name, fn), name=name, description=doc, annotations=hints)
