"""Lookup keys, jobs and traces for a PostgreSQL session (the knowledge graph's side tables)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from memory_substrate.models import Job, Trace
from memory_substrate.storage.json_text import dumps

_JOB_COLS = "id, kind, target_id, status, attempts, created_at, updated_at, error, data"


def _job(r: Sequence[Any]) -> Job:
    return Job(r[0], r[1], r[2], r[3], int(r[4]), r[5], r[6], r[7], r[8])


def _clean(text: str) -> str:
    return text.replace("\x00", "")  # PostgreSQL text cannot hold NUL; keys are derived, so drop it


class PostgresGraph:
    conn: psycopg.Connection[Any]
    namespace: str

    def _require_write(self) -> None:  # provided by PostgresWrites, which precedes this mixin
        raise NotImplementedError

    # --- reads ---------------------------------------------------------------------------
    def find_keys(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        wanted = list(dict.fromkeys(_clean(k) for k in keys))
        if not wanted:
            return []
        rows = self.conn.execute(
            "SELECT key, object_id FROM object_keys WHERE namespace = %s AND key = ANY(%s) ORDER BY key, object_id",
            (self.namespace, wanted),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def key_counts(self, prefix: str, *, limit: int = 100) -> list[tuple[str, int]]:
        rows = self.conn.execute(
            "SELECT key, COUNT(*) FROM object_keys WHERE namespace = %s AND key >= %s AND key < %s "
            "GROUP BY key ORDER BY COUNT(*) DESC, key LIMIT %s",
            (self.namespace, _clean(prefix), _clean(prefix) + "\U0010ffff", limit),
        ).fetchall()
        return [(r[0], int(r[1])) for r in rows]

    def get_job(self, kind: str, target_id: str) -> Job | None:
        rows = self.conn.execute(
            f"SELECT {_JOB_COLS} FROM jobs WHERE namespace = %s AND kind = %s AND target_id = %s",
            (self.namespace, kind, target_id),
        ).fetchall()
        return _job(rows[0]) if rows else None

    def list_jobs(self, *, kind: str, statuses: Sequence[str] | None = None, limit: int = 100) -> list[Job]:
        sql = f"SELECT {_JOB_COLS} FROM jobs WHERE namespace = %s AND kind = %s"
        params: list[Any] = [self.namespace, kind]
        if statuses:
            sql += " AND status = ANY(%s)"
            params.append(list(statuses))
        sql += " ORDER BY created_at, id LIMIT %s"
        return [_job(r) for r in self.conn.execute(sql, (*params, limit)).fetchall()]

    def job_counts(self, kind: str) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT status, COUNT(*) FROM jobs WHERE namespace = %s AND kind = %s GROUP BY status ORDER BY 1",
            (self.namespace, kind),
        ).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    def get_trace(self, trace_id: str) -> Trace | None:
        rows = self.conn.execute(
            "SELECT id, kind, subject_id, created_at, data FROM traces WHERE namespace = %s AND id = %s",
            (self.namespace, trace_id),
        ).fetchall()
        return Trace(*rows[0]) if rows else None

    def list_traces(
        self, *, kind: str | None = None, subject_id: str | None = None, limit: int = 20
    ) -> list[Trace]:
        sql = "SELECT id, kind, subject_id, created_at, data FROM traces WHERE namespace = %s"
        params: list[Any] = [self.namespace]
        if kind:
            sql += " AND kind = %s"
            params.append(kind)
        if subject_id:
            sql += " AND subject_id = %s"
            params.append(subject_id)
        sql += " ORDER BY created_at DESC, id DESC LIMIT %s"
        return [Trace(*r) for r in self.conn.execute(sql, (*params, limit)).fetchall()]

    # --- writes --------------------------------------------------------------------------
    def set_object_keys(self, object_id: str, keys: Sequence[str]) -> None:
        self._require_write()
        self.conn.execute(
            "DELETE FROM object_keys WHERE namespace = %s AND object_id = %s", (self.namespace, object_id)
        )
        clean = list(dict.fromkeys(_clean(k) for k in keys))
        if clean:
            with self.conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO object_keys (namespace, key, object_id) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                    [(self.namespace, k, object_id) for k in clean],
                )

    def put_job(self, job: Job) -> None:
        self._require_write()
        self.conn.execute(
            "INSERT INTO jobs (namespace, id, kind, target_id, status, attempts, created_at, updated_at, error, data) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::json) ON CONFLICT (namespace, kind, target_id) DO UPDATE SET "
            "status = excluded.status, attempts = excluded.attempts, updated_at = excluded.updated_at, "
            "error = excluded.error, data = excluded.data",
            (
                self.namespace,
                job.id,
                job.kind,
                _clean(job.target_id),
                job.status,
                job.attempts,
                job.created_at,
                job.updated_at,
                None if job.error is None else _clean(job.error),
                dumps(job.data),
            ),
        )

    def record_trace(self, trace: Trace) -> None:
        self._require_write()
        self.conn.execute(
            "INSERT INTO traces (namespace, id, kind, subject_id, created_at, data) VALUES (%s, %s, %s, %s, %s, %s::json)",
            (
                self.namespace,
                trace.id,
                trace.kind,
                None if trace.subject_id is None else _clean(trace.subject_id),
                trace.created_at,
                dumps(trace.data),
            ),
        )
