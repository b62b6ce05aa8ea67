"""Small helpers shared by storage backends."""

from __future__ import annotations

from collections.abc import Sequence


def merge_ranges(ranges: Sequence[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Overlapping or touching (source, first, last) ranges folded into disjoint ones."""
    out: list[tuple[str, int, int]] = []
    for src, lo, hi in sorted(ranges):
        if out and out[-1][0] == src and lo <= out[-1][2] + 1:
            out[-1] = (src, out[-1][1], max(out[-1][2], hi))
        else:
            out.append((src, lo, hi))
    return out
