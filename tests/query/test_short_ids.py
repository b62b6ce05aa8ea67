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
    obj = MemoryObject(
        id=twin,
        object_type="source",
        kind="conversation",
        status="active",
        title="another chat",
        created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-01T00:00:00+00:00",
    )
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
        await call(
            c,
            "memory_ingest",
            "conversation",
            conversation(
                ["Deploy key rotation: rotate the deploy key, then the deploy key rotation is logged."],
                "rotation",
            ),
        )
        other = (await call(c, "memory_query", "search", {"query": "deploy key rotation"}))["items"][0]["id"]
        found = await call(c, "memory_query", "search", {"query": f"deploy key rotation {sid}"})
        assert found["items"][0]["id"] == full != other
        # an evidence ref given by its short id is checked and stored with the full id
        written = await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(
                title="Deploy key rotated",
                summary="The deploy key rotation finished on Friday.",
                evidence_refs=[{"source_id": sid, "segment_id": "seg-1"}],
            ),
        )
        fact = (await call(c, "memory_query", "page", {"id": written["object_id"]}, {"detail": "full"}))[
            "object"
        ]
        assert [e["source_id"] for e in fact["evidence_refs"]] == [full]
        # the fact's id and its evidence are short in the package too, and resolve back
        out = await call(
            c, "memory_query", "context", {"task": TASK, "format": "xml"}, {"include_unverified": True}
        )
        know = ET.fromstring(out["content"]).find("*[@id]")
        assert know is not None and know.attrib["id"] == short(written["object_id"])
        assert know.attrib["evidence"] == f"{sid}#seg-1"
        # the trace of an episode (its extraction), the graph toolset, the memory_maintain tools
        await call(
            c,
            "memory_remember",
            "extraction",
            {
                "episode_id": sid,
                "reason": "test",
                "memory_source": "agent_inferred",
                "scope_refs": ["scope:project"],
                "entities": [{"name": "deploy key", "type": "technology"}],
            },
        )
        trace = (await call(c, "memory_query", "trace", {"id": sid}))["trace"]
        assert trace["kind"] == "extraction" and trace["subject_id"] == full
        node = await c.call_tool("get_node", {"node_id": short(written["object_id"])})
        assert node.structured_content and node.structured_content["success"] is True
        assert node.structured_content["node"]["id"] == written["object_id"]
        archived = await call(c, "memory_maintain", "archive_source", {"source_id": sid}, {"apply": True})
        assert (await call(c, "memory_query", "page", {"id": full}))["object"]["status"] == "archived", (
            archived
        )


async def test_a_shared_suffix_lengthens_the_shown_id_and_an_ambiguous_one_is_refused(memory: Memory) -> None:
    async with Client(build_server(memory, "all")) as c:
        full = (await call(c, "memory_ingest", "conversation", conversation(TURNS, "deploy")))["source_id"]
        twin = _twin(memory, full)
        for fmt in ("xml", "json"):
            shown, _ = await _shown(c, fmt)
            assert shown == [f"src:{full[-7:]}"], fmt  # one digit more than the twin shares
        assert (await call(c, "memory_query", "page", {"id": shown[0]}))["object"]["id"] == full
        for tool, mode, data in (
            ("memory_query", "page", {"id": short(full)}),
            ("memory_query", "expand", {"id": f"{short(full)}#seg-1"}),
            (
                "memory_remember",
                "knowledge",
                knowledge(evidence_refs=[{"source_id": short(full), "segment_id": "seg-1"}]),
            ),
        ):
            with pytest.raises(ToolFailed) as failed:
                await call(c, tool, mode, data)
            assert failed.value.code == "memory_ambiguous_id", (tool, mode)
            assert failed.value.error["details"]["matches"] == sorted([full, twin])
        graph = await c.call_tool("get_context", {"node_id": short(full)})
        assert graph.structured_content and graph.structured_content["success"] is False
        assert graph.structured_content["error_code"] == "memory_validation_error"
        assert full in graph.structured_content["error"] and twin in graph.structured_content["error"]
        # nothing was written by the refused remember
        assert (await call(c, "memory_query", "recent", {}, {"filters": {"object_types": ["knowledge"]}}))[
            "count"
        ] == 0


async def test_short_ids_never_reach_another_namespace(make_settings: Any, namespace: str) -> None:
    mine = Memory(make_settings(), namespace=namespace)
    other = mine.for_namespace(namespace + "-b")
    try:
        async with Client(build_server(mine)) as a, Client(build_server(other)) as b:
            full = (await call(a, "memory_ingest", "conversation", conversation(TURNS, "deploy")))[
                "source_id"
            ]
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
                await call(
                    b,
                    "memory_remember",
                    "knowledge",
                    knowledge(evidence_refs=[{"source_id": seven, "segment_id": "seg-1"}]),
                )
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
            a: "know:0abc123",
            b: "know:1abc123",
            unique: "know:777777",
            "src:01a200000000000777777": "src:777777",
        }
        assert resolve(s, [exact, "know:0abc123#seg-2", "know:777777", "know:999999"]) == {
            "know:0abc123#seg-2": a + "#seg-2",
            "know:777777": unique,
        }


