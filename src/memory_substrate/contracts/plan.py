"""`contracts profile plan`: what this runtime provides for each memory kind and store a
profile declares. Descriptive only: it reads the profile and launches nothing."""

from __future__ import annotations

from typing import cast

from memory_substrate.contracts import vocab
from memory_substrate.contracts.diagnostics import has_errors
from memory_substrate.contracts.documents import ProfileDocument
from memory_substrate.contracts.results import ProfilePlan, Provision
from memory_substrate.contracts.validate import validate

STORE_NOTE = (
    "served by this runtime's own store (one SQLite file by default, PostgreSQL when "
    "MEMORY_SUBSTRATE_DATABASE_URL is set); the declared name is kept as a label, nothing is started"
)

PROVIDES: dict[str, Provision] = {
    "reasoning": {
        "node_kinds": list(vocab.REASONING_NODE_KINDS),
        "object_types": ["knowledge (kinds decision, claim, assumption, risk, ...)", "work_item (follow_up)"],
        "write": [
            "memory_remember knowledge|supersede|contest|promote (governed)",
            "memory_remember graph_snapshot",
        ],
        "read": ["memory_query context|search|graph|expand", "memory_query package"],
        "notes": "claims keep a lifecycle (candidate, active, contested, superseded) and cite evidence segments",
    },
    "conversation": {
        "node_kinds": [*vocab.CONVERSATION_NODE_KINDS, "episode"],
        "object_types": ["source (kind conversation; each message a segment)", "activity"],
        "write": ["memory_ingest conversation", "memory_remember activity"],
        "read": ["memory_query search (result_unit segment)|page|expand|recent"],
        "notes": "episodes are conversation sources; turns are their message segments",
    },
    "knowledge": {
        "node_kinds": list(vocab.KNOWLEDGE_NODE_KINDS),
        "object_types": ["knowledge (fact, concept, procedure, ...)", "node / entity", "source (documents)"],
        "write": [
            "memory_ingest repo|file|markdown|pdf|web",
            "memory_remember knowledge|batch|graph_snapshot",
        ],
        "read": ["memory_query search|context|graph", "memory-substrate export --format graph.v1"],
        "notes": "durable, governed memory; structured claims are checked for duplicates and conflicts",
    },
    "package": {
        "node_kinds": ["context_package"],
        "object_types": [],
        "write": [],
        "read": ["memory_query package", "memory-substrate contracts graph pack"],
        "notes": "ContextPackages are computed on demand, deterministically; they are not stored",
    },
}


def plan(document: object) -> ProfilePlan:
    """The plan for a profile, with its diagnostics; ``kinds`` is empty when it is invalid."""
    diags = validate(document, "profile")
    result: ProfilePlan = {
        "contract": vocab.PROFILE_V1,
        "valid": not has_errors(diags),
        "diagnostics": [d.to_dict() for d in diags],
        "launches": [],
        "kinds": [],
    }
    if has_errors(diags):
        return result
    profile = cast(ProfileDocument, document)  # no error: validate() passed it against the profile schema
    stores = profile.get("stores") or {}
    result["profile"] = {"id": profile["id"], "title": profile.get("title"), "intent": profile.get("intent")}
    for kind in profile["memory_kinds"]:
        result["kinds"].append(
            {"memory_kind": kind, "declared_store": stores.get(kind), "store": STORE_NOTE, **PROVIDES[kind]}
        )
    activation = profile.get("activation") or {}
    result["activation"] = {
        "max_items": activation.get("max_items"),
        "max_tokens": activation.get("max_tokens"),
        "applied_by": "contracts graph pack and memory_query package: items are taken in selection order "
        "until max_items; an item that would exceed max_tokens is skipped",
    }
    return result


def render(result: ProfilePlan) -> str:
    """The plan as readable text."""
    if not result["valid"]:
        return "profile is invalid; nothing to plan"
    prof = result["profile"]
    lines = [f"profile {prof['id']}" + (f" ({prof['title']})" if prof.get("title") else "")]
    if prof.get("intent"):
        lines.append(f"  intent: {prof['intent']}")
    for entry in result["kinds"]:
        lines.append(f"- {entry['memory_kind']}: declared store {entry['declared_store'] or '(none)'}")
        lines.append(f"    store: {entry['store']}")
        lines.append(f"    node kinds: {', '.join(entry['node_kinds'])}")
        if entry["object_types"]:
            lines.append(f"    held as: {'; '.join(entry['object_types'])}")
        if entry["write"]:
            lines.append(f"    write: {'; '.join(entry['write'])}")
        lines.append(f"    read: {'; '.join(entry['read'])}")
        lines.append(f"    {entry['notes']}")
    act = result["activation"]
    lines.append(
        f"activation: max_items={act['max_items']} max_tokens={act['max_tokens']} ({act['applied_by']})"
    )
    lines.append("launches: nothing (this command only describes)")
    return "\n".join(lines)
