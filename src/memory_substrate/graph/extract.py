"""Drain the extraction queue with a model: read the episode (no lock held), ask the model
(no lock held), then apply the validated extraction in one patch. A run that fails (model
unreachable, output that fits no schema, an extraction naming missing evidence) writes only
its trace and the job's failure; three failures park the job as ``failed``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from memory_substrate.errors import MemorySubstrateError, NotAvailableError
from memory_substrate.graph import extraction_prompt as prompt
from memory_substrate.graph import jobs
from memory_substrate.graph.apply import ExtractionApplier, Governance
from memory_substrate.graph.schemas import Extraction
from memory_substrate.runtime import Runtime
from memory_substrate.settings import Settings
from memory_substrate.taxonomy import MAX_ENTITIES_PER_EPISODE

Progress = Callable[[int, int, str], None]
SYSTEM_REASON = "extracted from a captured episode by the configured model"


class Extractor(Protocol):
    name: str

    def generate(self, messages: list[dict[str, str]], model: type[Extraction], *, schema_name: str) -> tuple[Extraction, str]: ...


def configured_extractor(settings: Settings) -> Extractor | None:
    if not (settings.llm_base_url and settings.llm_model):
        return None
    from memory_substrate.llm.openai_compat import OpenAICompatibleChat

    return OpenAICompatibleChat(
        settings.llm_base_url,
        settings.llm_model,
        api_key=settings.llm_api_key,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
    )


def no_extractor_error() -> NotAvailableError:
    return NotAvailableError(
        "no extraction model is configured: set MEMORY_SUBSTRATE_LLM_BASE_URL and MEMORY_SUBSTRATE_LLM_MODEL "
        "(any OpenAI-compatible endpoint, e.g. Ollama at http://localhost:11434/v1), use options.extractor="
        '"sampling" from an MCP client that offers sampling, or supply extractions yourself with '
        "memory_remember mode extraction",
        details={"settings": ["MEMORY_SUBSTRATE_LLM_BASE_URL", "MEMORY_SUBSTRATE_LLM_MODEL"]},
    )


def _episode_requests(rt: Runtime, episode_id: str) -> tuple[list[list[dict[str, str]]], dict[str, Any]] | None:
    """One model request per window of the whole episode (every segment is read; a long episode
    is cut into overlapping windows, never truncated), and the windowing facts for the trace."""
    with rt.read_with_expired() as session:
        ep = session.get_object(episode_id)
        if ep is None or ep.object_type != "source":
            return None
        segs = session.get_segments(episode_id)
    lines = [
        prompt.EpisodeLine(s.id, str(s.metadata.get("name") or s.metadata.get("role") or "text"), s.metadata.get("created_at"), s.text)
        for s in segs
    ]
    return prompt.window_messages(ep.title, lines)


def merge_traces(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """One trace for the windows of an episode: counts summed, lists joined, the rest from the first."""
    merged: dict[str, Any] = {}
    for trace in traces:
        for key, value in trace.items():
            have = merged.get(key)
            if key not in merged:
                merged[key] = dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) else value
            elif isinstance(value, dict) and isinstance(have, dict):
                merged[key] = merge_traces([have, value])
            elif isinstance(value, list) and isinstance(have, list):
                have.extend(value)
            elif isinstance(value, int | float) and not isinstance(value, bool) and isinstance(have, int | float):
                merged[key] = have + value
    return merged


def _scope(session: Any, episode_id: str) -> str:
    """The episode's project when its capture names one, else the namespace as a whole."""
    ep = session.get_object(episode_id)
    project = ((ep.payload.get("origin") or {}).get("project") if ep else None) or ""
    slug = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in str(project))[:60].strip("-")
    return f"scope:{slug}" if slug else "scope:namespace"


