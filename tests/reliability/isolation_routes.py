"""Every read, write and maintenance route, aimed from namespace B at namespace A's data.

``seed_a`` fills namespace A (a conversation, knowledge citing it, a candidate, a soft-duplicate
pair, a node-linked claim, a work item, an activity) and returns its ids and secret strings.
``run_routes`` calls each route over any MCP client bound to namespace B, once with A's ids and
once with ids that never existed, and returns the leaks it saw:

- a response that contains one of A's secret strings (titles, summaries, message text) or one
  of A's ids that B did not send itself;
- an existence oracle: A's id answered differently from an id that never existed.

Modes the table does not know (added later) are still tried with A's ids under the usual field
names, so new routes inherit the check.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp import Client

from memory_substrate import Memory

SECRET = "alphasecretqx"
_ID = re.compile(r"\b(?:src|know|act|work|node|ent|rel|patch|evt|job|trace):[A-Za-z0-9_\-]+")


def _knowledge(title: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "fact",
        "title": title,
        "summary": f"{title}: {SECRET} summary",
        "reason": "isolation test",
        "memory_source": "user_declared",
        "scope_refs": ["scope:isolation"],
        **extra,
    }


def seed_a(memory: Memory) -> dict[str, Any]:
    """Write A's data through the Python API; returns ids, secret strings and a state snapshot."""
    src = memory.ingest(
        "conversation",
        {
            "title": f"{SECRET} chat",
            "messages": [
                {"role": "user", "content": f"The {SECRET} launch code is 0000."},
                {"role": "assistant", "content": f"Noted, {SECRET}."},
            ],
        },
    )["source_id"]
    cited = memory.remember(
        "knowledge",
        _knowledge(
            f"{SECRET} cited",
            evidence_refs=[{"source_id": src, "segment_id": "seg-1"}],
            subject_refs=["node:alpha-node"],
            payload={"subject": "node:alpha-node", "predicate": "uses", "object": "node:alpha-db"},
        ),
    )["object_id"]
    candidate = memory.remember(
        "knowledge",
        _knowledge(
            f"{SECRET} candidate",
            memory_source="agent_inferred",
            evidence_refs=[{"source_id": src, "segment_id": "seg-2"}],
        ),
    )
    dup_a = memory.remember("knowledge", _knowledge(f"{SECRET} deploy runs on fridays"))["object_id"]
    dup_b = memory.remember("knowledge", _knowledge(f"{SECRET} deploy runs on friday"))["object_id"]
    work = memory.remember("work_item", {**_knowledge(f"{SECRET} work"), "kind": "task"})["object_id"]
    act = memory.remember("activity", {**_knowledge(f"{SECRET} activity"), "kind": "session"})["object_id"]
    graph = memory.query("graph", {"id": cited})
    relation_ids = [r["id"] for r in graph.get("relations", []) if isinstance(r, dict) and "id" in r]
    ids = {
        "source": src,
        "cited": cited,
        "candidate": candidate["object_id"],
        "dup_a": dup_a,
        "dup_b": dup_b,
        "work": work,
        "activity": act,
        "node": "node:alpha-node",
        "relations": relation_ids,
    }
    return {"ids": ids, "secrets": [SECRET], "snapshot": snapshot(memory)}


def snapshot(memory: Memory) -> dict[str, Any]:
    """What must not change in A while B acts: every object's state and the audit trail's length."""
    with memory.store.read(memory.namespace) as s:
        objects = {o.id: (o.status, o.version, o.updated_at, o.title) for o in s.list_objects(limit=10**6)}
        events = len(s.list_events(limit=10**6))
        segments = s.count_segments()
    return {"objects": objects, "events": events, "segments": segments}


