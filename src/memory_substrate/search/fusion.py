"""Reciprocal Rank Fusion over named retrieval streams. Pure; tested without a database."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

RRF_K = 60


@dataclass
class Fused:
    key: str
    rank_score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def sources(self) -> list[str]:
        return sorted(self.ranks, key=lambda s: self.ranks[s])


def rrf(
    streams: Mapping[str, Sequence[tuple[str, float]]],
    *,
    weights: Mapping[str, float] | None = None,
    k: int = RRF_K,
) -> list[Fused]:
    """Fuse ranked lists of (key, stream score); each stream is assumed best-first."""
    fused: dict[str, Fused] = {}
    for name, hits in streams.items():
        w = (weights or {}).get(name, 1.0)
        seen: set[str] = set()
        rank = 0
        for key, score in hits:
            if key in seen:
                continue
            seen.add(key)
            rank += 1
            f = fused.setdefault(key, Fused(key))
            f.ranks[name] = rank
            f.scores[name] = score
            f.rank_score += w / (k + rank)
    return sorted(fused.values(), key=lambda f: (-f.rank_score, f.key))
