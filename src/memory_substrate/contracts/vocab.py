"""The closed vocabularies of the portable contracts. Unknown kinds fail validation, so that runtimes sharing
these contracts cannot drift apart silently; extending a vocabulary is a new contract version.
"""

from __future__ import annotations

PROFILE_V1 = "markitect.memory.profile.v1"
GRAPH_V1 = "markitect.memory.graph.v1"
SELECTION_V1 = "markitect.memory.selection.v1"
# Our own output contract (the portable contracts name a "ContextPackage" without fixing its shape).
PACKAGE_V1 = "memory-substrate.context-package.v1"

CONTRACTS = {"profile": PROFILE_V1, "graph": GRAPH_V1, "selection": SELECTION_V1, "package": PACKAGE_V1}

# Node kinds, grouped by the view that introduces them (the grouping is descriptive only).
REASONING_NODE_KINDS = (
    "question",
    "claim",
    "assumption",
    "evidence",
    "decision",
    "alternative",
    "outcome",
    "risk",
    "follow_up",
)
CONVERSATION_NODE_KINDS = (
    "turn",
    "plan",
    "tool_call",
    "observation",
    "edit",
    "validation",
    "interruption",
    "activation",
)
KNOWLEDGE_NODE_KINDS = (
    "task",
    "topic",
    "document",
    "entity",
    "artifact",
    "concept",
    "capability",
    "contract",
    "policy",
    "preference",
    "source_fact",
    "episode",
    "finding",
    "constraint",
    "profile",
    "context_package",
    "memory",
)
NODE_KINDS = REASONING_NODE_KINDS + CONVERSATION_NODE_KINDS + KNOWLEDGE_NODE_KINDS

EDGE_KINDS = (
    "supports",
    "contradicts",
    "depends_on",
    "derived_from",
    "led_to",
    "affects",
    "references",
    "relates_to",
    "supersedes",
    "belongs_to",
    "mentions",
    "activates",
    "governs",
)

EVENT_KINDS = (
    "recorded",
    "updated",
    "activated",
    "deactivated",
    "refreshed",
    "compacted",
    "forgotten",
    "branched",
    "merged",
    "policy_decision",
)

# The memory views a profile may declare (the three fixture views plus the package output).
MEMORY_KINDS = ("reasoning", "conversation", "knowledge", "package")

# Which node kinds belong to which view: used by `profile plan` and by packing statistics.
VIEW_OF_NODE_KIND = {
    **dict.fromkeys(REASONING_NODE_KINDS, "reasoning"),
    **dict.fromkeys(CONVERSATION_NODE_KINDS, "conversation"),
    **dict.fromkeys(KNOWLEDGE_NODE_KINDS, "knowledge"),
}
