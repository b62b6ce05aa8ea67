"""Round trips are lossless: a namespace written through every surface (the four tools, the 18
graph tools, agent extraction and model extraction through the loopback stub model, both importers)
with generated content exports as graph.v1, imports into
a fresh namespace and exports again byte-identically, with the same counts by node kind, object
type and relation type. The same for the JSON Lines backup. Both backends; Hypothesis with a fixed
seed (a fresh random run only under MEMORY_SUBSTRATE_SOAK=1).
"""

from __future__ import annotations

import collections
import io
import json
import re
import uuid
from pathlib import Path
from typing import Any

import anyio.from_thread
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client

from memory_substrate import Memory
from memory_substrate.contracts.results import SnapshotReport
from memory_substrate.contracts.snapshot_export import export_snapshot
from memory_substrate.importers.markdown_notes import import_markdown
from memory_substrate.importers.mcp_memory import import_mcp_memory
from memory_substrate.mcp.server import build_server
from memory_substrate.transfer import export_namespace, import_namespace
from tests.graph.stub_llm import Reply, stub_llm
from tests.graphmem.conftest import ok
from tests.helpers import call, conversation, knowledge
from tests.reliability.common import SOAK, scale

FIXTURES = Path(__file__).resolve().parents[1] / "importers" / "fixtures"
EDGE_TYPES = [
    "SIMILAR_TO",
    "RELATED_TO",
    "SUMMARIZES",
    "MENTIONS_ENTITY",
    "FOLLOWS_FROM",
    "CONTRADICTS",
    "DESCRIBES",
    "REFERENCES",
    "supports",
    "depends_on",
    "Custom_Link_9",
]
WORDS = st.sampled_from(
    [
        "ledger",
        "Kafka",
        "rollback",
        "Berlin",
        "Acme",
        "review",
        "deploy",
        "quota",
        "Ω-test",
        "naïve",
        "日本",
        "release",
        "cache",
        "billing",
    ]
)
TEXT = st.lists(WORDS, min_size=2, max_size=8).map(" ".join)
NAMES = st.sampled_from(["Alice", "Bob", "Acme", "Globex", "Ledger", "Kafka"])


@st.composite
def plans(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "turns": draw(st.lists(TEXT, min_size=1, max_size=4)),
        "knowledge": draw(st.lists(TEXT, min_size=0, max_size=3)),
        "facts": draw(st.lists(TEXT, min_size=2, max_size=5, unique=True)),
        "edges": draw(
            st.lists(
                st.tuples(
                    st.integers(0, 4),
                    st.integers(0, 4),
                    st.sampled_from(EDGE_TYPES),
                    st.dictionaries(st.sampled_from(["w", "note"]), TEXT, max_size=1),
                ),
                max_size=6,
            )
        ),
        "triplets": draw(
            st.lists(st.tuples(NAMES, st.sampled_from(["WORKS_AT", "owns", "uses"]), NAMES), max_size=3)
        ),
        "outdated": draw(st.booleans()),
        "summary": draw(st.booleans()),
        "extraction": draw(st.booleans()),
        "model_extraction": draw(st.booleans()),
        "mcp_import": draw(st.booleans()),
        "markdown_import": draw(st.booleans()),
    }


# Everything at once, besides what Hypothesis draws: every edge type, every surface.
FULL = {
    "turns": ["We deploy the ledger on Fridays.", "Dana works at the Berlin office."],
    "knowledge": ["Rollbacks need two approvals."],
    "facts": ["Kafka carries billing events", "The ledger runs in Berlin", "Acme reviews quotas weekly"],
    "edges": [(i, i + 1, t, {"w": "edge metadata"} if i % 2 else {}) for i, t in enumerate(EDGE_TYPES)],
    "triplets": [("Alice", "WORKS_AT", "Acme"), ("Bob", "owns", "Ledger")],
    "outdated": True,
    "summary": True,
    "extraction": True,
    "model_extraction": True,
    "mcp_import": True,
    "markdown_import": True,
}


def _model_answer(body: dict[str, Any]) -> Reply:
    """The stub model: one service entity per window, running on a cluster, citing the first turn shown."""
    seg = re.search(r"^(seg-\d+) ", body["messages"][1]["content"], re.M)
    return Reply(
        content=json.dumps(
            {
                "entities": [
                    {"name": "Ledger Service", "type": "service", "aliases": ["ledger svc"]},
                    {"name": "Berlin Cluster", "type": "environment", "aliases": []},
                ],
                "facts": [
                    {
                        "subject": "Ledger Service",
                        "predicate": "runs_on",
                        "object": "Berlin Cluster",
                        "segment_ids": [seg.group(1)] if seg else [],
                    }
                ],
                "procedures": [
                    {
                        "kind": "workflow",
                        "title": "Roll back the ledger",
                        "text": "Stop writes, then redeploy.",
                        "segment_ids": [seg.group(1)] if seg else [],
                    }
                ],
            }
        )
    )


