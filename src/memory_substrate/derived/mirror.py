"""Replaying the outbox into derived backends, full rebuilds, and drift checks.

Every operation runs inside a *write* session of the canonical store: it holds the namespace's
write lock, so no write can commit between reading an id's canonical state and mirroring it (a
mirror can never overwrite a newer state with an older one), and the outbox rows it applied are
deleted in the same transaction that read them. If a backend fails, that transaction rolls back
and the rows stay for the next attempt; replays are idempotent.
"""

from __future__ import annotations

import logging

from memory_substrate.derived import fingerprint as fp
from memory_substrate.derived.base import DerivedBackend
from memory_substrate.derived.registry import DerivedIndexes
from memory_substrate.derived.report_types import BackendCheck, SyncReport
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.json_types import JsonObject
from memory_substrate.storage.base import Store, StoreSession

log = logging.getLogger(__name__)
CHUNK = 20_000


class Mirror:
    def __init__(self, store: Store, indexes: DerivedIndexes) -> None:
        self.store = store  # the canonical store itself, never a mirrored wrapper
        self.indexes = indexes
        self.last_error: dict[str, str] = {}

    def _backends(self, session: StoreSession) -> list[DerivedBackend]:
        return [self.indexes.backend(n) for n in self.indexes.configured(session.get_config())]

    def sync(self, namespace: str) -> SyncReport:
        """Apply pending outbox entries to every configured backend (building one that is not built)."""
        report: SyncReport = {"replayed": 0, "backends": {}}
        while True:
            with self.store.write(namespace) as session:
                done = self.sync_in(session, namespace, report)
            if done < CHUNK:
                self.last_error.pop(namespace, None)
                return report

    def sync_in(self, session: StoreSession, namespace: str, report: SyncReport | None = None) -> int:
        """One chunk of ``sync`` inside an open write session; returns how many entries it applied."""
        report = report if report is not None else {"replayed": 0, "backends": {}}
        entries = session.outbox_pending(limit=CHUNK)
        for backend in self._backends(session):
            if not backend.is_built(namespace):
                report["backends"][backend.name] = {"rebuilt": backend.rebuild(namespace, session)}
            elif entries:
                counts = backend.apply(namespace, session, entries)
                prev = report["backends"].setdefault(backend.name, {})
                for k, v in counts.items():
                    done = prev.get(k, 0)  # a count: only ``rebuilt`` holds counts of its own
                    prev[k] = (done if isinstance(done, int) else 0) + v
        session.outbox_delete([e.seq for e in entries])
        report["replayed"] += len(entries)
        return len(entries)

    def sync_quietly(self, namespace: str) -> None:
        """``sync`` after a committed write: a backend failure is logged, never raised (the write stands)."""
        try:
            self.sync(namespace)
        except Exception as exc:  # any failure: the canonical write already committed and must stand
            message = exc.message if isinstance(exc, MemorySubstrateError) else f"{type(exc).__name__}: {exc}"
            self.last_error[namespace] = message
            log.warning("derived index sync of %r deferred (the outbox keeps it): %s", namespace, message)

    def rebuild(self, namespace: str, names: list[str]) -> dict[str, dict[str, int]]:
        """Drop and rebuild ``names`` from canonical rows in their own write session."""
        with self.store.write(namespace) as session:
            return self.rebuild_in(session, namespace, names)

    def rebuild_in(
        self, session: StoreSession, namespace: str, names: list[str]
    ) -> dict[str, dict[str, int]]:
        out = {name: self.indexes.backend(name).rebuild(namespace, session) for name in names}
        if set(self.indexes.configured(session.get_config())) <= set(names):
            # Every configured backend now reflects this transaction: pending entries are moot.
            session.outbox_delete([e.seq for e in session.outbox_pending(limit=10**9)])
        return out

    def drop(self, namespace: str, name: str) -> None:
        self.indexes.backend(name).drop(namespace)

    def check(self, session: StoreSession, namespace: str) -> dict[str, BackendCheck]:
        """Per configured backend: counts and checksums beside the canonical ones, and the drift."""
        out: dict[str, BackendCheck] = {}
        for backend in self._backends(session):
            expected = fp.canonical(session, backend.families, backend.owner_types)
            actual = backend.fingerprint(namespace)
            families = fp.drift(expected, actual)
            out[backend.name] = {
                "built": backend.is_built(namespace),
                "in_line": all(f["in_line"] for f in families.values()),
                "families": families,
            }
        return out

    def health(self, session: StoreSession, namespace: str) -> JsonObject:
        """Per configured backend: reachable, built, and (for vector holders) whether vectors are indexed.

        Cheap (no full scan): what the graph toolset's ``health_check`` reports as ``falkordb`` / ``vector_index``.
        """
        out: JsonObject = {}
        for name in self.indexes.configured(session.get_config()):
            entry: JsonObject = {"reachable": False, "built": False, "vector_index": False}
            try:
                backend = self.indexes.backend(name)
                entry["built"] = built = backend.is_built(namespace)
                entry["reachable"] = True
                entry["vector_index"] = "vectors" in backend.families and built
            except MemorySubstrateError as exc:
                entry["error"] = exc.to_dict()
            out[name] = entry
        out["outbox_pending"] = session.outbox_count()
        return out

    def repair_in(self, session: StoreSession, namespace: str) -> JsonObject:
        """Inside a write session: replay the outbox, then re-mirror every id whose backend copy differs."""
        report: SyncReport = {"replayed": 0, "backends": {}}
        while self.sync_in(session, namespace, report) >= CHUNK:
            pass
        fixed: dict[str, JsonObject] = {}
        for backend in self._backends(session):
            expected = fp.canonical(session, backend.families, backend.owner_types)
            ids = fp.mismatched_ids(expected, backend.fingerprint(namespace))
            if ids:
                fixed[backend.name] = {
                    "ids": {f: len(v) for f, v in ids.items()},
                    **backend.repair(namespace, session, ids),
                }
        rebuilt = {k: v["rebuilt"] for k, v in report["backends"].items() if "rebuilt" in v}
        return {"replayed": report["replayed"], "rebuilt": rebuilt, "remirrored": fixed}
