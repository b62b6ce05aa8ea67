"""What ``configure``, ``reindex`` and ``repair`` do with derived backends (FalkorDB, Kùzu, LanceDB).

* ``configure`` (applied): a backend no longer selected is dropped (its copy would go stale);
  a newly selected one is built from scratch right away, so reads switch to a complete mirror.
* ``reindex`` (applied): every configured or requested derived backend is rebuilt from scratch
  in the reindex transaction, after the canonical indexes are rewritten.
* ``repair``: ``derived_indexes.derived_backends`` reports, per configured backend, counts and
  checksums beside the canonical ones, the drift (missing, extra, changed ids) and the outbox
  backlog; applied, it replays the outbox and re-mirrors every drifted id.
"""

from __future__ import annotations

import logging
from typing import Any

from memory_substrate.derived.access import mirror_of
from memory_substrate.derived.registry import BUILTIN
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession

log = logging.getLogger(__name__)


def switch_backends(rt: Runtime, changes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """After a committed configure: drop deselected derived backends, build newly selected ones."""
    mirror = mirror_of(rt)
    if mirror is None:
        return {}
    dropped = []
    for change in changes.values():
        old = change.get("from")
        if old and old not in BUILTIN:
            try:
                mirror.drop(rt.namespace, str(old))
                dropped.append(old)
            except MemorySubstrateError as exc:  # an unreachable old backend must not block the switch
                log.warning("could not drop the %s copy of %r: %s", old, rt.namespace, exc.message)
    built = [str(c["to"]) for c in changes.values() if c.get("to") not in BUILTIN]
    try:
        return {"dropped": dropped, "built": mirror.rebuild(rt.namespace, built) if built else {}}
    except MemorySubstrateError as exc:
        # The configuration is committed; reads use the canonical tables until a build succeeds,
        # which the next write (or repair / reindex) retries.
        return {"dropped": dropped, "built": {}, "pending": built, "error": exc.to_dict()}


def wanted(*names: str) -> list[str]:
    return [n for n in dict.fromkeys(names) if n not in BUILTIN]


def rebuild_in(rt: Runtime, session: StoreSession, names: list[str]) -> dict[str, Any]:
    mirror = mirror_of(rt)
    return mirror.rebuild_in(session, rt.namespace, names) if mirror is not None and names else {}


def diagnostics(rt: Runtime, session: StoreSession) -> dict[str, Any]:
    """Drift per configured derived backend (empty when only built-in backends are configured)."""
    mirror = mirror_of(rt)
    if mirror is None or not mirror.indexes.configured(session.get_config()):
        return {}
    out: dict[str, Any] = {"outbox_pending": session.outbox_count()}
    if rt.namespace in mirror.last_error:
        out["last_sync_error"] = mirror.last_error[rt.namespace]
    try:
        out["backends"] = mirror.check(session, rt.namespace)
    except MemorySubstrateError as exc:
        out["error"] = exc.to_dict()
    return out


def repair_in(rt: Runtime, session: StoreSession) -> dict[str, Any]:
    mirror = mirror_of(rt)
    if mirror is None or not mirror.indexes.configured(session.get_config()):
        return {}
    return mirror.repair_in(session, rt.namespace)


def graph_mirror_counts(rt: Runtime) -> dict[str, Any] | None:
    """For ``report``'s graph health: the derived graph backend's counts beside the canonical ones."""
    mirror = mirror_of(rt)
    with rt.read_with_expired() as session:
        name = str(session.get_config().get("graph_backend") or "file")
        if mirror is None or name in BUILTIN:
            return None
        try:
            check = mirror.check(session, rt.namespace).get(name)
        except MemorySubstrateError as exc:
            return {"backend": name, "error": exc.to_dict()}
    if check is None:
        return None
    return {
        "backend": name,
        "in_line": check["in_line"],
        "counts": {f: {"canonical": v["canonical"]["count"], "backend": v["backend"]["count"]}
                   for f, v in check["families"].items()},
        "missing_backend_counts": {f: v["missing"] for f, v in check["families"].items()},
    }


def health(rt: Runtime, session: StoreSession) -> dict[str, Any]:
    """For ``structure``: each configured derived backend's reachability and the outbox backlog."""
    mirror = mirror_of(rt)
    if mirror is None or not mirror.indexes.configured(session.get_config()):
        return {}
    return mirror.health(session, rt.namespace)
