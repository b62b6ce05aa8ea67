"""How this store's model maps onto the graph.v1 vocabularies, both ways. One table per
direction, so the mapping in docs/contracts.md and the code cannot disagree for long
(a test reads the docs table against these).
"""

from __future__ import annotations

from memory_substrate.contracts import vocab

# --- store -> contract --------------------------------------------------------------------
KNOWLEDGE_KIND_TO_NODE = {"fact": "source_fact", "procedure": "capability"}
ENTITY_KIND_TO_NODE = {"document": "document", "decision": "decision"}  # other entity types: entity
OBJECT_TYPE_DEFAULT_NODE = {
    "source": "document",  # conversations are episodes (below)
    "knowledge": "memory",
    "activity": "observation",
    "work_item": "task",
    "node": "entity",
    "entity": "entity",
}
UNKNOWN_OBJECT_TYPE_NODE = "memory"

REL_TYPE_TO_EDGE = {
    "about": "references",
    "uses_source": "derived_from",
    "evidence": "derived_from",
    "related_to": "relates_to",
    "supersedes": "supersedes",
    # common predicates of structured claims (the knowledge graph's canonical predicates among them)
    "part_of": "belongs_to",
    "member_of": "belongs_to",
    "requires": "depends_on",
    "uses": "depends_on",
    "caused": "led_to",
    "causes": "led_to",
    "impacts": "affects",
    "governed_by": "governs",
    # typed edges of the graph toolset, canonical relations
    "SIMILAR_TO": "relates_to",
    "RELATED_TO": "relates_to",
    "SUMMARIZES": "derived_from",
    "FOLLOWS_FROM": "derived_from",
    "CONTRADICTS": "contradicts",
    "MENTIONS_ENTITY": "mentions",
    "DESCRIBES": "references",
    "REFERENCES": "references",
}

ACTION_TO_EVENT = {
    "create": "recorded",
    "update": "updated",
    "supersede": "updated",
    "merge_duplicates": "merged",
    "resolve_duplicates": "policy_decision",
    "reindex": "refreshed",
}
STATUS_TO_EVENT = {
    "active": "activated",
    "contested": "policy_decision",
    "superseded": "deactivated",
    "archived": "deactivated",
    "expired": "deactivated",
    "stale": "deactivated",
}


def node_kind_for(object_type: str, kind: str, *, conversation: bool = False) -> tuple[str, bool]:
    """(node kind, exact) for a store object; ``exact`` is False when the kind is approximated."""
    if object_type == "source":
        return ("episode" if conversation else "document"), True
    if object_type == "knowledge":
        if kind in KNOWLEDGE_KIND_TO_NODE:
            return KNOWLEDGE_KIND_TO_NODE[kind], True
    elif object_type == "entity":
        return ENTITY_KIND_TO_NODE.get(kind, "entity"), True
    elif object_type not in OBJECT_TYPE_DEFAULT_NODE:
        return UNKNOWN_OBJECT_TYPE_NODE, False
    if kind in vocab.NODE_KINDS:
        return kind, True
    if object_type == "node" and kind == "stub":
        return "entity", True
    return OBJECT_TYPE_DEFAULT_NODE[object_type], object_type != "knowledge"


def edge_kind_for(rel_type: str) -> str:
    """The graph.v1 edge kind of a relation type. graph.v1 fails unknown kinds, so every type maps
    into its vocabulary; the exact type travels in the edge's ``attributes.rel_type`` and import
    restores it from there (the round trip is lossless whatever the kind)."""
    if rel_type in vocab.EDGE_KINDS:
        return rel_type
    if rel_type in REL_TYPE_TO_EDGE:
        return REL_TYPE_TO_EDGE[rel_type]
    lower = rel_type.lower()
    if lower in vocab.EDGE_KINDS:
        return lower
    return REL_TYPE_TO_EDGE.get(lower, "relates_to")


def event_kind_for(action: str, data: dict[str, object]) -> str:
    if action == "status_change":
        changes = data.get("changes")
        status = changes.get("status") if isinstance(changes, dict) else None
        to = status.get("to") if isinstance(status, dict) else None
        return STATUS_TO_EVENT.get(str(to), "updated")
    return ACTION_TO_EVENT.get(action, "updated")


# --- contract -> store (nodes of foreign snapshots, without our attributes) -----------------
NODE_TO_OBJECT_TYPE = {
    **dict.fromkeys(("entity", "topic", "artifact"), "node"),
    **dict.fromkeys(("task", "follow_up"), "work_item"),
    **dict.fromkeys(
        ("turn", "plan", "tool_call", "observation", "edit", "validation", "interruption", "activation"),
        "activity",
    ),
    **dict.fromkeys(("episode", "document"), "source"),
}  # every other node kind is knowledge
NODE_TO_KNOWLEDGE_KIND = {"source_fact": "fact"}
SEGMENT_NODE_KINDS = ("turn", "evidence")  # become segments when they belong_to an episode/document node


def object_for_node_kind(node_kind: str) -> tuple[str, str]:
    """(object_type, kind) for a foreign node of ``node_kind``."""
    object_type = NODE_TO_OBJECT_TYPE.get(node_kind, "knowledge")
    if object_type == "knowledge":
        return "knowledge", NODE_TO_KNOWLEDGE_KIND.get(node_kind, node_kind)
    if object_type == "source":
        return "source", "conversation" if node_kind == "episode" else "markdown"
    return object_type, node_kind
