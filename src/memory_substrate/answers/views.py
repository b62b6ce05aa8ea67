"""How objects and segments are shown: compact by default, full on request."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_substrate.answers.view_types import CompactView, HistoryEntry, SegmentMeta, SegmentView
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject, Segment

if TYPE_CHECKING:
    from memory_substrate.storage.base import StoreSession

SUMMARY_CHARS = 240


def snippet(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def compact_view(obj: MemoryObject, *, summary_chars: int = SUMMARY_CHARS) -> CompactView:
    item: CompactView = {
        "id": obj.id,
        "object_type": obj.object_type,
        "kind": obj.kind,
        "status": obj.status,
        "title": obj.title,
        "summary": snippet(obj.summary, summary_chars),
        "updated_at": obj.updated_at,
    }
    if obj.scope_refs:
        item["scope_refs"] = obj.scope_refs
    if obj.object_type == "knowledge":
        item["memory_source"] = obj.memory_source
        item["confidence"] = obj.confidence
        item["evidence_ref_count"] = len(obj.evidence_refs)
        p = obj.payload
        if p.get("subject") and p.get("predicate"):
            item["claim"] = {
                "subject": p.get("subject"),
                "predicate": p.get("predicate"),
                "value": p.get("value"),
                "object": p.get("object"),
            }
        if obj.valid_from or obj.valid_until:
            item["valid_from"], item["valid_until"] = obj.valid_from, obj.valid_until
    if obj.object_type == "source":
        item["uri"] = obj.metadata.get("uri")
        item["segment_count"] = obj.metadata.get("segment_count")
    return item


def compact(obj: MemoryObject, *, summary_chars: int = SUMMARY_CHARS) -> JsonObject:
    """The compact view as a JSON object, for a caller that adds fields of its own to it (a search
    hit's scores, a report's counts)."""
    return dict(compact_view(obj, summary_chars=summary_chars))


WORK_HISTORY = 20  # the most recent changes a work item's page lists


def work_history(
    session: StoreSession, obj: MemoryObject, *, text_chars: int | None = None
) -> list[HistoryEntry]:
    """A work item's changes, newest first: when, what changed (from -> to) and why, read from the
    audit events its creation and updates wrote. ``text_chars``: each changed text cut to this
    many characters (a compact page; a summary may be 20,000)."""

    def cut(value: object) -> object:
        return snippet(value, text_chars) if text_chars is not None and isinstance(value, str) else value

    out: list[HistoryEntry] = []
    for e in session.list_events(object_id=obj.id, limit=WORK_HISTORY):
        entry: HistoryEntry = {"created_at": e.created_at, "action": e.action, "patch_id": e.patch_id}
        changes = e.data.get("changes")
        if isinstance(changes, dict):
            entry["changes"] = {
                k: {side: cut(x) for side, x in v.items()} if isinstance(v, dict) else v
                for k, v in changes.items()
                if k != "reason"
            }
            if changes.get("reason"):
                entry["reason"] = changes["reason"]
        elif e.action == "create":
            entry["changes"] = {"status": {"from": None, "to": e.data.get("status")}}
        out.append(entry)
    return out


def full(obj: MemoryObject) -> JsonObject:
    return obj.to_dict()


SEGMENT_META: tuple[SegmentMeta, ...] = ("name", "role", "created_at")


def segment_view_typed(seg: Segment, *, snippet_chars: int, full_text: bool = False) -> SegmentView:
    view: SegmentView = {
        "source_id": seg.source_id,
        "segment_id": seg.id,
        "locator": seg.locator,
        "hash": seg.hash,
    }
    if full_text:
        view["text"] = seg.text
    else:
        view["excerpt"] = snippet(seg.text, snippet_chars)
    for key in SEGMENT_META:
        if seg.metadata.get(key):
            view[key] = seg.metadata[key]
    return view


def segment_view(seg: Segment, *, snippet_chars: int, full_text: bool = False) -> JsonObject:
    """The segment view as a JSON object, for a caller that adds fields of its own to it (a
    search hit's ranks and scores)."""
    return dict(segment_view_typed(seg, snippet_chars=snippet_chars, full_text=full_text))


INDEX_LISTS = ("code_index", "code_modules", "doc_index", "document_sections")


def compact_source_payload(
    obj: MemoryObject, max_items: int, snippet_chars: int, *, list_tokens: int | None = None
) -> JsonObject:
    """Bounded index lists for a source page: first ``max_items`` of each, plus totals.

    ``list_tokens`` (a default page): each list is also cut to what fits that many tokens, so a
    repository's page stays within the response budget; an explicit ``max_items`` is honoured.
    """
    from memory_substrate.answers.shaping import take_within

    out: JsonObject = {}
    for key, value in obj.payload.items():
        if isinstance(value, list):
            items = value[:max_items]
            if key == "document_sections":
                items = [
                    {**s, "excerpt": snippet(str(s.get("excerpt", "")), snippet_chars)}
                    if isinstance(s, dict)
                    else s
                    for s in items
                ]
            if list_tokens is not None and items:
                items = take_within([_flat(i) for i in items], list_tokens)
            out[key] = {"total": len(value), "items": items, "truncated": len(value) > len(items)}
        elif isinstance(value, str):
            out[key] = snippet(value, snippet_chars)
        elif isinstance(value, dict):
            out[key] = {k: v for k, v in list(value.items())[:max_items]}
        else:
            out[key] = value
    return out


def _flat(entry: object) -> object:
    """An index entry with its nested lists as counts (``imports_count``): a default page names
    files and modules; ``max_items`` or ``detail: "full"`` show what they hold."""
    if not isinstance(entry, dict):
        return entry
    out: JsonObject = {}
    for k, v in entry.items():
        if isinstance(v, list) and k != "heading_path":
            out[f"{k}_count"] = len(v)
        elif not isinstance(v, dict):
            out[k] = v
    return out
