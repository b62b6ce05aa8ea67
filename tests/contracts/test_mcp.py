"""The spec-003 modes through the MCP SDK's in-process client: memory_query ``package`` and
memory_remember ``graph_snapshot``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client
from mcp.types import TextResourceContents

from memory_substrate import Memory
from memory_substrate.contracts.loader import schema
from memory_substrate.mcp.server import build_server
from tests.contracts.documents import load_object
from tests.helpers import ToolFailed, call, conversation, knowledge

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "memory"


def _selection(nodes: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "schema_version": "markitect.memory.selection.v1",
        "id": "sel",
        "title": "DB facts",
        "nodes": nodes,
        **extra,
    }


async def test_agent_packs_a_selection_of_its_memory(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        conv = await call(
            c, "memory_ingest", "conversation", conversation(["We run PostgreSQL 16.", "Agreed."])
        )
        src = conv["source_id"]
        fact = await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(
                title="Prod runs PostgreSQL 16",
                summary="Production database is PostgreSQL 16.",
                evidence_refs=[{"source_id": src, "segment_id": "seg-1"}],
            ),
        )
        selection = _selection([fact["object_id"], f"{src}#seg-1"])
        first = await call(c, "memory_query", "package", {"selection": selection}, {"include_history": True})
        again = await call(c, "memory_query", "package", {"selection": selection}, {"include_history": True})
        assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
        package = first["package"]
        jsonschema.Draft7Validator(schema("memory-substrate.context-package.v1")).validate(package)
        assert (
            first["result_type"] == "package_result"
            and package["schema_version"] == "memory-substrate.context-package.v1"
        )
        items = package["items"]
        assert [i["id"] for i in items if i["item_type"] == "node"] == [fact["object_id"], f"{src}#seg-1"]
        assert items[0]["kind"] == "source_fact" and items[1]["kind"] == "turn"
        assert [i["kind"] for i in items if i["item_type"] == "event"] == ["recorded"]
        edges = package["metadata"]["edges"]
        assert edges == []  # the evidence relation points at the source, which is not selected
        with_source = await call(
            c, "memory_query", "package", {"selection": _selection([fact["object_id"], src])}, {}
        )
        implied = with_source["package"]["metadata"]["edges"]
        assert [(e["kind"], e["origin"]) for e in implied] == [("derived_from", "implied")]
        assert package["provenance"]["graph"]["ref"] == f"memory://{memory.namespace}"

        limited = await call(
            c,
            "memory_query",
            "package",
            {
                "selection": {
                    **selection,
                    "profile": {
                        "schema_version": "markitect.memory.profile.v1",
                        "id": "p",
                        "memory_kinds": ["knowledge", "package"],
                        "stores": {"knowledge": "this", "package": "this"},
                        "activation": {"max_items": 1},
                    },
                }
            },
        )
        assert [i["id"] for i in limited["package"]["items"]] == [fact["object_id"]]
        assert limited["package"]["metadata"]["limits"] == {
            "max_items": 1,
            "max_tokens": None,
            "from": "profile",
        }
        # compact items (the default) leave out bulky metadata such as the adapter record of a source
        source_sel = _selection([src])
        compact = (await call(c, "memory_query", "package", {"selection": source_sel}))["package"]["items"][0]
        full = (await call(c, "memory_query", "package", {"selection": source_sel}, {"detail": "full"}))[
            "package"
        ]["items"][0]
        assert compact["attributes"] == {"object_type": "source", "object_kind": "conversation"}
        assert "adapter" in full["attributes"]["metadata"] and full["tokens"] > compact["tokens"]
        override = await call(c, "memory_query", "package", {"selection": selection}, {"max_tokens": 1})
        assert override["package"]["items"] == [] and len(override["package"]["metadata"]["omitted"]) == 2


async def test_package_errors_carry_diagnostics(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        with pytest.raises(ToolFailed) as err:
            await call(c, "memory_query", "package", {"selection": _selection(["know:nope"])})
        assert err.value.code == "memory_validation_error"
        assert [d["code"] for d in err.value.error["details"]["diagnostics"]] == ["selection_missing_node"]
        with pytest.raises(ToolFailed) as err:
            await call(
                c,
                "memory_query",
                "package",
                {"selection": _selection([], graph="examples/memory/decision-graph.yaml")},
            )
        assert "reads no files" in err.value.error["message"]
        with pytest.raises(ToolFailed) as err:
            await call(c, "memory_query", "package", {"selection": _selection(["x"])}, {"max_items": 0})
        assert err.value.code == "memory_validation_error"


async def test_agent_imports_a_snapshot_and_packs_it(memory: Memory) -> None:
    snapshot = load_object(EXAMPLES / "decision-graph.yaml")
    async with Client(build_server(memory)) as c:
        result = await call(
            c, "memory_remember", "graph_snapshot", {"snapshot": snapshot, "scope_refs": ["scope:arch"]}
        )
        assert result["status"] == "imported" and result["created"] == {
            "event": 3,
            "knowledge": 9,
            "work_item": 1,
        }
        decision = result["id_map"]["dec-boundary"]
        page = await call(c, "memory_query", "page", {"id": decision})
        assert page["object"]["status"] == "active"
        packed = await call(
            c,
            "memory_query",
            "package",
            {"selection": _selection([decision, result["id_map"]["claim-determinism"]])},
        )
        edges = packed["package"]["metadata"]["edges"]
        assert [(e["kind"], e["source"], e["target"]) for e in edges] == [
            ("supports", result["id_map"]["claim-determinism"], decision)
        ]
        # an inline graph works too, without touching the store
        inline = await call(
            c,
            "memory_query",
            "package",
            {
                "selection": load_object(EXAMPLES / "decision-graph-selection.yaml")
                | {"graph": snapshot, "profile": load_object(EXAMPLES / "memory-profile.local.yaml")}
            },
        )
        assert inline["package"]["provenance"]["graph"]["ref"] == "inline"
        with pytest.raises(ToolFailed) as err:
            await call(
                c,
                "memory_remember",
                "graph_snapshot",
                {"snapshot": load_object(EXAMPLES / "invalid-memory-graph.yaml")},
            )
        assert err.value.code == "memory_validation_error"
        assert "unknown_node_kind" in {d["code"] for d in err.value.error["details"]["diagnostics"]}


async def test_api_summary_documents_the_modes(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        resource = (await c.read_resource("memory://mcp-api-summary")).contents[0]
        assert isinstance(resource, TextResourceContents)
        summary = resource.text
        assert (
            "package" in summary
            and "graph_snapshot" in summary
            and "markitect.memory.selection.v1" in summary
        )
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert "package" in (tools["memory_query"].description or "")
        assert "graph_snapshot" in (tools["memory_remember"].description or "")
