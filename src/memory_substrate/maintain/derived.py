"""What ``configure``, ``reindex`` and ``repair`` do with derived backends (FalkorDB, Kùzu, LanceDB).

* ``configure`` (applied): a newly selected backend is built from scratch *inside* the
  transaction that saves the setting (``build_selected``): if any build fails, the transaction
  rolls back, so nothing is saved, the half-built copy is dropped, and the error names the
  backend and what failed. Only after the commit is a backend no longer selected dropped.
* ``reindex`` (applied): every configured or requested derived backend is rebuilt from scratch
  in the reindex transaction, after the canonical indexes are rewritten.
* ``repair``: ``derived_indexes.derived_backends`` reports, per configured backend, counts and
  checksums beside the canonical ones, the drift (missing, extra, changed ids) and the outbox
  backlog; applied, it replays the outbox and re-mirrors every drifted id.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from memory_substrate.derived.access import mirror_of
from memory_substrate.derived.registry import BUILTIN
from memory_substrate.errors import BackendError, MemorySubstrateError
from memory_substrate.json_types import JsonObject
from memory_substrate.maintain.results import BackendSwitch, Change, DerivedDiagnostics
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession

log = logging.getLogger(__name__)


Built = Mapping[str, Mapping[str, object]]  # per derived backend, what its rebuild reports


def build_selected(rt: Runtime, session: StoreSession, changes: dict[str, Change]) -> Built:
    """Inside configure's write session, after the new setting is written: build every derived
    backend it turns on. Raises ``BackendError`` (naming the backend and the failure) when one
    cannot be built, so that the caller's transaction rolls back and nothing is saved."""
    mirror = mirror_of(rt)
    names = [str(c["to"]) for k, c in changes.items() if k.endswith("_backend") and c["to"] not in BUILTIN]
    if mirror is None or not names:
        return {}
    built: dict[str, Mapping[str, object]] = {}
    for name in names:
        try:
            built.update(mirror.rebuild_in(session, rt.namespace, [name]))
        except Exception as exc:
            message = exc.message if isinstance(exc, MemorySubstrateError) else f"{type(exc).__name__}: {exc}"
            for started in [*built, name]:  # no half-built copy is left behind
                try:
                    mirror.drop(rt.namespace, started)
                except Exception as drop_exc:  # best effort: the setting is not saved either way
                    log.warning(
                        "could not drop the partial %s copy of %r: %s", started, rt.namespace, drop_exc
                    )
            raise BackendError(
                f"configure: building the {name} derived index of namespace {rt.namespace!r} failed: {message}. "
                "Nothing was saved; the previous configuration stands.",
                details={
                    "backend": name,
                    "namespace": rt.namespace,
                    "error": message,
                    **({"cause": exc.to_dict()} if isinstance(exc, MemorySubstrateError) else {}),
                },
            ) from exc
    if set(mirror.indexes.configured(session.get_config())) <= set(names):
        # Every configured backend now reflects this transaction: pending entries are moot.
        session.outbox_delete([e.seq for e in session.outbox_pending(limit=10**9)])
    return built


def drop_deselected(rt: Runtime, changes: dict[str, Change], built: Built) -> BackendSwitch:
    """After a committed configure: drop the derived backends no longer selected."""
    mirror = mirror_of(rt)
    if mirror is None:
        return {}
    dropped: list[object] = []
    for key, change in changes.items():
        old = change["from"]
        if key.endswith("_backend") and old and old not in BUILTIN and old != change["to"]:
            try:
                mirror.drop(rt.namespace, str(old))
                dropped.append(old)
            except MemorySubstrateError as exc:  # an unreachable old backend must not block the switch
                log.warning("could not drop the %s copy of %r: %s", old, rt.namespace, exc.message)
    return {"dropped": dropped, "built": built}


def wanted(*names: str) -> list[str]:
    return [n for n in dict.fromkeys(names) if n not in BUILTIN]


def rebuild_in(rt: Runtime, session: StoreSession, names: list[str]) -> Built:
    mirror = mirror_of(rt)
    return mirror.rebuild_in(session, rt.namespace, names) if mirror is not None and names else {}


def diagnostics(rt: Runtime, session: StoreSession) -> DerivedDiagnostics:
    """Drift per configured derived backend (empty when only built-in backends are configured)."""
    mirror = mirror_of(rt)
    if mirror is None or not mirror.indexes.configured(session.get_config()):
        return {}
    out: DerivedDiagnostics = {"outbox_pending": session.outbox_count()}
    if rt.namespace in mirror.last_error:
        out["last_sync_error"] = mirror.last_error[rt.namespace]
    try:
        out["backends"] = mirror.check(session, rt.namespace)
    except MemorySubstrateError as exc:
        out["error"] = exc.to_dict()
    return out


def repair_in(rt: Runtime, session: StoreSession) -> Mapping[str, object]:
    mirror = mirror_of(rt)
    if mirror is None or not mirror.indexes.configured(session.get_config()):
        return {}
    return mirror.repair_in(session, rt.namespace)


def graph_mirror_counts(rt: Runtime) -> JsonObject | None:
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
        "counts": {
            f: {"canonical": v["canonical"]["count"], "backend": v["backend"]["count"]}
            for f, v in check["families"].items()
        },
        "missing_backend_counts": {f: v["missing"] for f, v in check["families"].items()},
    }


def health(rt: Runtime, session: StoreSession) -> JsonObject:
    """For ``structure`` and ``doctor``: each configured derived backend's reachability, whether
    it is built, the outbox backlog, and ``problems``: one line per index that is unreachable,
    not built, failing to sync, or behind its outbox (reads then fall back to the canonical
    tables, so it is a problem to fix, not an outage)."""
    mirror = mirror_of(rt)
    if mirror is None or not mirror.indexes.configured(session.get_config()):
        return {}
    out = mirror.health(session, rt.namespace)
    problems: list[str] = []
    for name, entry in out.items():
        if not isinstance(entry, dict):
            continue
        if not entry.get("reachable"):
            error = (entry.get("error") or {}).get("message", "unreachable")
            problems.append(f"derived index {name}: unreachable: {error}")
        elif not entry.get("built"):
            problems.append(
                f"derived index {name}: configured but not built (maintain repair or reindex with apply builds it)"
            )
    failing = mirror.last_error.get(rt.namespace)
    if failing:
        out["last_sync_error"] = failing
        problems.append(f"derived index sync failing: {failing}")
    if out.get("outbox_pending"):
        problems.append(
            f"derived indexes behind the store: {out['outbox_pending']} writes not yet mirrored (outbox)"
        )
    out["problems"] = problems
    return out