async def _write(mem: Memory, plan: dict[str, Any], tmp: Path) -> None:
    async with Client(build_server(mem, "all")) as c:
        ep = await call(
            c,
            "memory_ingest",
            "conversation",
            conversation(plan["turns"], title=f"chat {uuid.uuid4().hex[:6]}"),
        )
        for text in plan["knowledge"]:
            await call(c, "memory_remember", "knowledge", knowledge(title=text[:60], summary=text))
        facts = [
            (await ok(c, "create_node", text=t, auto_link=True, semantic_threshold=0.5))["node"]["id"]
            for t in plan["facts"]
        ]
        entity = (
            await ok(c, "create_node", text="Ledger", node_type="Entity", metadata={"type": "service"})
        )["node"]["id"]
        ends = [*facts, entity]
        for a, b, rel_type, props in plan["edges"]:
            src, dst = ends[a % len(ends)], ends[b % len(ends)]
            if src != dst:
                await ok(
                    c, "create_relation", from_id=src, to_id=dst, relation_type=rel_type, properties=props
                )
        for subject, predicate, obj in plan["triplets"]:
            if subject != obj:
                await ok(
                    c,
                    "create_triplet",
                    subject=subject,
                    predicate=predicate,
                    object_value=obj,
                    fact_id=facts[0],
                )
        if plan["summary"]:
            await ok(c, "create_summary_fact", fact_ids=facts[:2], summary_text="A summary of two facts")
        if plan["outdated"]:
            await ok(c, "mark_outdated", fact_id=facts[-1], reason="superseded by review")
        await ok(c, "update_node", node_id=facts[0], metadata={"reviewed": True}, versioning=True)
        if plan["extraction"]:
            await call(
                c,
                "memory_remember",
                "extraction",
                {
                    "episode_id": ep["source_id"],
                    "reason": "round trip",
                    "memory_source": "agent_inferred",
                    "scope_refs": ["scope:project"],
                    "entities": [
                        {"name": "Berlin Office", "type": "organization"},
                        {"name": "Dana Smith", "type": "person"},
                    ],
                    "facts": [
                        {
                            "subject": "Dana Smith",
                            "predicate": "works_at",
                            "object": "Berlin Office",
                            "segment_ids": ["seg-1"],
                        }
                    ],
                },
            )
    if plan["model_extraction"]:  # the configured model: the loopback stub
        done = mem.maintain("extract", {"episode_ids": [ep["source_id"]]}, {"apply": True})
        assert done["counts"] == {"done": 1, "partial": 0, "retrying": 0, "failed": 0}, done
    if plan["mcp_import"]:
        import_mcp_memory(mem, FIXTURES / "mcp_memory.jsonl")
    if plan["markdown_import"]:
        import_markdown(mem, FIXTURES / "vault")


def _graph_export(mem: Memory) -> tuple[str, SnapshotReport]:
    with mem.store.read(mem.namespace) as session:
        snapshot, report = export_snapshot(session, snapshot_id="round-trip")
    snapshot.pop("title")  # names the namespace
    return json.dumps(snapshot, ensure_ascii=False, sort_keys=True), report


def _counts(snapshot_text: str) -> dict[str, collections.Counter[str]]:
    snap = json.loads(snapshot_text)
    return {
        "node_kinds": collections.Counter(n["kind"] for n in snap["nodes"]),
        "object_types": collections.Counter(
            f"{n['attributes'].get('object_type')}/{n['attributes'].get('object_kind')}"
            for n in snap["nodes"]
        ),
        "relation_types": collections.Counter(
            e["attributes"].get("rel_type", e["kind"]) for e in snap["edges"]
        ),
        "event_kinds": collections.Counter(e["kind"] for e in snap["events"]),
    }


def _relation_types(mem: Memory) -> collections.Counter[str]:
    with mem.store.read(mem.namespace) as session:
        return collections.Counter(r.rel_type for r in session.list_relations(limit=1_000_000))


def test_graph_v1_and_jsonl_round_trips_are_lossless(make_settings: Any, tmp_path: Path) -> None:
    with stub_llm() as stub:
        stub.respond = _model_answer
        _round_trips(
            Memory(make_settings(embedder="static", llm_base_url=stub.url, llm_model="stub-model")), tmp_path
        )


def _round_trips(mem: Memory, tmp_path: Path) -> None:
    examples = scale(8, 60)
    seen = collections.Counter[str]()

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=not SOAK,
        suppress_health_check=list(HealthCheck),
    )
    @given(plans())
    @example(FULL)
    def check(plan: dict[str, Any]) -> None:
        ns = f"rt-{uuid.uuid4().hex[:10]}"
        source = mem.for_namespace(ns)
        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(_write, source, plan, tmp_path)
        first, report = _graph_export(source)
        assert report["left_out"]["relations_with_an_end_outside"] == 0
        stored = _relation_types(source)
        seen.update(stored)

        target = mem.for_namespace(ns + "-g")
        result = target.remember("graph_snapshot", {"snapshot": json.loads(first) | {"title": "t"}})
        assert result["edges_not_imported"] == [] and result["nodes_not_imported"] == [], result
        second, _ = _graph_export(target)
        assert _counts(second) == _counts(first)
        assert second == first, "graph.v1 export -> import -> export is not byte-identical"
        assert _relation_types(target) == stored  # every relation type the store held came back

        backup = io.StringIO()
        summary = export_namespace(mem.for_namespace(ns).runtime, backup, vectors=True)
        imported = import_namespace(mem.runtime, io.StringIO(backup.getvalue()), namespace=ns + "-j")
        assert imported["namespace"] == ns + "-j"
        again = io.StringIO()
        summary2 = export_namespace(mem.for_namespace(ns + "-j").runtime, again, vectors=True)
        assert (
            summary2["counts"] == summary["counts"]
            and summary2["content_sha256"] == summary["content_sha256"]
        )
        assert _relation_types(mem.for_namespace(ns + "-j")) == stored

    try:
        check()
    finally:
        mem.close()
    # The namespaces held every type of edge the graph tools write, and relations derived from
    # object fields (about, evidence, predicates of extracted and imported claims) besides.
    assert set(EDGE_TYPES) <= set(seen), seen
    assert {"about", "evidence", "runs_on", "works_at"} <= set(seen), seen  # agent and model extraction
