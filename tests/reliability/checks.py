"""What "nothing lost, nothing half-written" means, checked through the store's own ports."""

from __future__ import annotations

import re
from typing import Any

from memory_substrate.storage.base import Store
from tests.reliability.writer import BATCH, SEGMENTS

_BATCH_TITLE = re.compile(r"^(?P<token>.+x\d+)b\d+$")


def missing_acknowledged(store: Store, namespace: str, acks: list[dict[str, Any]]) -> list[str]:
    """Acknowledged writes that are absent or incomplete: ``"<token>: why"`` for each."""
    problems: list[str] = []
    ids = [i for ack in acks for i in ack["ids"]]
    with store.read(namespace) as s:
        found = s.get_objects(ids)
        for ack in acks:
            for oid in ack["ids"]:
                obj = found.get(oid)
                if obj is None:
                    problems.append(f"{ack['token']}: {oid} missing")
                elif ack["kind"] == "ingest":
                    segments = s.get_segments(oid)
                    if len(segments) != SEGMENTS or any(ack["token"] not in g.text for g in segments):
                        problems.append(f"{ack['token']}: source {oid} has {len(segments)} complete segments")
                elif not obj.title.startswith(ack["token"]):
                    problems.append(f"{ack['token']}: {oid} has title {obj.title!r}")
    return problems


def half_written(store: Store, namespace: str) -> list[str]:
    """Anything in the namespace that a complete write would not have left behind."""
    problems: list[str] = []
    with store.read(namespace) as s:
        objects = s.list_objects(limit=10**9)
        batches: dict[str, int] = {}
        for obj in objects:
            if obj.object_type == "source" and obj.kind == "conversation":
                n = s.count_segments(obj.id)
                if n != SEGMENTS:
                    problems.append(f"source {obj.id} has {n} of {SEGMENTS} segments")
            match = _BATCH_TITLE.match(obj.title) if obj.object_type == "knowledge" else None
            if match:
                batches[match["token"]] = batches.get(match["token"], 0) + 1
            if not s.list_events(object_id=obj.id, limit=1):
                problems.append(f"{obj.id} has no audit event")
        problems += [f"batch {t} has {n} of {BATCH} items" for t, n in batches.items() if n != BATCH]
        patches = {p.id for p in s.list_patches(limit=10**9)}
        events = s.list_events(limit=10**9)
        problems += [
            f"event {e.id} cites missing patch {e.patch_id}" for e in events if e.patch_id not in patches
        ]
        problems += [f"object {i} missing from the full-text index" for i in s.objects_missing_search()]
        problems += [f"segment {k} missing from the full-text index" for k in s.segments_missing_search()]
    return problems
