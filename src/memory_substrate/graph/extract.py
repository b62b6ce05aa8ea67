"""Drain the extraction queue with a model: read the episode (no lock held), ask the model
window by window (no lock held, ``graph/window_run.py``), then apply every valid item in one
patch. A window that fails (model unreachable, an answer with nothing valid even after a repair
request) is in the trace and the job's error; the other windows are applied, and the job is
``retrying`` until its third failed run parks it as ``failed``."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from memory_substrate import traces
from memory_substrate.errors import MemorySubstrateError, NotAvailableError
from memory_substrate.graph import extraction_prompt as prompt
from memory_substrate.graph import jobs
from memory_substrate.graph.apply import ExtractionApplier, Governance
from memory_substrate.graph.extraction_trace import (
    DroppedItem,
    ExtractionRunTrace,
    ExtractionTrace,
    ExtractResult,
    ExtractRun,
    LeftOut,
    Windowing,
    WindowTrace,
)
from memory_substrate.graph.schemas import Extraction
from memory_substrate.graph.stored import text_or_none
from memory_substrate.graph.window_run import Extractor, run_window
from memory_substrate.json_types import JsonObject
from memory_substrate.runtime import Runtime
from memory_substrate.settings import Settings
from memory_substrate.storage.base import StoreSession
from memory_substrate.taxonomy import MAX_ENTITIES_PER_EPISODE

Progress = Callable[[int, int, str], None]
SYSTEM_REASON = "extracted from a captured episode by the configured model"


def configured_extractor(settings: Settings) -> Extractor | None:
    if not (settings.llm_base_url and settings.llm_model):
        return None
    from memory_substrate.llm.openai_compat import OpenAICompatibleChat

    return OpenAICompatibleChat(
        settings.llm_base_url,
        settings.llm_model,
        api_key=settings.llm_api_key,
        timeout_s=settings.llm_timeout_s,
        window_timeout_s=settings.llm_window_timeout_s,
        max_retries=settings.llm_max_retries,
        backoff_s=settings.llm_backoff_s,
        max_in_flight=settings.llm_max_in_flight,
    )


def no_extractor_error() -> NotAvailableError:
    return NotAvailableError(
        "no extraction model is configured: set MEMORY_SUBSTRATE_LLM_BASE_URL and MEMORY_SUBSTRATE_LLM_MODEL "
        "(any OpenAI-compatible endpoint, e.g. Ollama at http://localhost:11434/v1), use options.extractor="
        '"sampling" from an MCP client that offers sampling, or supply extractions yourself with '
        "memory_remember mode extraction",
        details={"settings": ["MEMORY_SUBSTRATE_LLM_BASE_URL", "MEMORY_SUBSTRATE_LLM_MODEL"]},
    )


def _episode_windows(rt: Runtime, episode_id: str) -> tuple[list[prompt.Window], Windowing] | None:
    """One model request per window of the whole episode (every segment is read; a long episode
    is cut into overlapping windows, never truncated), and the windowing facts for the trace."""
    with rt.read_with_expired() as session:
        ep = session.get_object(episode_id)
        if ep is None or ep.object_type != "source":
            return None
        segs = session.get_segments(episode_id)
    lines = [
        prompt.EpisodeLine(
            s.id,
            str(s.metadata.get("name") or s.metadata.get("role") or "text"),
            text_or_none(s.metadata.get("created_at")),
            s.text,
        )
        for s in segs
    ]
    return prompt.plan(ep.title, lines)


def merge_traces(traces: Sequence[ExtractionTrace]) -> ExtractionRunTrace:
    """One trace for the windows of an episode: counts summed, lists joined, the rest from the first."""
    # Merged key by key, each value with one of its own type: the applier's trace keys, typed
    # alike in the run's trace (all optional there), so the merge is a run trace by construction.
    return cast(ExtractionRunTrace, _merge(traces))


def _merge(traces: Sequence[Mapping[str, object]]) -> JsonObject:
    merged: JsonObject = {}
    for trace in traces:
        for key, value in trace.items():
            have = merged.get(key)
            if key not in merged:
                merged[key] = (
                    dict(value)
                    if isinstance(value, dict)
                    else list(value)
                    if isinstance(value, list)
                    else value
                )
            elif isinstance(value, dict) and isinstance(have, dict):
                merged[key] = _merge([have, value])
            elif isinstance(value, list) and isinstance(have, list):
                have.extend(value)
            elif (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and isinstance(have, int | float)
            ):
                merged[key] = have + value
    return merged


def _scope(session: StoreSession, episode_id: str) -> str:
    """The episode's project when its capture names one, else the namespace as a whole."""
    ep = session.get_object(episode_id)
    origin = (ep.payload.get("origin") if ep else None) or {}
    project = (origin.get("project") if isinstance(origin, dict) else None) or ""
    slug = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in str(project))[:60].strip("-")
    return f"scope:{slug}" if slug else "scope:namespace"


