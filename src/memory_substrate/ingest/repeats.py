"""Repeat captures: the same content again is a noop; a conversation that grew is appended.

- A capture whose content fingerprint equals a current source of the same kind in the namespace
  (found through the ``src:fp:<kind>:<fingerprint>`` lookup key) answers with that source and
  ``status: noop``, whatever its URI: the same conversation ingested twice, the same page under
  another URL, the same PDF or Markdown file copied elsewhere.
- A conversation whose first messages are exactly an earlier capture of the same thread (its
  ``thread_id``, or its title and origin) appends its new messages to that source, the same
  episode: new segments after the old ones, the source's counts and fingerprint updated, the
  episode queued for extraction again.
"""

from __future__ import annotations

from dataclasses import replace

from memory_substrate.graph import jobs
from memory_substrate.graph.specific import episode_specific_facts
from memory_substrate.ingest.captured import CapturedSource
from memory_substrate.ingest.results import IngestResult
from memory_substrate.ingest.source_metadata import freshness, segment_count
from memory_substrate.lookup_keys import conversation_thread_key, source_fingerprint_key
from memory_substrate.models import MemoryObject, Segment
from memory_substrate.patch import Patch, PreparedVectors
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import now_iso, sha256_text

# Modes whose repeats are found by content fingerprint anywhere in the namespace (repo and file
# captures are found by their path, with the same answer).
FINGERPRINT_MODES = ("conversation", "web", "pdf", "markdown")


def _current(objs: dict[str, MemoryObject], kind: str) -> list[MemoryObject]:
    return sorted(
        (
            o
            for o in objs.values()
            if o.object_type == "source"
            and o.kind == kind
            and o.status == "active"
            and freshness(o).get("is_current", True)
        ),
        key=lambda o: (o.created_at, o.id),
    )


def same_content(session: StoreSession, mode: str, captured: CapturedSource) -> MemoryObject | None:
    """The current source of this kind with the same content fingerprint, if any."""
    if mode not in FINGERPRINT_MODES or not captured.fingerprint:
        return None
    ids = sorted({oid for _, oid in session.find_keys([source_fingerprint_key(mode, captured.fingerprint)])})
    found = _current(session.get_objects(ids), mode) if ids else []
    return next(
        (o for o in found if freshness(o).get("fingerprint") == captured.fingerprint),
        None,
    )


def grown_from(session: StoreSession, captured: CapturedSource) -> MemoryObject | None:
    """The conversation of the same thread that this capture extends (its longest such one)."""
    if not captured.thread or not captured.prefix_fingerprints:
        return None
    ids = sorted({oid for _, oid in session.find_keys([conversation_thread_key(captured.thread)])})
    best: MemoryObject | None = None
    for prev in _current(session.get_objects(ids), "conversation") if ids else []:
        n = segment_count(prev)
        fp = freshness(prev).get("fingerprint")
        extends = 0 < n < len(captured.prefix_fingerprints) and captured.prefix_fingerprints[n - 1] == fp
        if extends and (best is None or n > segment_count(best)):
            best = prev
    return best


def noop_result(result_type: str, source_id: str, reason: str) -> IngestResult:
    return {
        "result_type": result_type,
        "status": "noop",
        "requires_decision": False,
        "patch_id": None,
        "source_id": source_id,
        "applied_operations": 0,
        "audit_event_ids": [],
        "projection_count": 0,
        "reason": reason,
    }


def append_messages(
    session: StoreSession,
    patch: Patch,
    prev: MemoryObject,
    captured: CapturedSource,
    summary: str,
    seg_vectors: PreparedVectors | None,
) -> tuple[MemoryObject, list[Segment]]:
    """Append the messages ``captured`` has beyond ``prev`` to it (same source, same episode)."""
    checked_at = now_iso()
    start = segment_count(prev)
    segments = [
        Segment(
            source_id=prev.id,
            id=f"seg-{start + i + 1}",
            ordinal=start + i,
            text=s.text,
            locator=s.locator,
            hash=sha256_text(s.text),
            metadata=s.metadata,
            created_at=checked_at,
        )
        for i, s in enumerate(captured.segments[start:])
    ]
    all_ids = [(f"seg-{i + 1}", s.text) for i, s in enumerate(captured.segments)]
    specific = episode_specific_facts(all_ids)
    payload = {**prev.payload, **{k: v for k, v in captured.payload.items() if k != "started_at"}}
    meta = {
        **prev.metadata,
        "segment_count": len(captured.segments),
        "freshness": {
            **freshness(prev),
            "checked_at": checked_at,
            "is_current": True,
            "fingerprint": captured.fingerprint,
        },
        **({"specific_facts": specific} if specific else {}),
    }
    vectors = (
        seg_vectors[start:]
        if seg_vectors is not None and len(seg_vectors) == len(captured.segments)
        else None
    )
    patch.add_segments(segments, prepared_vectors=vectors)
    updated = patch.update(
        replace(prev, summary=summary, payload=payload, metadata=meta),
        action="append_messages",
        changes={
            "appended_messages": len(segments),
            "segment_count": {"from": start, "to": len(captured.segments)},
        },
    )
    jobs.enqueue(session, prev.id, reason="appended")
    return updated, segments