def routes(
    a: dict[str, Any], fake: dict[str, Any], b_knowledge: str
) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(tool, mode, input_data, options) for each route, built from one set of ids."""
    i = a
    apply = {"apply": True}
    return [
        ("memory_query", "page", {"id": i["cited"]}, {}),
        ("memory_query", "page", {"id": i["source"]}, {}),
        ("memory_query", "page", {"id": i["node"]}, {}),
        ("memory_query", "expand", {"id": i["cited"]}, {}),
        ("memory_query", "expand", {"id": i["source"]}, {}),
        ("memory_query", "page", {"id": i["source"] + "#seg-1"}, {}),
        ("memory_query", "expand", {"id": i["source"] + "#seg-1"}, {}),
        ("memory_query", "graph", {"id": i["source"] + "#seg-1"}, {}),
        ("memory_query", "trace", {"id": i["source"] + "#seg-1"}, {}),
        ("memory_query", "graph", {"id": i["cited"]}, {}),
        ("memory_query", "graph", {"id": i["node"]}, {}),
        ("memory_query", "search", {"query": SECRET}, {}),
        ("memory_query", "search", {"query": SECRET}, {"result_unit": "segment"}),
        ("memory_query", "search", {"query": "launch code"}, {"filters": {"source_id": i["source"]}}),
        ("memory_query", "context", {"task": f"what is the {SECRET} launch code"}, {}),
        ("memory_query", "recent", {}, {"max_items": 200}),
        ("memory_remember", "knowledge", _b_claim([{"source_id": i["source"], "segment_id": "seg-1"}]), {}),
        ("memory_remember", "knowledge", _b_claim([{"source_id": i["source"]}]), {}),
        ("memory_remember", "promote", {"knowledge_id": i["candidate"], "reason": "b tries"}, {}),
        ("memory_remember", "contest", {"knowledge_id": i["cited"], "reason": "b tries"}, {}),
        (
            "memory_remember",
            "supersede",
            {"old_knowledge_id": i["cited"], "new_knowledge_id": b_knowledge, "reason": "b tries"},
            {},
        ),
        (
            "memory_remember",
            "supersede",
            {"old_knowledge_id": b_knowledge, "new_knowledge_id": i["cited"], "reason": "b tries"},
            {},
        ),
        (
            "memory_remember",
            "batch",
            {
                "entries": [
                    {"mode": "promote", "input_data": {"knowledge_id": i["candidate"], "reason": "b tries"}}
                ]
            },
            {},
        ),
        ("memory_maintain", "audit", {"object_id": i["cited"]}, {}),
        ("memory_maintain", "audit", {"object_id": i["source"]}, {}),
        ("memory_maintain", "archive_source", {"source_id": i["source"], "reason": "b tries"}, apply),
        (
            "memory_maintain",
            "resolve_duplicates",
            {
                "outcome": "supersede",
                "knowledge_ids": [i["dup_a"], i["dup_b"]],
                "canonical_knowledge_id": i["dup_a"],
                "reason": "b tries",
            },
            apply,
        ),
        (
            "memory_maintain",
            "resolve_duplicates",
            {"outcome": "keep_both", "knowledge_ids": [i["dup_a"], i["dup_b"]], "reason": "b tries"},
            apply,
        ),
        ("memory_maintain", "promote_candidates", {"min_confidence": 0.0, "min_evidence": 0}, apply),
        ("memory_maintain", "merge_duplicates", {}, apply),
        (
            "memory_maintain",
            "decay_stale",
            {"reference_time": "2999-01-01T00:00:00+00:00", "stale_after_days": 1},
            apply,
        ),
        ("memory_maintain", "cycle", {"reference_time": "2999-01-01T00:00:00+00:00"}, apply),
        ("memory_maintain", "report", {"min_confidence": 0.0, "min_evidence": 0}, {}),
        ("memory_maintain", "structure", {}, {}),
        ("memory_maintain", "repair", {}, apply),
        ("memory_maintain", "reindex", {}, apply),
    ]


def _b_claim(evidence: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "fact",
        "title": "b claim",
        "summary": "b cites evidence",
        "reason": "isolation test",
        "memory_source": "user_declared",
        "scope_refs": ["scope:b"],
        "evidence_refs": evidence,
    }


def fake_ids(a: dict[str, Any]) -> dict[str, Any]:
    """Ids of the same shapes as A's that exist nowhere."""
    counter = iter(range(10**6))

    def fake(value: str) -> str:
        prefix, _, rest = value.partition(":")
        n = str(next(counter))
        return f"{prefix}:{'f' * (len(rest) - len(n))}{n}"

    return {k: ([fake(v) for v in val] if isinstance(val, list) else fake(val)) for k, val in a.items()}


async def _outcome(
    client: Client, tool: str, mode: str, data: dict[str, Any], options: dict[str, Any]
) -> tuple[str, str]:
    result = await client.call_tool(tool, {"args": {"mode": mode, "input_data": data, "options": options}})
    text = result.content[0].text if result.is_error else json.dumps(result.structured_content)  # type: ignore[union-attr]
    code = json.loads(text)["code"] if result.is_error else "ok"
    return code, text


def _normalise(text: str, sent: Any) -> str:
    out = text
    for value in sorted(_strings(sent), key=len, reverse=True):
        if len(value) > 3:
            out = out.replace(value, "<sent>")
    out = _ID.sub("<id>", out)
    # timings differ run to run (the compiler reports its stage latencies): not an oracle
    out = re.sub(r'"latency_ms":\s*(\{[^{}]*\}|[\d.]+)', '"latency_ms":<t>', out)
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+\+00:00", "<ts>", out)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


async def run_routes(
    client: Client, seeded: dict[str, Any], b_knowledge: str, extra_modes: dict[str, list[str]] | None = None
) -> dict[str, Any]:
    """Call every route with A's ids and with fake ids; return counts and the leaks found."""
    a_ids = seeded["ids"]
    a_all = {v for val in a_ids.values() for v in (val if isinstance(val, list) else [val])}
    table_a = routes(a_ids, {}, b_knowledge)
    table_f = routes(fake_ids(a_ids), {}, b_knowledge)
    covered = {(t, m) for t, m, _, _ in table_a}
    for tool, modes in (extra_modes or {}).items():
        for mode in modes:
            if (tool, mode) in covered:
                continue
            for field in ("id", "object_id", "source_id", "knowledge_id"):
                key = "source" if field == "source_id" else "cited"
                table_a.append((tool, mode, {field: a_ids[key]}, {}))
                table_f.append((tool, mode, {field: fake_ids(a_ids)[key]}, {}))
    leaks: list[str] = []
    for (tool, mode, data, options), (_, _, fdata, foptions) in zip(table_a, table_f, strict=True):
        code, text = await _outcome(client, tool, mode, data, options)
        fcode, ftext = await _outcome(client, tool, mode, fdata, foptions)
        sent = set(_strings(data)) | set(_strings(options))
        for secret in seeded["secrets"]:
            if secret in text and not any(secret in s for s in sent):
                leaks.append(f"{tool}.{mode}: response contains A's text {secret!r}")
        for oid in a_all - sent:
            # As for texts: an id sent inside another (SOURCE_ID#seg-N) was sent; echoing it is no leak.
            if oid in text and not any(oid in s for s in sent):
                leaks.append(f"{tool}.{mode}: response names A's id {oid}")
        if code != fcode or _normalise(text, [data, options]) != _normalise(ftext, [fdata, foptions]):
            leaks.append(f"{tool}.{mode}: A's ids answered {code}, unknown ids {fcode} (existence oracle)")
    return {"routes": len(table_a), "calls": 2 * len(table_a), "leaks": leaks}