def _mark_running(rt: Runtime, episode_id: str, extractor: Extractor) -> None:
    with rt.write("memory_maintain", "extract", SYSTEM_REASON, embed=False) as (session, _patch):
        jobs.start(session, episode_id, extractor=extractor.name)


def _apply(
    rt: Runtime,
    episode_id: str,
    extractor: Extractor,
    extractions: list[Extraction],
    windows: int,
    base: ExtractionRunTrace,
    errors: list[JsonObject],
) -> ExtractRun:
    with rt.write("memory_maintain", "extract", SYSTEM_REASON) as (session, patch):
        gov = Governance(
            reason=SYSTEM_REASON,
            memory_source="system_generated",
            scope_refs=[_scope(session, episode_id)],
            extractor=extractor.name,
            evidence_status="extracted",
        )
        # Each window's result goes through the same resolution, in order, in one patch: an
        # entity a later window names again resolves to the one an earlier window made. Spec
        # 004's 10 entities hold per window of a long episode (what one request sees).
        applier = ExtractionApplier(
            patch,
            rt.embedder_or_none(),
            episode_limit=MAX_ENTITIES_PER_EPISODE * windows,
            whole_episode=True,
            lenient=True,
        )
        trace: ExtractionRunTrace = (
            merge_traces([applier.apply(episode_id, ex, gov) for ex in extractions]) if extractions else {}
        )
        unresolved = trace.get("dropped", [])  # facts naming no entity, dropped by the applier
        trace.update(base)
        trace["errors"] = [*trace.get("errors", []), *errors]
        trace["dropped"] = [*base.get("dropped", []), *unresolved]
        trace["patch_id"] = patch.id
        record = traces.record(session, "extraction", episode_id, trace)
        job = jobs.finish(
            session,
            episode_id,
            trace_id=record.id,
            extractor=extractor.name,
            error="; ".join(str(e.get("message")) for e in errors)[:2000] if errors else None,
        )
        patch.commit({"episode_id": episode_id, "trace_id": record.id})
    entities, facts = trace.get("entities"), trace.get("facts")
    left_out = _what_was_left_out(trace)
    run: ExtractRun = {
        "episode_id": episode_id,
        "status": job.status,
        "outcome": "partial" if errors else "done",
        "trace_id": record.id,
        "entities": len(entities["new"]) + len(entities["resolved"]) if entities else 0,
        "facts": len(facts["created"]) if facts else 0,
        "windows": windows,
        "dropped": left_out["dropped"],
        "dropped_examples": left_out["dropped_examples"],
        "truncated_windows": left_out["truncated_windows"],
    }
    if errors:
        run["error"] = errors[0]
    return run


