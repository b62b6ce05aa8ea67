"""Segment retrieval: query analysis and ranking as pure, backend-agnostic functions."""

from memory_substrate.retrieval.ranker import (
    QueryAnalysis,
    RankConfig,
    TermStats,
    analyse_query,
    rank_segments,
)
from memory_substrate.retrieval.types import RankedSegment, Segment

__all__ = [
    "QueryAnalysis",
    "RankConfig",
    "RankedSegment",
    "Segment",
    "TermStats",
    "analyse_query",
    "rank_segments",
]
