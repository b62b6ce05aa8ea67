"""memory_maintain: structural and lifecycle maintenance.

Structural: ``configure``, ``structure``, ``audit``, ``reindex``, ``repair``. Lifecycle:
``promote_candidates``, ``merge_duplicates``, ``resolve_duplicates``, ``archive_source``,
``decay_stale``, ``cycle``, ``report``. ``structure``, ``audit`` and ``report`` are read-only;
every other mode changes nothing unless ``options.apply`` is true (see ``common.py`` for the
result envelope), and what it changes goes through one ``Patch`` with its audit events.
This module validates and dispatches; each mode lives in the module named for it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from memory_substrate.answers.shaping import Cursor, fit_together
from memory_substrate.answers.views import snippet
from memory_substrate.errors import NotAvailableError, NotFoundError
from memory_substrate.graph import deferred
from memory_substrate.graph.extract import configured_extractor, drain
from memory_substrate.graph.window_run import Extractor
from memory_substrate.json_types import JsonObject
from memory_substrate.maintain import schemas
from memory_substrate.maintain.archive import archive_source
from memory_substrate.maintain.backends import check_backend, effective
from memory_substrate.maintain.common import (
    Envelope,
    commit_if_changed,
    maintenance_event,
    maintenance_session,
)
from memory_substrate.maintain.compact import shape_maintenance
from memory_substrate.maintain.cycle import cycle, decay_stale, merge_duplicates, promote_candidates
from memory_substrate.maintain.derived import Built, build_selected, drop_deselected
from memory_substrate.maintain.derived import health as derived_health
from memory_substrate.maintain.expire import expire
from memory_substrate.maintain.merge_entities import MergeEntitiesInput, merge_entities
from memory_substrate.maintain.modes import MODES_DECLARED
from memory_substrate.maintain.outcome import settle_extract
from memory_substrate.maintain.reindex import Progress, reindex
from memory_substrate.maintain.repair import repair
from memory_substrate.maintain.report import build_report
from memory_substrate.maintain.report_types import MaintenanceReport
from memory_substrate.maintain.resolve import resolve_duplicates
from memory_substrate.maintain.results import (
    ArchiveSourceResult,
    AuditEventView,
    AuditPatchView,
    AuditResult,
    BackendSwitch,
    Change,
    ConfigureResult,
    CycleResult,
    DecayResult,
    EmbedderInUse,
    EmbedDrain,
    EmbedResult,
    ExpireResult,
    MergeDuplicatesResult,
    MergeEntitiesResult,
    PromoteResult,
    ReindexResult,
    RepairResult,
    ResolveResult,
    StructureResult,
)
from memory_substrate.models import Relation
from memory_substrate.redaction import Redactions, redact_value
from memory_substrate.runtime import Runtime
from memory_substrate.validation import mode_of, parse

MODES = tuple(m.name for m in MODES_DECLARED)
LONG_RUNNING = ("_reindex", "_extract")  # handlers that take progress (and extract's model) besides the input
AUDIT_LIST_TOKENS = 650  # compact audit: each list's share of the response budget


def _derivation(rel: Relation) -> object:
    """How a relation came to be (``relation_schema.derivation``); ``unknown`` when it does not say."""
    schema = rel.payload.get("relation_schema", {})
    # relation_schema, when present, is an object: derived_relations is its only writer.
    return schema.get("derivation", "unknown") if isinstance(schema, dict) else "unknown"


class MaintainService:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    def run(
        self,
        mode: str,
        input_data: JsonObject,
        options: JsonObject | None = None,
        *,
        progress: Progress | None = None,
        extractor: Extractor | None = None,
    ) -> JsonObject:
        """Run one mode. ``progress(done, total, phase)`` is called during ``reindex``.

        Raises ``UnsupportedModeError`` for an unknown mode, ``ValidationError`` for bad
        input/options, ``NotFoundError``/``ConflictError`` for ids that do not qualify, and
        ``NotAvailableError`` for a backend this build does not support.
        """
        declared = mode_of(MODES_DECLARED, mode)
        options = options or {}
        if declared.handler in LONG_RUNNING:
            long_running: Callable[..., Mapping[str, object]] = getattr(self, declared.handler)
            return dict(long_running(input_data, options, progress=progress, extractor=extractor))
        found = Redactions()
        if declared.writes:  # a reason, a resolved duplicate's new title or summary is kept
            input_data = redact_value(input_data, found)
        # Each handler returns its mode's result (results.py); from here on it is handled by key.
        handler: Callable[[JsonObject, JsonObject], Mapping[str, object]] = getattr(self, declared.handler)
        result = dict(handler(input_data, options))
        result.setdefault("mode", mode)
        return found.report(shape_maintenance(mode, result, options))

    # --- long-running: they report progress, and answer unshaped ----------------------------
    def _reindex(
        self,
        input_data: JsonObject,
        options: JsonObject,
        *,
        progress: Progress | None,
        extractor: Extractor | None,
    ) -> ReindexResult:
        parse(schemas.Empty, input_data, "input_data")
        return reindex(self.rt, parse(schemas.ReindexOptions, options, "options"), progress=progress)

    def _extract(
        self,
        input_data: JsonObject,
        options: JsonObject,
        *,
        progress: Progress | None,
        extractor: Extractor | None,
    ) -> JsonObject:
        data = parse(schemas.ExtractInput, input_data, "input_data")
        opts = parse(schemas.ExtractOptions, options, "options")
        chosen = extractor if opts.extractor == "sampling" else configured_extractor(self.rt.settings)
        if opts.extractor == "sampling" and extractor is None:
            raise NotAvailableError(
                "options.extractor='sampling' needs an MCP client that offers sampling; call through the MCP server",
                details={"extractor": "sampling"},
            )
        return settle_extract(
            drain(
                self.rt,
                chosen,
                episode_ids=data.episode_ids,
                limit=data.limit,
                apply=opts.apply,
                progress=progress,
            )
        )

    def _embed(self, input_data: JsonObject, options: JsonObject) -> EmbedResult:
        """The vectors captures left to the background worker (graph/deferred.py), made now;
        without ``apply`` only what waits."""
        data = parse(schemas.EmbedInput, input_data, "input_data")
        apply = parse(schemas.ApplyOptions, options, "options").apply
        drained: EmbedDrain = {}
        status = "dry_run"
        if apply:
            requeued = deferred.retry_failed(self.rt) if data.retry_failed else 0
            done = deferred.drain_all(self.rt, limit=data.limit)
            status = "failed" if done.get("error") else "applied"
            drained = {
                "requeued": requeued,
                "embedded": done["embedded"],
                "jobs": done["jobs"],
                "failed": done["failed"],
            }
            if "error" in done:
                drained["error"] = done["error"]
        with self.rt.read_with_expired() as session:
            queue = deferred.status(session)
        return {
            "result_type": "embed_result",
            "apply": apply,
            "dry_run": not apply,
            "status": status,
            **drained,
            "queue": queue,
        }

    # --- structural ----------------------------------------------------------------------
    def _configure(self, input_data: JsonObject, options: JsonObject) -> ConfigureResult:
        data = parse(schemas.ConfigureInput, input_data, "input_data")
        apply = parse(schemas.ApplyOptions, options, "options").apply
        wanted = data.model_dump(exclude_none=True)
        backends = {
            field: check_backend(field, value, self.rt.settings)
            for field, value in wanted.items()
            if field.endswith("_backend")
        }
        warnings: list[str] = []
        if not wanted:
            warnings.append(
                "nothing to configure: supply graph_backend, semantic_backend and/or token_budget"
            )
        if wanted.get("semantic_backend") == "builtin" and self.rt.embedder_or_none() is None:
            reason = self.rt.semantic_status().get("reason")
            warnings.append(f"no embedder is available ({reason}); vectors are built by reindex once one is")
        with maintenance_session(
            self.rt, "configure", apply=apply, reason="configure derived-index backends"
        ) as (
            session,
            patch,
        ):
            current = session.get_config()
            changes: dict[str, Change] = {
                k: {"from": current.get(k), "to": v} for k, v in wanted.items() if current.get(k) != v
            }
            built: Built = {}
            if patch is not None:
                for key, change in changes.items():
                    session.set_config(key, change["to"])
                    maintenance_event(patch, f"config:{key}", "configure", change)
                # Every derived index the setting turns on is built in this transaction; a failure
                # raises and rolls the setting back (maintain/derived.py).
                built = build_selected(self.rt, session, changes)
            record = commit_if_changed(patch, {"changes": changes})
            config: JsonObject = (
                {**current, **{k: c["to"] for k, c in changes.items()}} if record else current
            )
        derived: BackendSwitch = drop_deselected(self.rt, changes, built) if record is not None else {}
        env = Envelope("configure", apply, len(changes), patch, record)
        return {
            **env.head(),
            "changes": changes,
            "config": config,
            "effective_backends": effective(config),
            "backends": backends,
            "derived_backends": derived,
            "warnings": warnings,
            "counts": {"changed": len(changes)},
            **env.tail(),
        }

    def _repair(self, input_data: JsonObject, options: JsonObject) -> RepairResult:
        parse(schemas.Empty, input_data, "input_data")
        return repair(self.rt, apply=parse(schemas.ApplyOptions, options, "options").apply)

    def _structure(self, input_data: JsonObject, options: JsonObject) -> StructureResult:
        parse(schemas.Empty, input_data, "input_data")
        parse(schemas.ReadOnlyOptions, options, "options")
        store = self.rt.store
        with self.rt.read_with_expired() as session:
            rows = session.count_objects()
            segments = session.count_segments()
            relations = session.list_relations(limit=1_000_000)
            vectors = session.vector_stats()
            config = session.get_config()
            patches = session.list_patches(limit=1)
            mirrors = derived_health(self.rt, session)
            waiting = deferred.status(session)
        by_type: Counter[str] = Counter()
        by_status: dict[str, Counter[str]] = {}
        by_kind: dict[str, Counter[str]] = {}
        for object_type, kind, status, n in rows:
            by_type[object_type] += n
            by_status.setdefault(object_type, Counter())[status] += n
            by_kind.setdefault(object_type, Counter())[kind] += n
        derivations = Counter(_derivation(r) for r in relations)
        result: StructureResult = {
            "result_type": "structure_result",
            "namespace": self.rt.namespace,
            "storage": {
                "backend": store.backend,
                "location": store.location,
                "schema_version": store.schema_version(),
            },
            "counts": {
                "objects": sum(by_type.values()),
                "by_object_type": dict(by_type),
                "by_status": {k: dict(v) for k, v in by_status.items()},
                "by_kind": {k: dict(v) for k, v in by_kind.items()},
                "segments": segments,
                "relations": len(relations),
                "relations_by_derivation": dict(derivations),
                "vectors": vectors,
            },
            "config": config,
            "last_patch_at": patches[0].created_at if patches else None,
            "semantic_backend": self._embedder_in_use(),
            # Segments whose vectors the background worker has yet to make (graph/deferred.py).
            "deferred_vectors": waiting,
        }
        if mirrors:
            result["derived_backends"] = mirrors
        return result

    def _embedder_in_use(self) -> EmbedderInUse:
        """The configured embedder and the one this namespace uses (no model is loaded)."""
        choice = self.rt.embedder_choice()
        used: EmbedderInUse = {"configured": self.rt.settings.embedder, "provider": choice.provider}
        if choice.kept:
            used["kept"] = choice.kept
        return used

    def _audit(self, input_data: JsonObject, options: JsonObject) -> AuditResult:
        data = parse(schemas.AuditInput, input_data, "input_data")
        opts = parse(schemas.AuditOptions, options, "options")
        fingerprint = Cursor.fingerprint_of("audit", data.model_dump(), opts.model_dump())
        offset = Cursor.decode(opts.cursor, fingerprint)
        end = offset + opts.max_items
        with self.rt.read_with_expired() as session:
            events = session.list_events(object_id=data.object_id, limit=end + 1)
            patches = session.list_patches(limit=end + 1) if data.object_id is None else []
            if data.object_id is not None and session.get_object(data.object_id) is None and not events:
                raise NotFoundError(f"object {data.object_id} not found", details={"id": data.object_id})
        more = len(events) > end or len(patches) > end
        events, patches = events[offset:end], patches[offset:end]
        full = opts.detail == "full"
        event_views: list[AuditEventView] = [
            {
                "event_id": e.id,
                "patch_id": e.patch_id,
                "object_id": e.object_id,
                "action": e.action,
                "created_at": e.created_at,
                "data": e.data,
            }
            for e in events
        ]
        patch_views: list[AuditPatchView] = [
            {
                "patch_id": p.id,
                "tool": p.tool,
                "mode": p.mode,
                "created_at": p.created_at,
                "reason": p.reason if full or p.reason is None else snippet(p.reason, 160),
                "operations": p.operations,
            }
            for p in patches
        ]
        if not full:
            # One cursor pages both lists, so both are cut to the length that fits each.
            fits = fit_together(
                {"events": event_views, "patches": patch_views}, ("events", "patches"), AUDIT_LIST_TOKENS
            )
            if fits is not None:
                more, end = True, offset + fits
                event_views, patch_views = event_views[:fits], patch_views[:fits]
        return {
            "result_type": "audit_result",
            "object_id": data.object_id,
            "events": event_views,
            "patches": patch_views,
            "counts": {"events": len(event_views), "patches": len(patch_views)},
            "next_cursor": Cursor(end, fingerprint).encode() if more else None,
        }

    # --- lifecycle -----------------------------------------------------------------------
    def _promote_candidates(self, input_data: JsonObject, options: JsonObject) -> PromoteResult:
        data = parse(schemas.PromoteInput, input_data, "input_data")
        return promote_candidates(self.rt, data, apply=parse(schemas.ApplyOptions, options, "options").apply)

    def _merge_duplicates(self, input_data: JsonObject, options: JsonObject) -> MergeDuplicatesResult:
        parse(schemas.Empty, input_data, "input_data")
        return merge_duplicates(self.rt, apply=parse(schemas.ApplyOptions, options, "options").apply)

    def _resolve_duplicates(self, input_data: JsonObject, options: JsonObject) -> ResolveResult:
        data = parse(schemas.ResolveDuplicatesInput, input_data, "input_data")
        return resolve_duplicates(self.rt, data, apply=parse(schemas.ApplyOptions, options, "options").apply)

    def _archive_source(self, input_data: JsonObject, options: JsonObject) -> ArchiveSourceResult:
        data = parse(schemas.ArchiveSourceInput, input_data, "input_data")
        return archive_source(self.rt, data, apply=parse(schemas.ApplyOptions, options, "options").apply)

    def _decay_stale(self, input_data: JsonObject, options: JsonObject) -> DecayResult:
        data = parse(schemas.DecayInput, input_data, "input_data")
        return decay_stale(self.rt, data, apply=parse(schemas.ApplyOptions, options, "options").apply)

    def _expire(self, input_data: JsonObject, options: JsonObject) -> ExpireResult:
        data = parse(schemas.TimeInput, input_data, "input_data")
        return expire(self.rt, data, apply=parse(schemas.ApplyOptions, options, "options").apply)

    def _cycle(self, input_data: JsonObject, options: JsonObject) -> CycleResult:
        data = parse(schemas.CycleInput, input_data, "input_data")
        return cycle(self.rt, data, apply=parse(schemas.ApplyOptions, options, "options").apply)

    def _merge_entities(self, input_data: JsonObject, options: JsonObject) -> MergeEntitiesResult:
        data = parse(MergeEntitiesInput, input_data, "input_data")
        return merge_entities(self.rt, data, apply=parse(schemas.ApplyOptions, options, "options").apply)

    def _report(self, input_data: JsonObject, options: JsonObject) -> MaintenanceReport:
        data = parse(schemas.ReportInput, input_data, "input_data")
        return build_report(self.rt, data, parse(schemas.ReportOptions, options, "options"))