def extract_one(rt: Runtime, episode_id: str, extractor: Extractor) -> ExtractRun:
    """Extract one episode; returns {episode_id, status, outcome, trace_id, ...}. Never raises
    for anything the model does: each window's failure is in the trace, and what the other
    windows (and the valid items of a failed answer) yield is applied."""
    started = time.perf_counter()
    base: ExtractionRunTrace = {
        "episode_id": episode_id,
        "extractor": extractor.name,
        "prompt_version": prompt.VERSION,
    }
    planned = _episode_windows(rt, episode_id)
    error: JsonObject | None = None
    if planned is None:
        error = {"code": "memory_not_found", "message": f"episode {episode_id} not found"}
    else:
        windows, base["windowing"] = planned
        _mark_running(rt, episode_id, extractor)
        cap = rt.settings.llm_max_output_tokens
        results = [run_window(extractor, w, max_output_tokens=cap) for w in windows]
        base["window_runs"] = [r.trace for r in results]
        base["dropped"] = [d for r in results for d in _dropped(r.trace)]
        errors: list[JsonObject] = [
            {**r.error, "window": k, "windows": len(windows)} for k, r in enumerate(results, 1) if r.error
        ]
        extractions = [ex for r in results for ex in r.extractions]
        if extractions or not errors:
            try:
                base["latency_ms"] = round((time.perf_counter() - started) * 1000, 2)
                return _apply(rt, episode_id, extractor, extractions, len(windows), base, errors)
            except Exception as exc:  # e.g. more entities than the episode may hold: the run goes on
                error = {**_as_error(exc), "windows": len(windows)}
        else:
            error = errors[0]
            base["errors"] = [*errors]  # the trace's list holds any trace error, this one run errors
    with rt.write("memory_maintain", "extract", SYSTEM_REASON, embed=False) as (session, _patch):
        trace: ExtractionRunTrace = {
            **base,
            "errors": base.get("errors") or [error],
            "latency_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        record = traces.record(session, "extraction", episode_id, trace)
        job = jobs.finish(
            session, episode_id, trace_id=record.id, extractor=extractor.name, error=str(error.get("message"))
        )
    left_out = _what_was_left_out(base)
    return {
        "episode_id": episode_id,
        "status": job.status,
        "outcome": "failed",
        "trace_id": record.id,
        "error": error,
        "dropped": left_out["dropped"],
        "dropped_examples": left_out["dropped_examples"],
        "truncated_windows": left_out["truncated_windows"],
    }


def _what_was_left_out(trace: ExtractionRunTrace) -> LeftOut:
    """For the run's report: items dropped (a few with their reasons; all are in the trace) and
    windows whose answer was cut at the token cap."""
    dropped = trace.get("dropped") or []
    runs = trace.get("window_runs") or []
    return {
        "dropped": len(dropped),
        "dropped_examples": [{"item": d["item"], "reason": d["reason"]} for d in dropped[:5]],
        "truncated_windows": sum(1 for w in runs if w.get("truncated")),
    }


def _dropped(window_trace: WindowTrace) -> list[DroppedItem]:
    """A window's dropped items, those of its halves included."""
    out = list(window_trace.get("dropped") or [])
    for sub in window_trace.get("split") or []:
        out.extend(_dropped(sub))
    return out


def _as_error(exc: BaseException) -> JsonObject:
    if isinstance(exc, MemorySubstrateError):
        return exc.to_dict()
    return {"code": "memory_internal_error", "message": f"{type(exc).__name__}: {exc}", "details": {}}


def drain(
    rt: Runtime,
    extractor: Extractor | None,
    *,
    episode_ids: list[str] | None,
    limit: int,
    apply: bool,
    progress: Progress | None = None,
) -> JsonObject:
    """Extract the queued episodes (or ``episode_ids``); without ``apply``, only what would run.
    The result is the JSON document ``memory_maintain extract`` settles and answers."""
    with rt.read_with_expired() as session:
        if episode_ids:
            missing = [
                e for e in episode_ids if (o := session.get_object(e)) is None or o.object_type != "source"
            ]
            if missing:
                from memory_substrate.errors import NotFoundError

                raise NotFoundError(
                    f"episode_ids: {', '.join(missing[:5])} not found", details={"ids": missing}
                )
            todo = list(dict.fromkeys(episode_ids))[:limit]
        else:
            todo = [
                j.target_id
                for j in jobs.runnable(
                    session, limit=limit, stale_after_s=rt.settings.llm_window_timeout_s * 2
                )
            ]
        queue = jobs.queue_status(session)
    result: ExtractResult = {
        "result_type": "extract_result",
        "mode": "extract",
        "apply": apply,
        "dry_run": not apply,
        "queue": queue,
        "episodes": todo,
    }
    if not apply:
        result["status"] = "dry_run"
        result["extractor"] = extractor.name if extractor else None
        return dict(result)
    if extractor is None:
        raise no_extractor_error()
    runs = []
    if progress is not None:
        progress(0, len(todo), "extract:start")
    for i, episode_id in enumerate(todo, 1):
        runs.append(run := extract_one(rt, episode_id, extractor))
        if progress is not None:  # one line per episode: a run of a slow model takes minutes each
            progress(i, len(todo), f"extract:{episode_id}:{run['outcome']}")
    with rt.read_with_expired() as session:
        result["queue"] = jobs.queue_status(session)
    counts = {k: sum(r["outcome"] == k for r in runs) for k in ("done", "partial", "failed")}
    # "applied" only when every episode was: a run whose work failed says so (the CLI exits 1)
    result["status"] = (
        "applied" if counts["done"] == len(runs) else "failed" if counts["failed"] == len(runs) else "partial"
    )
    result["extractor"] = extractor.name
    result["runs"] = runs
    result["counts"] = counts
    return dict(result)
