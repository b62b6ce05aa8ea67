"""memory_query context: a work-ready, budgeted bundle for a task."""

from __future__ import annotations

from typing import Any

from memory_substrate.query.schemas import ContextInput, ContextOptions, Filters, SearchInput, SearchOptions
from memory_substrate.query.search import SearchEngine
from memory_substrate.query.shaping import take_within
from memory_substrate.query.views import compact
from memory_substrate.runtime import Runtime

ITEM_TOKENS = 600  # compact detail: token budget of ``items``; tiers and diagnostics take the rest
LIVE = ["candidate", "active", "contested", "open", "in_progress", "blocked", "recorded"]
POLICY_SNIPPETS = [
    "Query memory before starting work; retry with expanded terms when results are weak.",
    "Write durable memory only through memory_remember with reason, memory_source and scope_refs.",
    "Treat candidate and contested items as unverified; check their evidence before relying on them.",
]


def _section(items: list[dict[str, Any]], predicate: Any) -> dict[str, Any]:
    ids = [i["id"] for i in items if predicate(i)]
    return {"field": "items", "count": len(ids), "ids": ids}


def build_context(rt: Runtime, data: ContextInput, opts: ContextOptions) -> dict[str, Any]:
    engine = SearchEngine(rt)
    scope = data.scope
    filters = Filters(object_types=scope.object_types, statuses=LIVE, kinds=scope.kinds or None)
    found = engine.search(
        SearchInput(query=data.task),
        SearchOptions(max_items=opts.max_items * 3, filters=filters, detail=opts.detail),
    )
    hits = found["items"]
    if scope.scope_refs:
        wanted = set(scope.scope_refs)
        hits = [h for h in hits if wanted & set(h.get("scope_refs") or [])]
    items = hits[: opts.max_items]
    # Open work in scope belongs in every task context, even when the task words miss it.
    if "work_item" in scope.object_types and len(items) < opts.max_items:
        with rt.read() as session:
            open_work = session.list_objects(
                object_types=["work_item"], statuses=["open", "in_progress", "blocked"], limit=opts.max_items
            )
        have = {i["id"] for i in items}
        for obj in open_work:
            if len(items) >= opts.max_items:
                break
            if obj.id in have or (scope.scope_refs and not set(scope.scope_refs) & set(obj.scope_refs)):
                continue
            item = compact(obj)
            item["retrieval_sources"] = ["open_work"]
            items.append(item)
    if opts.detail == "compact":
        # The tiers below repeat item ids; the items themselves get what remains of the budget.
        items = take_within(items, ITEM_TOKENS)
    evidence_ids: list[str] = []
    for item in items:
        for chunk in item.get("matched_chunks", []):
            evidence_ids.append(chunk["chunk_id"])
    with rt.read() as session:
        full = session.get_objects([i["id"] for i in items if i["object_type"] == "knowledge"])
    for obj in full.values():
        evidence_ids.extend(e["source_id"] for e in obj.evidence_refs)
    evidence_ids = list(dict.fromkeys(evidence_ids))
    hints = [
        {"tool": "memory_query", "mode": "expand", "input_data": {"id": i["id"]}, "why": f"details of {i['title'][:60]}"}
        for i in items[:3]
    ]
    return {
        "result_type": "context_result",
        "task": found["query"],
        "items": items,
        "context_tiers": {
            "policy": {"resource": "memory://policy", "snippets": POLICY_SNIPPETS},
            "active_task": {"task": found["query"], "scope": scope.model_dump()},
            "decisions": _section(items, lambda i: i["kind"] == "decision"),
            "procedures": _section(items, lambda i: i["kind"] == "procedure"),
            "evidence": {
                "field": "evidence_refs",
                "count": len(evidence_ids),
                "ids": evidence_ids[: 20 if opts.detail == "full" else 8],
            },
            "open_work": _section(
                items, lambda i: i["object_type"] == "work_item" and i["status"] in ("open", "in_progress", "blocked")
            ),
            "deep_search_hints": hints,
        },
        "context_budget": {
            "max_items": opts.max_items,
            "returned_items": len(items),
            "candidate_items": len(hits),
            "detail": opts.detail,
        },
        "normalized_terms": found["normalized_terms"],
        "semantic_backend": found["semantic_backend"],
        "query_sanitizer": found["query_sanitizer"],
    }
