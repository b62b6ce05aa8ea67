"""The graph-health page's last computed section per namespace, reused until the store changes.

Why: the section reads every object and relation of the namespace (graph diff, components,
articulation points), the one page that cannot answer within the inspector's 300 ms on a large
store. The page therefore serves the last computed section while the store is unchanged, says
so with the time it was computed and its age, and offers a button that recomputes it.

Invalidation: before serving, a cheap read compares a fingerprint of the namespace with the one
the section was computed from: the newest patch (every governed write records one), the counts
of objects by type, kind and status (deletions and status changes), the most recently updated
object, and the namespace config (the graph backend). Any difference, from this process or
another one writing the same store, recomputes the section. The derived graph backend's counts
(``derived_backend``, only with an external graph backend) are part of the cached section too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from memory_substrate.app import Memory
from memory_substrate.inspector.views import CachedHealthReport
from memory_substrate.maintain.health_section import graph_health_section
from memory_substrate.util import canonical_json, now_iso


@dataclass
class Cached:
    fingerprint: str
    computed_at: str  # ISO time
    computed_mono: float
    compute_ms: float
    section: Mapping[str, object]  # the report's graph_health section


def fingerprint(mem: Memory) -> str:
    with mem.runtime.read_with_expired() as s:
        patches = s.list_patches(limit=1)
        counts = s.count_objects()
        latest = s.list_objects(order="updated_desc", limit=1)
        config = s.get_config()
    return canonical_json(
        [
            patches[0].id if patches else None,
            sorted(list(c) for c in counts),
            [latest[0].id, latest[0].updated_at, latest[0].version] if latest else None,
            config,
        ]
    )


class HealthCache:
    def __init__(self, max_items: int) -> None:
        self.max_items = max_items
        self._entries: dict[str, Cached] = {}
        self._lock = threading.Lock()

    def get(self, mem: Memory, *, refresh: bool = False) -> CachedHealthReport:
        """The section and how it was obtained: ``cached`` (bool), ``computed_at``, ``age_s``,
        ``compute_ms`` (what computing it took)."""
        fp = fingerprint(mem)
        with self._lock:
            entry = self._entries.get(mem.namespace)
        cached = entry is not None and entry.fingerprint == fp and not refresh
        if not cached:
            started = time.perf_counter()
            section = graph_health_section(mem.runtime, self.max_items)
            entry = Cached(
                fp, now_iso(), time.monotonic(), round((time.perf_counter() - started) * 1000, 1), section
            )
            with self._lock:
                self._entries[mem.namespace] = entry
        assert entry is not None
        return {
            "graph_health": entry.section,
            "cached": cached,
            "computed_at": entry.computed_at,
            "age_s": round(time.monotonic() - entry.computed_mono, 1),
            "compute_ms": entry.compute_ms,
        }
