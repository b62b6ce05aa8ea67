"""Segment retrieval: query analysis and ranking as pure, backend-agnostic functions."""

from memory_substrate.retrieval.ranker import (
    QueryAnalysis,
    RankConfig,
    TermStats,
    analyse_query,
    rank_segments,
)
from memory_substrate.retrieval.types import RankedSegment, RankSegment

__all__ = [
    "QueryAnalysis",
    "RankConfig",
    "RankSegment",
    "RankedSegment",
    "TermStats",
    "analyse_query",
    "rank_segments",
]