def test_every_input_field_named_like_an_object_id_is_expanded() -> None:
    """Each field of a tool's input models named ``id``/``ids``/``*_id``/``*_ids``/``*_refs`` is
    either expanded (``ID_FIELDS``: merge_entities' entity ids were missed once) or named as
    holding something else (``NOT_OBJECT_IDS``)."""
    import importlib
    import inspect
    import pkgutil

    from pydantic import BaseModel

    import memory_substrate
    from memory_substrate.ids import ID_FIELDS, NOT_OBJECT_IDS

    missing = set()
    for info in pkgutil.walk_packages(memory_substrate.__path__, "memory_substrate."):
        mod = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if issubclass(cls, BaseModel) and cls.__module__ == mod.__name__:
                missing |= {
                    f"{cls.__name__}.{f}"
                    for f in cls.model_fields
                    if (f in ("id", "ids") or f.endswith(("_id", "_ids", "_refs")))
                    and f not in ID_FIELDS | NOT_OBJECT_IDS | {"evidence_refs"}
                }
    assert not missing, missing


def test_many_short_values_resolve_in_linear_work(memory: Memory) -> None:
    """A request of many short-looking values, each with its own #fragment, over a namespace of
    many objects: each value is matched against the objects sharing its last digits only (it was
    compared with every object found: 8,000 values over 8,000 objects took ~20 s)."""
    from memory_substrate import ids
    from tests.storage.builders import doc, make_obj

    objs = [f"know:01a2000000{n:05x}{n:06x}" for n in range(1, 1_500)]
    with memory.store.write(memory.namespace) as s:
        for oid in objs:
            s.insert_object(make_obj(oid), doc(oid), None)
    compared = 0
    real = str.endswith

    class Counting(str):
        def endswith(self, suffix: Any, *args: Any) -> bool:
            nonlocal compared
            compared += 1
            return real(self, suffix, *args)

    with memory.store.read(memory.namespace) as s:
        inner = s.ids_by_tail
        s.ids_by_tail = lambda tails: [Counting(i) for i in inner(tails)]  # type: ignore[method-assign]
        refs = [f"know:{n:06x}#k{k}" for n in range(1, 1_500) for k in range(3)]
        out = ids.resolve(s, refs)
    assert len(out) == len(refs) and out["know:000005#k2"] == objs[4] + "#k2"
    assert compared <= 2 * len(refs), compared  # not len(refs) x len(objs)


def test_merge_entities_takes_short_ids(memory: Memory) -> None:
    ents = ["ent:01a2000000000000aaaaaa", "ent:01a2000000000001bbbbbb"]
    with memory.store.write(memory.namespace) as s:
        for oid, name in zip(ents, ["Alice", "Alice B"], strict=True):
            obj = MemoryObject(
                id=oid,
                object_type="entity",
                kind="person",
                status="active",
                title=name,
                created_at="2026-01-01T00:00:00+00:00",
                updated_at="2026-01-01T00:00:00+00:00",
            )
            s.insert_object(obj, search_doc(obj), None)
    out = memory.maintain(
        "merge_entities",
        {"source_entity_id": "ent:aaaaaa", "target_entity_id": "ent:bbbbbb", "reason": "same person"},
    )
    assert ents[0] in json.dumps(out) and ents[1] in json.dumps(out)


def test_input_nested_too_deeply_is_a_validation_error(memory: Memory) -> None:
    from memory_substrate.errors import ValidationError

    deep: dict[str, Any] = {"ids": ["src:aaaaaa"]}
    for _ in range(3_000):
        deep = {"ids": [deep]}
    with pytest.raises(ValidationError, match="nested too deeply"):
        memory.query("page", deep)


def test_an_expired_object_makes_no_short_id_ambiguous(memory: Memory) -> None:
    from memory_substrate.expiry import TTL_KEY
    from memory_substrate.ids import resolve, short_forms
    from tests.storage.builders import doc, make_obj

    live, gone = "know:01a200000000000abc123", "know:01a200000000001abc123"
    with memory.store.write(memory.namespace) as s:
        s.insert_object(make_obj(live), doc(live), None)
        s.insert_object(make_obj(gone, metadata={"expires_at": "2020-01-01T00:00:00+00:00"}), doc(gone), None)
        s.set_object_keys(gone, [TTL_KEY])
    with memory.runtime.read() as s:
        assert short_forms(s, [live]) == {live: "know:abc123"}
        assert resolve(s, ["know:abc123"]) == {"know:abc123": live}
    with memory.store.read(memory.namespace) as raw:  # the raw store still holds both
        assert sorted(raw.ids_by_tail(["abc123"])) == [live, gone]
