"""Graph health on its own: the ``graph_health`` section of ``report`` without the other sections.

Why: the inspector's graph-health page shows only this section, and the full report (concept
candidates across sources, soft-duplicate scan, fact checks) cost most of its time on a large
store. This computes the section from the same inputs and the same functions ``report`` uses,
so the page and ``memory_maintain`` mode ``report`` always agree (a test compares them).
"""

from __future__ import annotations

from collections.abc import Mapping

from memory_substrate.maintain import derived
from memory_substrate.maintain.backends import effective
from memory_substrate.maintain.common import ALL, load_objects
from memory_substrate.maintain.graph_health import graph_health
from memory_substrate.maintain.reindex import graph_diff
from memory_substrate.maintain.report_types import GraphHealth
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.runtime import Runtime


def graph_health_section(rt: Runtime, max_items: int) -> GraphHealth:
    """``report``'s ``graph_health`` for ``rt``'s namespace, read in one read transaction."""
    with rt.read_with_expired() as session:
        objects = load_objects(session)
        relations = session.list_relations(limit=ALL)
        config = session.get_config()
    return health_of(rt, objects, relations, config, max_items)


def health_of(
    rt: Runtime,
    objects: list[MemoryObject],
    relations: list[Relation],
    config: Mapping[str, object],
    max_items: int,
) -> GraphHealth:
    """The section from what was read: the canonical graph's shape, the derived backend's counts beside it."""
    health = graph_health(
        objects,
        relations,
        graph_diff(objects, relations),
        backend=effective(config)["graph_backend"],
        configured="graph_backend" in config,
        max_items=max_items,
    )
    mirror = derived.graph_mirror_counts(rt)
    if mirror is not None:
        health["derived_backend"] = mirror
    return health
