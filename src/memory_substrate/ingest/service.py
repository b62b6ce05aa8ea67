"""memory_ingest: capture evidence as sources with addressable segments. Decides nothing durable."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from memory_substrate.embed.base import Vector
from memory_substrate.graph import deferred, jobs
from memory_substrate.graph.specific import episode_specific_facts
from memory_substrate.indexing import segment_embedding_text
from memory_substrate.ingest import repeats, schemas
from memory_substrate.ingest.adapters.repo_map import PreflightReport
from memory_substrate.ingest.captured import CapturedSource, Progress
from memory_substrate.ingest.conversation import capture_conversation
from memory_substrate.ingest.modes import MODES_DECLARED
from memory_substrate.ingest.results import IngestResult
from memory_substrate.ingest.source_metadata import freshness, segment_count, specific_fact_count
from memory_substrate.ingest.suggestions import memory_suggestions, summarise
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject, PatchRecord, Segment
from memory_substrate.patch import Patch, PreparedVectors
from memory_substrate.redaction import redact_text, redact_value
from memory_substrate.runtime import Runtime
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import new_id, now_iso, sha256_text
from memory_substrate.validation import mode_of, parse

MODES = tuple(m.name for m in MODES_DECLARED)
EPISODE_MODES = ("conversation",)  # captures that are episodes of the knowledge graph
ADAPTER_VERSION = "1"
PRIVACY = {
    "conversation": "private",
    "web": "public",
    "repo": "internal",
    "file": "internal",
    "markdown": "internal",
    "pdf": "internal",
}


class IngestService:
    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime

    def run(
        self,
        mode: str,
        input_data: JsonObject,
        options: JsonObject | None = None,
        *,
        progress: Progress | None = None,
    ) -> JsonObject:
        declared = mode_of(MODES_DECLARED, mode)
        opts = cast(schemas.IngestOptions, parse(declared.options_model, options or {}, "options"))
        captured = self._capture(mode, input_data, opts, progress)
        # A copy of the answer's top level, as the surfaces take a JSON object; nothing else holds it.
        return dict(self.store_capture(mode, captured, opts))

    def _capture(
        self, mode: str, input_data: JsonObject, opts: schemas.IngestOptions, progress: Progress | None
    ) -> CapturedSource:
        if mode == "conversation":
            return capture_conversation(parse(schemas.ConversationInput, input_data, "input_data"))
        from memory_substrate.ingest.bridge import ADAPTERS  # adapters load their parsers lazily

        return ADAPTERS[mode](self.rt, mode, input_data, opts, progress)

    def store_capture(self, mode: str, captured: CapturedSource, opts: schemas.IngestOptions) -> IngestResult:
        """Store a capture: nothing of it reaches the store before the secret scan (redaction.py)
        has run over it, and the answer says how many values that replaced (``redacted``)."""
        captured = _scanned(captured)
        return captured.redactions.report(self._store(mode, captured, opts))

    def _store(self, mode: str, captured: CapturedSource, opts: schemas.IngestOptions) -> IngestResult:
        checked_at = now_iso()
        result_type = f"{mode}_ingest_result"
        source_id = new_id("source")
        seg_vectors, prepared = self._embed_outside_lock(mode, captured)
        with self.rt.write("memory_ingest", mode, None, prepared=prepared) as (session, patch):
            previous = None if mode == "conversation" else session.find_source_by_uri(captured.uri)
            repeat = _repeat_of(session, mode, captured, previous)
            if repeat is not None:
                return _unchanged(result_type, mode, repeat, captured)
            grown = repeats.grown_from(session, captured) if mode == "conversation" else None
            if grown is not None:
                appended = self._append(patch, mode, grown, captured, seg_vectors)
                # The worker waits for captures to pause before it reads the queue, so waking it
                # a moment before this transaction commits finds the job written.
                self._after_commit(patch, appended)
                return summarise(appended, opts.max_items) if opts.detail == "compact" else appended
            segments = _segments(source_id, captured, checked_at)
            episode = mode in EPISODE_MODES
            specific = episode_specific_facts((s.id, s.text) for s in segments) if episode else []
            source = _source(source_id, mode, captured, checked_at, len(segments), previous, specific)
            patch.create(source)
            patch.add_segments(segments, prepared_vectors=seg_vectors)
            if episode:
                jobs.enqueue(session, source_id)  # extraction runs later and never blocks ingest
            if previous is not None:
                _supersede(patch, previous, source_id)
            _queue_deferred(patch)
            record = patch.commit({"source_id": source_id, "segments": len(segments)})
        result = _stored(result_type, mode, captured, source, segments, previous, record, patch.event_ids)
        self._after_commit(patch, result)
        return summarise(result, opts.max_items) if opts.detail == "compact" else result

    def _after_commit(self, patch: Patch, result: IngestResult) -> None:
        """Say how many vectors are still to come, and wake the worker that makes them."""
        waiting = sum(len(ids) for ids in patch.deferred_segments.values())
        if waiting:
            result["vectors"] = {"status": "queued", "segments": waiting}
            deferred.notify(self.rt)

    def _append(
        self,
        patch: Patch,
        mode: str,
        prev: MemoryObject,
        captured: CapturedSource,
        seg_vectors: PreparedVectors | None,
    ) -> IngestResult:
        updated, segments = repeats.append_messages(
            patch.session, patch, prev, captured, _summary(captured), seg_vectors
        )
        _queue_deferred(patch)
        record = patch.commit({"source_id": prev.id, "segments": len(segments), "appended": True})
        return {
            "result_type": f"{mode}_ingest_result",
            "status": "completed",
            "requires_decision": False,
            "source_id": prev.id,
            "patch_id": record.id,
            "applied_operations": record.operations,
            "audit_event_ids": patch.event_ids,
            "segment_count": segment_count(updated),
            "appended_messages": len(segments),
            "projection_count": len(segments) + 1,
            "extraction": {
                "status": "queued",
                "episode_id": prev.id,
                "specific_facts": specific_fact_count(updated),
            },
            "warnings": list(captured.warnings),
            "memory_suggestions": memory_suggestions(prev.id, segments),
        }

    def _embed_outside_lock(
        self, mode: str, captured: CapturedSource
    ) -> tuple[PreparedVectors | None, dict[str, Vector]]:
        """Segment vectors and the source's vector, made before the write session opens.

        Embedding is the slow part of an ingest; done inside the session it would hold the
        namespace's write lock (blocking every other writer) for as long as the model runs. A
        capture that turns out unchanged (same fingerprint) is checked first, so re-ingesting an
        unchanged document embeds nothing.
        """
        emb = self.rt.embedder_or_none()
        if emb is None:
            return None, {}
        with self.rt.read_with_expired() as session:
            previous = None if mode == "conversation" else session.find_source_by_uri(captured.uri)
            if previous is not None and freshness(previous).get("fingerprint") == captured.fingerprint:
                return None, {}
            if repeats.same_content(session, mode, captured) is not None:
                return None, {}
            # A conversation that extends an earlier capture of its thread appends only the
            # messages beyond it (repeats.append_messages): only those need a vector. An agent's
            # session is captured again after every reply, so this keeps each capture's cost to
            # what the reply added. (Should the episode be gone by the write, the first ones are
            # queued for the background worker like any deferred vector.)
            grown = repeats.grown_from(session, captured) if mode == "conversation" else None
        start = segment_count(grown) if grown is not None else 0
        texts = [segment_embedding_text(s.text, s.metadata) for s in captured.segments[start:]]
        later = deferred.deferrable(emb, texts, background=self.rt.settings.embed_in_background)
        seg_vectors: PreparedVectors | None
        if any(later):  # the costly vectors are made by the background worker (graph/deferred.py)
            now = [i for i, d in enumerate(later) if not d]
            made: PreparedVectors = emb.embed_documents([texts[i] for i in now]) if now else []
            partial: list[Vector | None] = [None] * len(texts)
            for k, i in enumerate(now):
                partial[i] = made[k]
            seg_vectors = partial
        else:
            seg_vectors = emb.embed_documents(texts) if texts else None
        if start and seg_vectors is not None:
            seg_vectors = [None] * start + list(seg_vectors)
        source_text = f"{captured.title}. {_summary(captured)}".strip()
        return seg_vectors, {source_text: emb.embed_documents([source_text])[0]}


def _scanned(captured: CapturedSource) -> CapturedSource:
    """The capture with its title, uri (a URL's password), payload and metadata redacted, and its
    segments too when its builder did not scan them (an importer's part source)."""
    found = captured.redactions
    segments = captured.segments
    if not captured.text_scanned:
        segments = [
            replace(s, text=redact_text(s.text, found), metadata=redact_value(s.metadata, found))
            for s in captured.segments
        ]
    return replace(
        captured,
        title=redact_text(captured.title, found),
        uri=redact_text(captured.uri, found),
        payload=redact_value(captured.payload, found),
        metadata=redact_value(captured.metadata, found),
        segments=segments,
        text_scanned=True,
    )


def _queue_deferred(patch: Patch) -> None:
    for source_id, segment_ids in patch.deferred_segments.items():
        deferred.enqueue(patch.session, source_id, segment_ids)


def _summary(captured: CapturedSource) -> str:
    if captured.kind == "conversation":
        n = captured.payload.get("message_count", len(captured.segments))
        named = captured.payload.get("speakers", [])
        speakers = ", ".join(str(s) for s in named[:6]) if isinstance(named, list) else ""
        return f"Conversation of {n} message{'' if n == 1 else 's'} between {speakers}."
    if captured.segments:
        return " ".join(captured.segments[0].text.split())[:400]
    return captured.title


def _segments(source_id: str, captured: CapturedSource, checked_at: str) -> list[Segment]:
    return [
        Segment(
            source_id=source_id,
            id=f"seg-{i + 1}",
            ordinal=i,
            text=s.text,
            locator=s.locator,
            hash=sha256_text(s.text),
            metadata=s.metadata,
            created_at=checked_at,
        )
        for i, s in enumerate(captured.segments)
    ]


def _source(
    source_id: str,
    mode: str,
    captured: CapturedSource,
    checked_at: str,
    segment_count: int,
    previous: MemoryObject | None,
    specific: list[dict[str, str]],
) -> MemoryObject:
    return MemoryObject(
        id=source_id,
        object_type="source",
        kind=mode,
        status="active",
        title=captured.title,
        summary=_summary(captured),
        memory_source="imported",
        payload=captured.payload,
        metadata={
            **captured.metadata,
            "uri": captured.uri,
            "segment_count": segment_count,
            "adapter": {
                "name": captured.adapter_name or mode,
                "version": captured.adapter_version or ADAPTER_VERSION,
                "mode": mode,
                "supported_modes": list(MODES),
                "declared_transformations": captured.declared_transformations,
                "default_privacy_class": PRIVACY[mode],
                "origin_classification": captured.origin_classification,
            },
            "freshness": {"checked_at": checked_at, "is_current": True, "fingerprint": captured.fingerprint},
            **({"supersedes": previous.id} if previous else {}),
            **({"thread": {"key": captured.thread}} if captured.thread else {}),
            **({"specific_facts": specific} if specific else {}),
        },
    )


def _supersede(patch: Patch, previous: MemoryObject, source_id: str) -> None:
    # The old capture stays addressable (evidence refs never dangle) but is no longer current.
    old_meta = dict(previous.metadata)
    old_meta["freshness"] = {**freshness(previous), "is_current": False, "superseded_by": source_id}
    patch.update(
        replace(previous, status="superseded", metadata=old_meta),
        action="status_change",
        changes={"status": {"from": previous.status, "to": "superseded"}, "superseded_by": source_id},
        derive=False,
        embed=False,  # title and summary are unchanged, so is the vector
    )


def _stored(
    result_type: str,
    mode: str,
    captured: CapturedSource,
    source: MemoryObject,
    segments: list[Segment],
    previous: MemoryObject | None,
    record: PatchRecord,
    event_ids: list[str],
) -> IngestResult:
    """The answer to a stored capture: what was written, the preflight's open decisions, what was left out."""
    source_id = source.id
    preflight = _preflight(captured)
    pending = preflight["pending_decisions"] if preflight else []
    result: IngestResult = {
        "result_type": result_type,
        "status": "completed_with_pending_decisions" if pending else "completed",
        "requires_decision": bool(pending),
        "source_id": source_id,
        "patch_id": record.id,
        "applied_operations": record.operations,
        "audit_event_ids": event_ids,
        "segment_count": len(segments),
        "projection_count": len(segments) + 1,
    }
    if previous is not None:
        result["superseded_source_id"] = previous.id
    if mode in EPISODE_MODES:
        result["extraction"] = {
            "status": "queued",
            "episode_id": source_id,
            "specific_facts": specific_fact_count(source),
        }
    if preflight and pending:
        result["excluded_by_preflight"] = preflight["excluded_by_preflight"]
        result["pending_decisions"] = pending
        result["suggested_exclude_patterns"] = preflight["suggested_exclude_patterns"]
    warnings = list(captured.warnings) + (list(preflight["warnings"]) if preflight else [])
    result["warnings"] = warnings
    if captured.withheld:
        result["withheld"] = captured.withheld
    if captured.skipped:
        result["skipped"] = captured.skipped[:200]
        result["skipped_count"] = len(captured.skipped)
    result["memory_suggestions"] = memory_suggestions(source_id, segments)
    return result


def _repeat_of(
    session: StoreSession, mode: str, captured: CapturedSource, previous: MemoryObject | None
) -> MemoryObject | None:
    """The current source this capture repeats: its own path's capture when the content is the same;
    for a path never captured before, a source holding the same content. A path captured before with
    other content is not a repeat even when that content stands elsewhere: it must supersede its
    own old capture, or that stale capture would stay current."""
    if previous is not None:
        same = freshness(previous).get("fingerprint") == captured.fingerprint
        return previous if same else None
    return repeats.same_content(session, mode, captured)


def _unchanged(result_type: str, mode: str, repeat: MemoryObject, captured: CapturedSource) -> IngestResult:
    """The noop answer to a repeat; a preflight that has not passed keeps its decision open."""
    reason = f"{'repo' if mode == 'repo' else 'source'}_fingerprint_unchanged"
    unchanged = repeats.noop_result(result_type, repeat.id, reason)
    preflight = _preflight(captured)
    if preflight and preflight["pending_decisions"]:
        unchanged.update(
            {
                "status": "completed_with_pending_decisions",
                "requires_decision": True,
                "excluded_by_preflight": preflight["excluded_by_preflight"],
                "pending_decisions": preflight["pending_decisions"],
                "warnings": preflight["warnings"],
                "suggested_exclude_patterns": preflight["suggested_exclude_patterns"],
            }
        )
    return unchanged


def _preflight(captured: CapturedSource) -> PreflightReport | None:
    """The repo preflight's report (``metadata.preflight``), None for a capture without one."""
    found = captured.metadata.get("preflight")
    # Only the repo adapter sets it, always to ``Preflight.to_dict()`` (redaction keeps its shape).
    return cast(PreflightReport, found) if isinstance(found, dict) and found else None
