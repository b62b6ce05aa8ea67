"""Short ids as users meet them (ids.py, docs/context-compiler.md "Render"), through the MCP
server on SQLite and PostgreSQL: a context package shows ``src:20b56d``; every tool that takes an
id resolves it inside the caller's namespace; where another object of the type shares the digits
the package shows more of them, and a short id that names two objects is refused with
``memory_ambiguous_id``, never resolved to one of them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.indexing import search_doc
from memory_substrate.mcp.server import build_server
from memory_substrate.models import MemoryObject
from tests.helpers import ToolFailed, call, conversation, json_episodes, knowledge, short, xml_episodes

pytestmark = pytest.mark.anyio

TASK = "When did the deploy key rotation finish?"
TURNS = ["The deploy key rotation finished on Friday.", "Good, the gateway picked up the new deploy key."]


async def _shown(c: Client, fmt: str = "xml") -> tuple[list[str], str]:
    """The episode ids a package shows, and its content."""
    out = await call(c, "memory_query", "context", {"task": TASK, "format": fmt})
    if fmt == "xml":
        return [sid for sid, _, _ in xml_episodes(ET.fromstring(out["content"]))], out["content"]
    return [sid for sid, _, _ in json_episodes(json.loads(out["content"])["memory_context"])], out["content"]


def _twin(memory: Memory, of: str, digits: int = 6) -> str:
    """Write (through the storage API) a source whose id ends with the same ``digits`` hex digits
    as ``of`` and differs just before them: what a random collision looks like."""
    prefix, rest = of.split(":", 1)
    before = "0" if rest[-digits - 1] != "0" else "1"
    twin = f"{prefix}:{'f' * (len(rest) - digits - 1)}{before}{rest[-digits:]}"
    obj = MemoryObject(id=twin, object_type="source", kind="conversation", status="active", title="another chat",
                       created_at="2026-01-01T00:00:00+00:00", updated_at="2026-01-01T00:00:00+00:00")
    with memory.store.write(memory.namespace) as s:
        s.insert_object(obj, search_doc(obj), None)
    return twin


async def test_a_short_id_from_the_package_works_in_every_tool_and_is_stored_whole(memory: Memory) -> None:
    async with Client(build_server(memory, "all")) as c:
        full = (await call(c, "memory_ingest", "conversation", conversation(TURNS, "deploy")))["source_id"]
        for fmt in ("xml", "json"):
            shown, content = await _shown(c, fmt)
            assert shown == [short(full)] and full not in content, fmt
        sid = short(full)
        # page and expand, of the episode and of a cited turn (EPISODE_ID#seg-N)
        assert (await call(c, "memory_query", "page", {"id": sid}))["object"]["id"] == full
        turn = await call(c, "memory_query", "page", {"id": f"{sid}#seg-2"})
        assert turn["source"]["id"] == full and turn["segment"]["text"] == TURNS[1]
        assert (await call(c, "memory_query", "expand", {"id": sid}))["object"]["id"] == full
        assert (await call(c, "memory_query", "expand", {"id": f"{sid}#seg-1"}))["object"]["id"] == full
        # an id stated in a search query, short or whole, brings its object first
        await call(c, "memory_ingest", "conversation", conversation(
            ["Deploy key rotation: rotate the deploy key, then the deploy key rotation is logged."], "rotation"))
        other = (await call(c, "memory_query", "search", {"query": "deploy key rotation"}))["items"][0]["id"]
        found = await call(c, "memory_query", "search", {"query": f"deploy key rotation {sid}"})
        assert found["items"][0]["id"] == full != other
        # an evidence ref given by its short id is checked and stored with the full id
        written = await call(c, "memory_remember", "knowledge", knowledge(
            title="Deploy key rotated", summary="The deploy key rotation finished on Friday.",
            evidence_refs=[{"source_id": sid, "segment_id": "seg-1"}]))
        fact = (await call(c, "memory_query", "page", {"id": written["object_id"]}, {"detail": "full"}))["object"]
        assert [e["source_id"] for e in fact["evidence_refs"]] == [full]
        # the fact's id and its evidence are short in the package too, and resolve back
        out = await call(c, "memory_query", "context", {"task": TASK, "format": "xml"}, {"include_unverified": True})
        know = ET.fromstring(out["content"]).find("*[@id]")
        assert know is not None and know.attrib["id"] == short(written["object_id"])
        assert know.attrib["evidence"] == f"{sid}#seg-1"
        # the trace of an episode (its extraction), the graph toolset, the memory_maintain tools
        await call(c, "memory_remember", "extraction", {
            "episode_id": sid, "reason": "test", "memory_source": "agent_inferred", "scope_refs": ["scope:project"],
            "entities": [{"name": "deploy key", "type": "technology"}]})
        trace = (await call(c, "memory_query", "trace", {"id": sid}))["trace"]
        assert trace["kind"] == "extraction" and trace["subject_id"] == full
        node = await c.call_tool("get_node", {"node_id": short(written["object_id"])})
        assert node.structured_content and node.structured_content["success"] is True
        assert node.structured_content["node"]["id"] == written["object_id"]
        archived = await call(c, "memory_maintain", "archive_source", {"source_id": sid}, {"apply": True})
        assert (await call(c, "memory_query", "page", {"id": full}))["object"]["status"] == "archived", archived


async def test_a_shared_suffix_lengthens_the_shown_id_and_an_ambiguous_one_is_refused(memory: Memory) -> None:
    async with Client(build_server(memory, "all")) as c:
        full = (await call(c, "memory_ingest", "conversation", conversation(TURNS, "deploy")))["source_id"]
        twin = _twin(memory, full)
        for fmt in ("xml", "json"):
            shown, _ = await _shown(c, fmt)
            assert shown == [f"src:{full[-7:]}"], fmt  # one digit more than the twin shares
        assert (await call(c, "memory_query", "page", {"id": shown[0]}))["object"]["id"] == full
        for tool, mode, data in (("memory_query", "page", {"id": short(full)}),
                                 ("memory_query", "expand", {"id": f"{short(full)}#seg-1"}),
                                 ("memory_remember", "knowledge", knowledge(
                                     evidence_refs=[{"source_id": short(full), "segment_id": "seg-1"}]))):
            with pytest.raises(ToolFailed) as failed:
                await call(c, tool, mode, data)
            assert failed.value.code == "memory_ambiguous_id", (tool, mode)
            assert failed.value.error["details"]["matches"] == sorted([full, twin])
        graph = await c.call_tool("get_context", {"node_id": short(full)})
        assert graph.structured_content and graph.structured_content["success"] is False
        assert graph.structured_content["error_code"] == "memory_validation_error"
        assert full in graph.structured_content["error"] and twin in graph.structured_content["error"]
        # nothing was written by the refused remember
        assert (await call(c, "memory_query", "recent", {}, {"filters": {"object_types": ["knowledge"]}}))["count"] == 0


async def test_short_ids_never_reach_another_namespace(make_settings: Any, namespace: str) -> None:
    mine = Memory(make_settings(), namespace=namespace)
    other = mine.for_namespace(namespace + "-b")
    try:
        async with Client(build_server(mine)) as a, Client(build_server(other)) as b:
            full = (await call(a, "memory_ingest", "conversation", conversation(TURNS, "deploy")))["source_id"]
            twin = _twin(other, full)  # the other namespace's object sharing the digits changes nothing here
            assert (await _shown(a))[0] == [short(full)]
            assert (await call(a, "memory_query", "page", {"id": short(full)}))["object"]["id"] == full
            # in b the 6 digits name b's own object, never a's; 7 digits name nothing there
            assert (await call(b, "memory_query", "page", {"id": short(full)}))["object"]["id"] == twin
            seven = f"src:{full[-7:]}"
            for ref in (seven, seven + "#seg-1"):
                with pytest.raises(ToolFailed) as failed:
                    await call(b, "memory_query", "page", {"id": ref})
                assert failed.value.code == "memory_not_found"
            with pytest.raises(ToolFailed) as failed:
                await call(b, "memory_remember", "knowledge",
                           knowledge(evidence_refs=[{"source_id": seven, "segment_id": "seg-1"}]))
            assert failed.value.code == "memory_evidence_error"
    finally:
        mine.close()


def test_an_exact_id_wins_and_an_id_without_a_unique_shorter_form_is_shown_whole(memory: Memory) -> None:
    from memory_substrate.ids import resolve, short_forms
    from tests.storage.builders import doc, make_obj

    a, b, exact = "know:01a200000000000abc123", "know:01a200000000001abc123", "know:abc123"
    unique, whole = "know:01a200000000000777777", "know:123"
    with memory.store.write(memory.namespace) as s:
        for oid in (a, b, exact, unique, whole):
            s.insert_object(make_obj(oid), doc(oid), None)
    with memory.store.read(memory.namespace) as s:
        # a and b differ only in the 8th digit from the end; "know:abc123" is itself an id
        assert short_forms(s, [a, b, unique, whole, "src:01a200000000000777777"]) == {
            a: "know:0abc123", b: "know:1abc123", unique: "know:777777", "src:01a200000000000777777": "src:777777"}
        assert resolve(s, [exact, "know:0abc123#seg-2", "know:777777", "know:999999"]) == {
            "know:0abc123#seg-2": a + "#seg-2", "know:777777": unique}
