"""``expire``: sweep objects whose ``metadata.expires_at`` has passed (the graph toolset's TTL).

Reads already hide expired objects (expiry.py); the sweep makes it durable and visible in the
lifecycle: each one gets status ``expired`` through one patch with an audit event, so history
says when and why. Dry run unless ``options.apply``; ``reference_time`` defaults to the
runtime's clock.
"""

from __future__ import annotations

from memory_substrate.expiry import TTL_KEY, expires_at, is_expired
from memory_substrate.maintain.common import Envelope, commit_if_changed, maintenance_session
from memory_substrate.maintain.results import ExpiredItem, ExpireResult
from memory_substrate.maintain.schemas import TimeInput
from memory_substrate.runtime import Runtime

SAMPLE = 50


def expire(rt: Runtime, data: TimeInput, *, apply: bool) -> ExpireResult:
    ref = data.reference_time or rt.clock()
    with maintenance_session(rt, "expire", apply=apply, reason="expire: objects past their expires_at") as (
        session,
        patch,
    ):
        ids = sorted({oid for _, oid in session.find_keys([TTL_KEY])})
        objs = session.get_objects(ids)
        due = sorted(
            (o for o in objs.values() if is_expired(o, ref) and o.status != "expired"), key=lambda o: o.id
        )
        if patch is not None:
            for obj in due:
                when = expires_at(obj)
                patch.set_status(
                    obj, "expired", "expires_at passed", expires_at=when.isoformat() if when else None
                )
        record = commit_if_changed(patch, {"expired": len(due)})
    items: list[ExpiredItem] = [
        {
            "id": o.id,
            "object_type": o.object_type,
            "kind": o.kind,
            "title": o.title,
            "status_was": o.status,
            "expires_at": o.metadata.get("expires_at"),
        }
        for o in due[:SAMPLE]
    ]
    env = Envelope("expire", apply, len(due), patch, record)
    return {
        **env.head(),
        "items": items,
        "reference_time": ref.isoformat(),
        "counts": {"expired": len(due), "with_ttl": len(ids)},
        **env.tail(),
    }
