"""The columns a store keeps beside each segment for the segment ranker (schema v8).

A search ranks several hundred window turns; reading their speaker, date and normalised terms
as plain columns saves parsing each row's metadata JSON and tokenising each text per search.
Both backends write exactly these values at insert, so their light reads agree.
"""

from __future__ import annotations

from memory_substrate.models import Segment
from memory_substrate.retrieval.text import lexical_document


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def ranking_columns(seg: Segment) -> tuple[str, str | None, str | None]:
    """(terms, speaker, said_at) for a segment: its normalised terms, ``metadata.name`` and
    ``metadata.created_at`` (the message date), the last two None when absent or not text."""
    return (
        lexical_document(seg.text),
        _text_or_none(seg.metadata.get("name")),
        _text_or_none(seg.metadata.get("created_at")),
    )