def extract_one(rt: Runtime, episode_id: str, extractor: Extractor) -> dict[str, Any]:
    """Extract one episode; returns {episode_id, status, trace_id, ...}. Never raises for model trouble."""
    started = time.perf_counter()
    base: dict[str, Any] = {"episode_id": episode_id, "extractor": extractor.name, "prompt_version": prompt.VERSION}
    requests = _episode_requests(rt, episode_id)
    error: dict[str, Any] | None = None
    if requests is None:
        error = {"code": "memory_not_found", "message": f"episode {episode_id} not found"}
    else:
        windowed, base["windowing"] = requests
        extractions: list[Extraction] = []
        raw = ""
        try:
            for msgs in windowed:  # every window or nothing: a failed window fails the episode
                extraction, raw = extractor.generate(msgs, Extraction, schema_name="extraction")
                extractions.append(extraction)
        except MemorySubstrateError as exc:
            error = {**exc.to_dict(), "window": len(extractions) + 1, "windows": len(windowed)}
        else:
            try:
                with rt.write("memory_maintain", "extract", SYSTEM_REASON) as (session, patch):
                    gov = Governance(reason=SYSTEM_REASON, memory_source="system_generated", scope_refs=[_scope(session, episode_id)],
                                     extractor=extractor.name, evidence_status="extracted")
                    # Each window's result goes through the same resolution, in order, in one patch:
                    # an entity a later window names again resolves to the one an earlier window made.
                    # Spec 004's 10 entities hold per window of a long episode (what one request sees).
                    applier = ExtractionApplier(patch, rt.embedder_or_none(),
                                                episode_limit=MAX_ENTITIES_PER_EPISODE * len(windowed),
                                                whole_episode=True)
                    trace = merge_traces([applier.apply(episode_id, ex, gov) for ex in extractions])
                    trace.update(base, patch_id=patch.id, latency_ms=round((time.perf_counter() - started) * 1000, 2))
                    record = jobs.record(session, "extraction", episode_id, trace)
                    jobs.finish(session, episode_id, trace_id=record.id, extractor=extractor.name)
                    patch.commit({"episode_id": episode_id, "trace_id": record.id})
                return {"episode_id": episode_id, "status": "done", "trace_id": record.id,
                        "entities": len(trace["entities"]["new"]) + len(trace["entities"]["resolved"]),
                        "facts": len(trace["facts"]["created"]), "windows": base["windowing"]["windows"]}
            except MemorySubstrateError as exc:  # e.g. the model cited segments the episode lacks
                error = {**exc.to_dict(), "raw": raw[:2000]}
    with rt.write("memory_maintain", "extract", SYSTEM_REASON, embed=False) as (session, _patch):
        trace = {**base, "errors": [error], "latency_ms": round((time.perf_counter() - started) * 1000, 2)}
        record = jobs.record(session, "extraction", episode_id, trace)
        job = jobs.finish(session, episode_id, trace_id=record.id, extractor=extractor.name, error=str(error.get("message")))
    return {"episode_id": episode_id, "status": job.status, "trace_id": record.id, "error": error}


def drain(
    rt: Runtime,
    extractor: Extractor | None,
    *,
    episode_ids: list[str] | None,
    limit: int,
    apply: bool,
    progress: Progress | None = None,
) -> dict[str, Any]:
    with rt.read_with_expired() as session:
        if episode_ids:
            missing = [e for e in episode_ids if (o := session.get_object(e)) is None or o.object_type != "source"]
            if missing:
                from memory_substrate.errors import NotFoundError

                raise NotFoundError(f"episode_ids: {', '.join(missing[:5])} not found", details={"ids": missing})
            todo = list(dict.fromkeys(episode_ids))[:limit]
        else:
            todo = [j.target_id for j in session.list_jobs(kind=jobs.EXTRACT, statuses=["pending"], limit=limit)]
        queue = jobs.queue_status(session)
    result: dict[str, Any] = {
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
        return result
    if extractor is None:
        raise no_extractor_error()
    runs = []
    for i, episode_id in enumerate(todo, 1):
        runs.append(extract_one(rt, episode_id, extractor))
        if progress is not None:
            progress(i, len(todo), "extract:episodes")
    with rt.read_with_expired() as session:
        result["queue"] = jobs.queue_status(session)
    result.update(
        status="applied",
        extractor=extractor.name,
        runs=runs,
        counts={"done": sum(r["status"] == "done" for r in runs), "failed": sum(r["status"] != "done" for r in runs)},
    )
    return result
