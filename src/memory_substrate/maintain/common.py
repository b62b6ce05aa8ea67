"""What every maintenance mode shares: the apply gate, the result envelope, loading, time.

The apply gate. A mutating mode opens a *write* session and a ``Patch`` only when
``options.apply`` is true; otherwise it plans inside a *read* session and writes nothing. Planning
and applying run the same code against a ``Workspace``: with a patch each change is written
through it, without one the change is only simulated on the in-memory copy, so a dry run reports
exactly what the applied call would do (and a ``cycle`` plans each step against the state the
previous step would leave).

Result envelope of a mutating mode (``Envelope``: its head, the mode's fields, ``counts``, its tail)::

    status   "applied" | "dry_run" | "noop"   ("noop": nothing to change, apply or not)
    applied  true only when a patch was written
    dry_run  true when options.apply was not true
    counts   what was changed (or, in a dry run, what would be)
    patch_id / applied_operations / audit_event_ids   null / 0 / [] unless applied
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from memory_substrate.json_types import JsonObject
from memory_substrate.maintain.results import MutationHead, MutationTail, RefView
from memory_substrate.models import AuditEvent, MemoryObject, PatchRecord
from memory_substrate.patch import Patch
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.storage.paging import ALL as ALL  # `X as X`: re-exported for maintain/
from memory_substrate.storage.paging import PAGE as PAGE
from memory_substrate.storage.paging import load_objects as load_objects
from memory_substrate.util import new_id, now_iso, parse_time

TOOL = "memory_maintain"
STATUS_RANK = {"active": 3, "contested": 2, "candidate": 1}


# --- sessions and results ----------------------------------------------------------------
@contextmanager
def maintenance_session(
    rt: Runtime, mode: str, *, apply: bool, reason: str | None, embed: bool = True
) -> Iterator[tuple[StoreSession, Patch | None]]:
    """A write session with a patch when applying, else a read session and no patch."""
    if not apply:
        with rt.read_with_expired() as session:
            yield session, None
        return
    with rt.write(TOOL, mode, reason, embed=embed) as (session, patch):
        yield session, patch


def commit_if_changed(patch: Patch | None, summary: Mapping[str, object]) -> PatchRecord | None:
    if patch is None or patch.operations == 0:
        return None
    return patch.commit(dict(summary))


def maintenance_event(patch: Patch, object_id: str, action: str, data: Mapping[str, object]) -> None:
    """An audit event for a change that is not an object write (config, relations, indexes)."""
    patch.events.append(AuditEvent(new_id("event"), patch.id, object_id, action, now_iso(), dict(data)))
    patch.operations += 1


@dataclass(frozen=True)
class Envelope:
    """What a mutating mode's result says about the run besides its own fields."""

    mode: str
    apply: bool
    change_count: int
    patch: Patch | None
    record: PatchRecord | None

    def head(self) -> MutationHead:
        applied = self.record is not None
        return {
            "result_type": f"{self.mode}_result",
            "mode": self.mode,
            "status": "noop" if self.change_count == 0 else ("applied" if applied else "dry_run"),
            "applied": applied,
            "dry_run": not self.apply,
        }

    def tail(self) -> MutationTail:
        record, patch = self.record, self.patch
        tail: MutationTail = {
            "patch_id": record.id if record else None,
            "applied_operations": record.operations if record else 0,
            "audit_event_ids": patch.event_ids if (patch is not None and record is not None) else [],
        }
        if not self.apply and self.change_count:
            tail["next_actions"] = ["review_planned_changes", "rerun_with_options_apply_true"]
        return tail


# --- loading -------------------------------------------------------------------------------
# --- time and small predicates -----------------------------------------------------------
def reference(value: datetime | None) -> datetime:
    return value if value is not None else datetime.now(UTC)


def when(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def evidence_count(obj: MemoryObject) -> int:
    return len({(e.get("source_id"), e.get("segment_id")) for e in obj.evidence_refs})


def merge_evidence(base: list[JsonObject], extra: list[JsonObject]) -> tuple[list[JsonObject], int]:
    """``base`` plus the refs of ``extra`` it lacks (by source and segment); and how many were added."""
    seen = {(e.get("source_id"), e.get("segment_id")) for e in base}
    out = list(base)
    for ref in extra:
        key = (ref.get("source_id"), ref.get("segment_id"))
        if key not in seen:
            seen.add(key)
            out.append(ref)
    return out, len(out) - len(base)


def ref_view(obj: MemoryObject) -> RefView:
    return {
        "id": obj.id,
        "object_type": obj.object_type,
        "kind": obj.kind,
        "status": obj.status,
        "title": obj.title,
    }


# --- the workspace -------------------------------------------------------------------------
@dataclass
class Workspace:
    """Knowledge in play for one call, and the changes made to it (written or simulated)."""

    items: dict[str, MemoryObject]
    patch: Patch | None
    changes: int = 0
    touched: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, objects: list[MemoryObject], patch: Patch | None) -> Workspace:
        return cls({o.id: o for o in objects}, patch)

    def set_status(self, obj: MemoryObject, status: str, reason: str | None, **extra: object) -> MemoryObject:
        if self.patch is not None:
            new = self.patch.set_status(obj, status, reason, **extra)
        else:
            new = replace(obj, status=status, updated_at=now_iso(), version=obj.version + 1)
        return self._keep(new)

    def update(
        self, obj: MemoryObject, *, action: str, changes: JsonObject, derive: bool = True
    ) -> MemoryObject:
        if self.patch is not None:
            new = self.patch.update(obj, action=action, changes=changes, derive=derive)
        else:
            new = replace(obj, updated_at=now_iso(), version=obj.version + 1)
        return self._keep(new)

    def _keep(self, obj: MemoryObject) -> MemoryObject:
        self.items[obj.id] = obj
        self.changes += 1
        if obj.id not in self.touched:
            self.touched.append(obj.id)
        return obj
