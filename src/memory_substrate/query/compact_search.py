"""The compact shape of a search answer (the default ``detail``): content first, ids once.

An agent pays for every token, and in the flat shape most of an item's tokens were ids and
metadata repeated per item (a 27-token source id on every turn, a locator restating the segment
number, microsecond timestamps). The compact shape states shared fields once:

* a **segment line** is one string, ``"N speaker: text"``, in the context compiler's convention:
  ``N`` is the segment number, so the segment's id is ``SOURCE_ID#seg-N`` (``cite`` says so once
  per answer); a turn's time appears (``[2023-05-08T13:56Z]``) only where it differs from its
  source's ``date``; a document section's heading and a code hit's file are shown where the
  excerpt does not already name them. The line is written as the package writes a turn
  (reader_text.py): continuation lines start with a space, a speaker name that is not plain is
  a JSON string literal, invisible controls are shown as ``[U+202E]``.
* ``result_unit: "segment"``: ``sources`` lists each source once (``id``, ``title``, ``kind``
  when not a conversation, ``date`` to the minute) with its matching ``lines`` and their
  ``ranks`` in the whole answer (1 = best), sources in the order of their best line.
* ``result_unit: "object"``: each item keeps its ``id`` (whose prefix names its type, so no
  ``object_type``), ``kind`` (not for a conversation), ``title``, ``summary``, ``status`` only when not ``active``,
  ``updated_at`` to the minute (not for sources: their capture time is on ``page``), and its
  matched segments as ``lines`` under one ``date``; a conversation drops its generated ``uri``
  and its ``segment_count`` (the summary states it).

``detail: "full"`` keeps the flat shape with every field. Every id shown (an object id, or
``SOURCE_ID#seg-N`` rebuilt from a line) is accepted by ``page``, ``expand``, ``graph`` and ``trace``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC

from memory_substrate.json_types import JsonObject
from memory_substrate.models import ObjectHead
from memory_substrate.query.results import SourceGroup
from memory_substrate.reader_text import continued, label, visible
from memory_substrate.util import ID_PREFIXES, parse_time

CITE = "A line starts with its segment number N: the segment's id is SOURCE_ID#seg-N."
SEG_NUMBER = re.compile(r"seg-(\d+)")
_TYPE_OF_PREFIX = {p: t for t, p in ID_PREFIXES.items()}


def minute(ts: object) -> str | None:
    """A time to the minute, UTC (``2023-05-08T13:56Z``); None for none, the text if unparsable."""
    if not ts:
        return None
    try:
        return parse_time(str(ts)).astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")
    except ValueError:
        return str(ts)


def segment_line(seg: Mapping[str, object], *, date: str | None = None, uri: object = None) -> str:
    """``"N speaker: text"`` for one segment view (``segment_id``, ``excerpt``, ``locator``...)."""
    sid = str(seg.get("segment_id", ""))
    m = SEG_NUMBER.fullmatch(sid)
    parts = [m.group(1) if m else f"[{sid}]"]
    when = minute(seg.get("created_at"))
    if when and when != date:
        parts.append(f"[{when}]")
    text = str(seg.get("excerpt") or seg.get("text") or "")
    locator = seg.get("locator")
    loc = locator if isinstance(locator, dict) else {}
    if loc.get("kind") == "line":
        heading = [str(h) for h in loc.get("heading_path") or []]
        path = loc.get("path")
        if heading and heading[-1] not in text:
            parts.append("[" + " > ".join(heading[-2:]) + "]")
        elif path and path != uri and str(path) not in text:
            parts.append(f"{path}:{loc.get('line_start')}" if loc.get("line_start") else str(path))
    elif loc.get("kind") == "page" and loc.get("page") is not None:
        parts.append(f"[p. {loc['page']}]")
    speaker = seg.get("name") or seg.get("role")
    if speaker:
        parts.append(f"{label(str(speaker))}:")
    return visible(continued(" ".join([*parts, text])))


def date_of(segs: Sequence[Mapping[str, object]]) -> str | None:
    """The date most of these segments share (to the minute); None when none has one."""
    dates = [d for d in (minute(s.get("created_at")) for s in segs) if d]
    return max(dates, key=dates.count) if dates else None


def group_segments(items: list[JsonObject], heads: Mapping[str, ObjectHead]) -> list[SourceGroup]:
    """Ranked segment items as sources, each once, with their lines and ranks."""
    by_source: dict[str, list[tuple[int, JsonObject]]] = {}
    for rank, item in enumerate(items, 1):
        by_source.setdefault(str(item["source_id"]), []).append((rank, item))
    out = []
    for source_id, hits in by_source.items():
        head = heads.get(source_id)
        date = date_of([h for _, h in hits])
        group: SourceGroup = {"id": source_id}
        if head is not None:
            if head.kind != "conversation":
                group["kind"] = head.kind
            group["title"] = head.title
        if date:
            group["date"] = date
        group["ranks"] = [r for r, _ in hits]
        group["lines"] = [segment_line(h, date=date, uri=h.get("source_uri")) for _, h in hits]
        out.append(group)
    return out


def compact_object(item: JsonObject) -> JsonObject:
    """One object hit without fields that restate another (type in the id, active status)."""
    out = dict(item)
    if _TYPE_OF_PREFIX.get(str(out.get("id", "")).split(":", 1)[0]) == out.get("object_type"):
        out.pop("object_type")
    if out.get("status") == "active":
        out.pop("status")
    if out.get("kind") == "conversation" and str(out.get("id", "")).startswith("src:"):
        out.pop("kind")  # as in the segment shape: a source's kind is named when not a conversation
        if str(out.get("uri", "")).startswith("conversation:"):
            out.pop("uri")  # a generated name, not a place to read from
        out.pop("segment_count", None)  # its summary says how many messages
    if str(out.get("id", "")).startswith("src:"):
        out.pop("updated_at", None)  # when it was captured (page has it); ``date`` says when it was said
    elif out.get("updated_at"):
        out["updated_at"] = minute(out["updated_at"])
    out.pop("retrieval_sources", None)
    chunks = out.pop("matched_chunks", None)
    if isinstance(chunks, list) and chunks:  # a list of segment views wherever it is set
        date = date_of(chunks)
        if date:
            out["date"] = date
        out["lines"] = [segment_line(c, date=date, uri=out.get("uri")) for c in chunks]
    return out


def fit_count(render: Callable[[int], JsonObject], n: int, budget: int) -> int:
    """The largest count ``k <= n`` (at least 1) whose rendered answer fits ``budget`` tokens."""
    from memory_substrate.tokens import count_tokens, wire_json

    while n > 1 and count_tokens(wire_json(render(n))) > budget:
        n -= 1
    return n
