"""The extraction queue: ingest enqueues an episode, an extractor marks it done or failed, and
every run leaves a per-episode trace."""

from __future__ import annotations

from typing import Any

from memory_substrate.models import Job, Trace
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import new_id, now_iso

EXTRACT = "extract"
MAX_ATTEMPTS = 3


def enqueue(session: StoreSession, episode_id: str, *, reason: str = "ingest") -> Job:
    """Queue an episode for extraction (again, if it was done or failed before)."""
    now = now_iso()
    job = session.get_job(EXTRACT, episode_id)
    if job is None:
        job = Job(new_id("job"), EXTRACT, episode_id, "pending", 0, now, now, None, {"reason": reason})
    else:
        job.status, job.updated_at, job.error, job.attempts = "pending", now, None, 0
        job.data = {**job.data, "reason": reason}
    session.put_job(job)
    return job


def finish(session: StoreSession, episode_id: str, *, trace_id: str, extractor: str, error: str | None = None) -> Job:
    """Mark the episode's job done (or failed, with the error); creates the job if none was queued."""
    now = now_iso()
    job = session.get_job(EXTRACT, episode_id) or Job(new_id("job"), EXTRACT, episode_id, "pending", 0, now, now)
    job.attempts += 1
    job.updated_at = now
    if error is None:
        job.status, job.error = "done", None
    else:
        job.status = "failed" if job.attempts >= MAX_ATTEMPTS else "pending"
        job.error = error[:2000]
    job.data = {**job.data, "trace_id": trace_id, "extractor": extractor}
    session.put_job(job)
    return job


def new_trace(kind: str, subject_id: str | None, data: dict[str, Any]) -> Trace:
    return Trace(new_id("trace"), kind, subject_id, now_iso(), data)


def record(session: StoreSession, kind: str, subject_id: str | None, data: dict[str, Any]) -> Trace:
    trace = new_trace(kind, subject_id, data)
    session.record_trace(trace)
    return trace


def queue_status(session: StoreSession) -> dict[str, int]:
    counts = session.job_counts(EXTRACT)
    return {s: counts.get(s, 0) for s in ("pending", "done", "failed")}
