"""Canonical relations: edges stated directly (graph-toolset relations, graph.v1 snapshot imports),
not derived from an object's fields, so ``reindex`` keeps them."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from memory_substrate.models import Relation
from memory_substrate.util import object_type_of


def canonical_relation(
    rel_type: str, source: str, target: str, properties: Mapping[str, object], created_at: str
) -> Relation:
    """One edge per (type, from, to): creating it again replaces its properties.

    Canonical relations have no origin object, so ``reindex`` never rewrites or removes them
    (maintain/reindex.py ``is_derived``); ``repair`` removes one whose endpoint is gone.
    """
    digest = hashlib.sha256(f"canonical|{rel_type}|{source}|{target}".encode()).hexdigest()[:20]
    return Relation(
        id=f"rel:{digest}",
        rel_type=rel_type,
        source_id=source,
        target_id=target,
        origin_id=None,
        payload={
            "relation_schema": {
                "version": 1,
                "derivation": "canonical_relation",
                "origin_object_type": None,
                "origin_object_id": None,
                "origin_field": "graph_toolset",
                "source_object_type": object_type_of(source) or "unknown",
                "target_object_type": object_type_of(target) or "unknown",
            },
            "properties": properties,
        },
        created_at=created_at,
    )
