"""How objects and segments are shown: compact by default, full on request."""

from __future__ import annotations

from typing import Any

from memory_substrate.models import MemoryObject, Segment

SUMMARY_CHARS = 240


def snippet(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def compact(obj: MemoryObject, *, summary_chars: int = SUMMARY_CHARS) -> dict[str, Any]:
    item: dict[str, Any] = {
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
        if obj.payload.get("subject") and obj.payload.get("predicate"):
            item["claim"] = {k: obj.payload.get(k) for k in ("subject", "predicate", "value", "object")}
        if obj.valid_from or obj.valid_until:
            item["valid_from"], item["valid_until"] = obj.valid_from, obj.valid_until
    if obj.object_type == "source":
        item["uri"] = obj.metadata.get("uri")
        item["segment_count"] = obj.metadata.get("segment_count")
    return item


WORK_HISTORY = 20  # the most recent changes a work item's page lists


def work_history(session: Any, obj: MemoryObject, *, text_chars: int | None = None) -> list[dict[str, Any]]:
    """A work item's changes, newest first: when, what changed (from -> to) and why, read from the
    audit events its creation and updates wrote. ``text_chars``: each changed text cut to this
    many characters (a compact page; a summary may be 20,000)."""

    def cut(value: Any) -> Any:
        return snippet(value, text_chars) if text_chars is not None and isinstance(value, str) else value

    out: list[dict[str, Any]] = []
    for e in session.list_events(object_id=obj.id, limit=WORK_HISTORY):
        entry: dict[str, Any] = {"created_at": e.created_at, "action": e.action, "patch_id": e.patch_id}
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


def full(obj: MemoryObject) -> dict[str, Any]:
    return obj.to_dict()


def segment_view(seg: Segment, *, snippet_chars: int, full_text: bool = False) -> dict[str, Any]:
    view: dict[str, Any] = {
        "source_id": seg.source_id,
        "segment_id": seg.id,
        "locator": seg.locator,
        "hash": seg.hash,
    }
    if full_text:
        view["text"] = seg.text
    else:
        view["excerpt"] = snippet(seg.text, snippet_chars)
    for key in ("name", "role", "created_at"):
        if seg.metadata.get(key):
            view[key] = seg.metadata[key]
    return view


INDEX_LISTS = ("code_index", "code_modules", "doc_index", "document_sections")


def compact_source_payload(
    obj: MemoryObject, max_items: int, snippet_chars: int, *, list_tokens: int | None = None
) -> dict[str, Any]:
    """Bounded index lists for a source page: first ``max_items`` of each, plus totals.

    ``list_tokens`` (a default page): each list is also cut to what fits that many tokens, so a
    repository's page stays within the response budget; an explicit ``max_items`` is honoured.
    """
    from memory_substrate.answers.shaping import take_within

    out: dict[str, Any] = {}
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


def _flat(entry: Any) -> Any:
    """An index entry with its nested lists as counts (``imports_count``): a default page names
    files and modules; ``max_items`` or ``detail: "full"`` show what they hold."""
    if not isinstance(entry, dict):
        return entry
    out: dict[str, Any] = {}
    for k, v in entry.items():
        if isinstance(v, list) and k != "heading_path":
            out[f"{k}_count"] = len(v)
        elif not isinstance(v, dict):
            out[k] = v
    return out
