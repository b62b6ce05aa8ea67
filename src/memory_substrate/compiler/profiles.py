"""The compiler's tables: task classes, retrieval profiles, memory-type weights,
provenance scores and the four ranking dimensions. Data only; docs/context-compiler.md explains
each choice."""

from __future__ import annotations

TASK_CLASSES = ("debug", "architecture", "compliance", "writing", "chat")

# Strategies each class leads with (its retrieval profile).
PROFILE_STRATEGIES: dict[str, tuple[str, ...]] = {
    "debug": ("graph", "episode_recall"),
    "architecture": ("fact_lookup", "graph"),
    "compliance": ("episode_recall", "fact_lookup"),
    "writing": ("fact_lookup",),
    "chat": ("fact_lookup",),
}

# Memory-type weight per class (episodic / semantic / procedural); 0.0 is a hard exclude.
TYPE_WEIGHTS: dict[str, dict[str, float]] = {
    "debug": {"episodic": 1.0, "semantic": 0.7, "procedural": 0.8},
    "architecture": {"episodic": 0.5, "semantic": 1.0, "procedural": 0.3},
    "compliance": {"episodic": 1.0, "semantic": 0.8, "procedural": 0.0},
    "writing": {"episodic": 0.3, "semantic": 1.0, "procedural": 0.6},
    "chat": {"episodic": 0.4, "semantic": 1.0, "procedural": 0.3},
}

PROVENANCE: dict[str, float] = {
    "procedure_assist": 0.9,
    "fact_lookup": 0.8,
    "graph": 0.7,
    "episode_recall": 0.6,
}

DIMENSION_WEIGHTS: dict[str, float] = {
    "relevance": 0.40,
    "recency": 0.25,
    "stability": 0.20,
    "provenance": 0.15,
}
assert abs(sum(DIMENSION_WEIGHTS.values()) - 1.0) < 1e-9

DUAL_PROFILE_GAP = 0.3  # both profiles run when primary - secondary confidence is below this
RECENCY_DAYS = 90.0
STABILITY_MIX = (0.7, 0.3)  # evidence status score, salience
DEFAULT_SALIENCE = 0.5
# Captured evidence is a verbatim record of what was said: the "observed" evidence status.
SEGMENT_EVIDENCE_STATUS = "observed"
