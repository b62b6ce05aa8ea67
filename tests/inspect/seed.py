"""A small, realistic store for the inspector's tests and screenshots, written through the public API.

Two episodes about a payments team (the second supersedes a fact of the first), a procedure,
a Markdown source, and one compile trace, recorded by a real `memory_query context` compile.
"""

from __future__ import annotations

from typing import Any

from memory_substrate import Memory

SCOPE = ["scope:payments"]
XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


def _episode(mem: Memory, title: str, texts: list[str], day: str) -> str:
    res = mem.ingest(
        "conversation",
        {
            "title": title,
            "messages": [
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": t,
                    "created_at": f"{day}T09:0{i}:00+00:00",
                }
                for i, t in enumerate(texts)
            ],
        },
    )
    return str(res["source_id"])


def seed(mem: Memory, *, with_trace: bool = True) -> dict[str, Any]:
    ep1 = _episode(
        mem,
        "Payments architecture review",
        [
            "The Payments Gateway stores ledgers in PostgreSQL 15 on the eu-west cluster.",
            "Alice Johnson owns the Payments Gateway; deploys go through Argo CD.",
            "To roll back a deploy: pause Argo CD sync, revert the image tag, resume sync.",
        ],
        "2025-01-10",
    )
    mem.remember(
        "extraction",
        {
            "episode_id": ep1,
            "reason": "architecture review notes",
            "memory_source": "user_declared",
            "scope_refs": SCOPE,
            "entities": [
                {"name": "Payments Gateway", "type": "service"},
                {"name": "PostgreSQL", "type": "technology"},
                {"name": "Alice Johnson", "type": "person"},
                {"name": "Argo CD", "type": "technology"},
            ],
            "facts": [
                {
                    "subject": "Payments Gateway",
                    "predicate": "uses",
                    "object": "PostgreSQL",
                    "segment_ids": ["seg-1"],
                    "valid_from": "2025-01-10T09:00:00+00:00",
                },
                {
                    "subject": "Alice Johnson",
                    "predicate": "owns",
                    "object": "Payments Gateway",
                    "segment_ids": ["seg-2"],
                },
                {
                    "subject": "Payments Gateway",
                    "predicate": "depends_on",
                    "object": "Argo CD",
                    "segment_ids": ["seg-2"],
                },
            ],
            "procedures": [
                {
                    "kind": "workflow",
                    "title": "Roll back a Payments Gateway deploy",
                    "text": "Pause Argo CD sync, revert the image tag, resume sync.",
                    "segment_ids": ["seg-3"],
                }
            ],
        },
    )
    ep2 = _episode(
        mem,
        "Database migration retro",
        [
            "Since March the Payments Gateway runs on CockroachDB; PostgreSQL was retired.",
            "Rollback still works the same way: pause Argo CD, revert the tag, resume.",
        ],
        "2026-03-02",
    )
    mem.remember(
        "extraction",
        {
            "episode_id": ep2,
            "reason": "migration retro",
            "memory_source": "user_declared",
            "scope_refs": SCOPE,
            "entities": [
                {"name": "Payments Gateway", "type": "service"},
                {"name": "CockroachDB", "type": "technology"},
            ],
            "facts": [
                {
                    "subject": "Payments Gateway",
                    "predicate": "uses",
                    "object": "CockroachDB",
                    "segment_ids": ["seg-1"],
                    "valid_from": "2026-03-02T09:00:00+00:00",
                }
            ],
            "procedures": [
                {
                    "kind": "workflow",
                    "title": "Roll back a Payments Gateway deploy",
                    "text": "Pause Argo CD sync, revert the image tag, resume sync.",
                    "segment_ids": ["seg-2"],
                }
            ],
        },
    )
    ep3 = _episode(mem, XSS, [f"Untrusted text {XSS} must render as text."], "2026-04-01")
    know = mem.remember(
        "knowledge",
        {
            "kind": "decision",
            "title": "Ledger writes are idempotent",
            "summary": "Every ledger write carries an idempotency key.",
            "reason": "design decision",
            "memory_source": "human_curated",
            "scope_refs": SCOPE,
            "evidence_refs": [{"source_id": ep1, "segment_id": "seg-1"}],
        },
    )
    out = {"episodes": [ep1, ep2, ep3], "decision": know["object_id"]}
    if with_trace:
        # A real compile: the context compiler records the trace as it always does.
        compiled = mem.query(
            "context", {"task": "Why did the gateway change databases?"}, {"budget_tokens": 2000}
        )
        out["trace"] = compiled["trace_id"]
    return out
