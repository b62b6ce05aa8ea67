"""The shapes of the views every answer shows of an object, a segment and a work item's history.

TypedDicts are plain dicts at run time: a view reaches the wire as the very dict it always was,
and mypy checks each key where the view is built. Values read from an object's free-form
``payload`` or ``metadata`` stay ``object``: the view passes them on without relying on a type.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from memory_substrate.json_types import JsonObject


class Claim(TypedDict):
    """A fact's statement as its payload gives it: ``value`` or ``object`` (the other is None)."""

    subject: object
    predicate: object
    value: object
    object: object


class CompactView(TypedDict):
    """An object as lists show it (``answers.views.compact``)."""

    id: str
    object_type: str
    kind: str
    status: str
    title: str
    summary: str
    updated_at: str
    scope_refs: NotRequired[list[str]]
    memory_source: NotRequired[str | None]
    confidence: NotRequired[float | None]
    evidence_ref_count: NotRequired[int]
    claim: NotRequired[Claim]
    valid_from: NotRequired[str | None]
    valid_until: NotRequired[str | None]
    uri: NotRequired[object]
    segment_count: NotRequired[object]


# The segment metadata a segment view shows when set: who spoke, and when.
SegmentMeta = Literal["name", "role", "created_at"]


class SegmentView(TypedDict):
    """A segment as answers show it (``answers.views.segment_view``): its whole ``text`` or an
    ``excerpt``."""

    source_id: str
    segment_id: str
    locator: JsonObject
    hash: NotRequired[str]  # always set; a compact page of one segment leaves it out
    text: NotRequired[str]
    excerpt: NotRequired[str]
    name: NotRequired[object]
    role: NotRequired[object]
    created_at: NotRequired[object]


class HistoryEntry(TypedDict):
    """One change of a work item (``answers.views.work_history``)."""

    created_at: str
    action: str
    patch_id: str
    changes: NotRequired[dict[str, object]]
    reason: NotRequired[object]
