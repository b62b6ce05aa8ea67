"""Validation limits and cache settings of the graph toolset, taken from ``Settings``.

Spec 002 names its variables without a prefix (``MAX_TEXT_LENGTH``...); this project's
convention is the ``MEMORY_SUBSTRATE_`` prefix. ``Settings`` reads both; the prefixed one wins,
so a deployment can set the project's variable without touching a shared, unprefixed one. Read
once, with the rest of the settings, by the composition root (never at import time).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from memory_substrate.settings import Settings


@dataclass(frozen=True)
class GraphLimits:
    max_text_length: int
    max_metadata_size: int
    min_ttl_days: float
    max_ttl_days: float
    cache_embeddings_enabled: bool
    cache_embeddings_maxsize: int
    cache_search_enabled: bool
    cache_search_maxsize: int
    cache_search_ttl: float
    search_default_limit: int
    similarity_threshold: float
    subgraph_default_max_nodes: int
    trace_max_depth: int
    graph_scope: str

    @classmethod
    def from_settings(cls, settings: Settings) -> GraphLimits:
        return cls(**{f.name: getattr(settings, f.name) for f in fields(cls)})
