"""Builders for storage contract tests: objects, search documents and segments as the service makes them."""

from __future__ import annotations

from typing import Any

from memory_substrate.models import MemoryObject, SearchDoc, Segment
from memory_substrate.text import index_text


def make_obj(
    object_id: str,
    *,
    object_type: str = "knowledge",
    kind: str = "fact",
    status: str = "active",
    title: str = "title",
    summary: str = "",
    created_at: str = "2024-01-01T00:00:00.000000+00:00",
    updated_at: str | None = None,
    **extra: Any,
) -> MemoryObject:
    return MemoryObject(
        id=object_id,
        object_type=object_type,
        kind=kind,
        status=status,
        title=title,
        summary=summary,
        created_at=created_at,
        updated_at=updated_at or created_at,
        **extra,
    )


def doc(title: str = "", summary: str = "", body: str = "", meta: str = "") -> SearchDoc:
    """A search document normalised the way the service builds one."""
    return SearchDoc(index_text(title), index_text(summary), index_text(body), index_text(meta))


def seg(source_id: str, n: int, text: str, **metadata: Any) -> Segment:
    return Segment(
        source_id=source_id,
        id=f"seg-{n}",
        ordinal=n - 1,
        text=text,
        locator={"message_index": n - 1},
        hash=f"h{n}",
        metadata=metadata,
        created_at="2024-01-01T00:00:00.000000+00:00",
    )


def seg_row(segment: Segment, meta: str = "") -> tuple[Segment, str, str]:
    return segment, index_text(segment.text), index_text(meta)
