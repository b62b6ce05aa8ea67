"""What the ingest service reads back from a stored source's metadata, narrowed to its type.

A source's metadata is a free-form JSON object (``models.MemoryObject.metadata``); the ingest
service itself wrote these fields (``ingest/service.py``), so each holds the type read here.
"""

from __future__ import annotations

from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject


def freshness(source: MemoryObject) -> JsonObject:
    """``metadata.freshness``: when the source was checked, whether it is current, its fingerprint."""
    value = source.metadata.get("freshness")
    return value if isinstance(value, dict) else {}


def segment_count(source: MemoryObject) -> int:
    """How many segments the source holds (0 when not recorded)."""
    value = source.metadata.get("segment_count")
    return value if isinstance(value, int) else 0


def specific_fact_count(source: MemoryObject) -> int:
    """How many specific facts (``graph.specific``) the episode's messages hold."""
    value = source.metadata.get("specific_facts")
    return len(value) if isinstance(value, list) else 0
