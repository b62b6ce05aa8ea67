"""The extraction queue: ingest enqueues an episode, an extractor marks it done or failed, and
every run leaves a per-episode trace (``traces.record``).

A job is ``pending`` (never tried), ``running`` (a model is at work on it), ``retrying`` (a run
failed; its error and attempts are kept and the next drain tries again), ``failed`` (parked
after ``MAX_ATTEMPTS``) or ``done``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TypedDict

from memory_substrate.models import Job
from memory_substrate.redaction import redact_text
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import new_id, now_iso

EXTRACT = "extract"
MAX_ATTEMPTS = 3
STATES = ("pending", "running", "retrying", "failed", "done")
RUNNABLE = ("pending", "retrying", "running")


class TroubledJob(TypedDict):
    """A job whose last run failed, as the report lists it."""

    episode_id: str
    status: str
    attempts: int
    updated_at: str
    last_error: str | None


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


def finish(
    session: StoreSession, episode_id: str, *, trace_id: str, extractor: str, error: str | None = None
) -> Job:
    """Mark the episode's job done (or failed, with the error); creates the job if none was queued."""
    now = now_iso()
    job = session.get_job(EXTRACT, episode_id) or Job(
        new_id("job"), EXTRACT, episode_id, "pending", 0, now, now
    )
    job.attempts += 1
    job.updated_at = now
    if error is None:
        job.status, job.error = "done", None
    else:
        job.status = "failed" if job.attempts >= MAX_ATTEMPTS else "retrying"
        job.error = redact_text(error)[:2000]
    job.data = {**job.data, "trace_id": trace_id, "extractor": extractor}
    session.put_job(job)
    return job


def start(session: StoreSession, episode_id: str, *, extractor: str) -> Job:
    """Mark the episode's job running (created if none was queued); its attempts count on finish."""
    now = now_iso()
    job = session.get_job(EXTRACT, episode_id) or Job(
        new_id("job"), EXTRACT, episode_id, "pending", 0, now, now
    )
    job.status, job.updated_at = "running", now
    job.data = {**job.data, "extractor": extractor}
    session.put_job(job)
    return job


def runnable(session: StoreSession, *, limit: int, stale_after_s: float) -> list[Job]:
    """Jobs a drain takes: pending, retrying, and running ones not touched for ``stale_after_s``
    (their process ended mid-run; a live run is left to finish)."""
    cutoff = (datetime.now(UTC) - timedelta(seconds=stale_after_s)).isoformat(timespec="microseconds")
    found = session.list_jobs(kind=EXTRACT, statuses=list(RUNNABLE), limit=limit * 4)
    return [j for j in found if j.status != "running" or j.updated_at < cutoff][:limit]


def queue_status(session: StoreSession, kind: str = EXTRACT) -> dict[str, int]:
    counts = session.job_counts(kind)
    return {s: counts.get(s, 0) for s in STATES}


def troubled(session: StoreSession, limit: int) -> list[TroubledJob]:
    """Jobs whose last run failed (retrying or parked), with their last error and attempts."""
    return [
        {
            "episode_id": j.target_id,
            "status": j.status,
            "attempts": j.attempts,
            "updated_at": j.updated_at,
            "last_error": j.error,
        }
        for j in session.list_jobs(kind=EXTRACT, statuses=["retrying", "failed"], limit=limit)
    ]
