"""The columns a store keeps beside each segment for the segment ranker.

A search ranks several hundred window turns; reading their speaker, date and normalised terms
as plain columns saves parsing each row's metadata JSON and tokenising each text per search.
Both backends write exactly these values at insert, so their light reads agree.
"""

from __future__ import annotations

import json
from typing import Any

from memory_substrate.analysis import main_language
from memory_substrate.models import Segment
from memory_substrate.retrieval.segment_terms import segment_terms


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def stored_language(text: str) -> str:
    """The ``language`` column: ``analysis.main_language`` of the text, "" when it cannot be told
    (NULL stays on rows stored without it, whose language the ranker detects itself)."""
    return main_language(text) or ""


def reindexed_columns(text: str, metadata: Any) -> tuple[str, str]:
    """The ``terms`` and ``language`` columns of a stored segment, from its text and metadata (a
    dict, or the JSON text SQLite keeps): rebuilt by ``reindex`` exactly as ``ranking_columns``
    writes them at insert."""
    meta = json.loads(metadata) if isinstance(metadata, str) else metadata
    return segment_terms(text, meta if isinstance(meta, dict) else {}), stored_language(text)


def ranking_columns(seg: Segment) -> tuple[str, str | None, str | None, str]:
    """(terms, speaker, said_at, language) for a segment: its normalised terms, ``metadata.name``
    and ``metadata.created_at`` (the message date), the two None when absent or not text, and
    the text's language (``stored_language``)."""
    return (
        segment_terms(seg.text, seg.metadata),
        _text_or_none(seg.metadata.get("name")),
        _text_or_none(seg.metadata.get("created_at")),
        stored_language(seg.text),
    )
