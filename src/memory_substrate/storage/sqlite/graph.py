"""Lookup keys, jobs and traces for a SQLite session (the knowledge graph's side tables)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from memory_substrate.models import Job, Trace
from memory_substrate.storage.json_text import dumps


class SessionGraph:
    conn: sqlite3.Connection
    namespace: str

    def _require_write(self) -> None:  # provided by SessionWrites, which precedes this mixin
        raise NotImplementedError

    # --- reads ---------------------------------------------------------------------------
    def find_keys(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        wanted = list(dict.fromkeys(keys))
        out: list[tuple[str, str]] = []
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            out.extend(
                (r[0], r[1])
                for r in self.conn.execute(
                    f"SELECT key, object_id FROM object_keys WHERE namespace = ? AND key IN ({','.join('?' * len(chunk))})",
                    (self.namespace, *chunk),
                )
            )
        return sorted(out)

    def key_counts(self, prefix: str, *, limit: int = 100) -> list[tuple[str, int]]:
        # A range scan on the primary key: prefix <= key < prefix + U+10FFFF.
        rows = self.conn.execute(
            "SELECT key, COUNT(*) FROM object_keys WHERE namespace = ? AND key >= ? AND key < ? "
            "GROUP BY key ORDER BY COUNT(*) DESC, key LIMIT ?",
            (self.namespace, prefix, prefix + "\U0010ffff", limit),
        )
        return [(r[0], int(r[1])) for r in rows]

    @staticmethod
    def _job(r: Sequence[object]) -> Job:
        return Job(
            id=str(r[0]),
            kind=str(r[1]),
            target_id=str(r[2]),
            status=str(r[3]),
            attempts=int(r[4]),  # type: ignore[call-overload]
            created_at=str(r[5]),
            updated_at=str(r[6]),
            error=None if r[7] is None else str(r[7]),
            data=json.loads(str(r[8])),
        )

    _JOB_COLS = "id, kind, target_id, status, attempts, created_at, updated_at, error, data"

    def get_job(self, kind: str, target_id: str) -> Job | None:
        row = self.conn.execute(
            f"SELECT {self._JOB_COLS} FROM jobs WHERE namespace = ? AND kind = ? AND target_id = ?",
            (self.namespace, kind, target_id),
        ).fetchone()
        return self._job(row) if row else None

    def list_jobs(self, *, kind: str, statuses: Sequence[str] | None = None, limit: int = 100) -> list[Job]:
        sql = f"SELECT {self._JOB_COLS} FROM jobs WHERE namespace = ? AND kind = ?"
        params: list[object] = [self.namespace, kind]
        if statuses:
            sql += f" AND status IN ({','.join('?' * len(statuses))})"
            params.extend(statuses)
        sql += " ORDER BY created_at, id LIMIT ?"
        return [self._job(r) for r in self.conn.execute(sql, (*params, limit))]

    def job_counts(self, kind: str) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT status, COUNT(*) FROM jobs WHERE namespace = ? AND kind = ? GROUP BY status ORDER BY 1",
            (self.namespace, kind),
        )
        return {r[0]: int(r[1]) for r in rows}

    def get_trace(self, trace_id: str) -> Trace | None:
        row = self.conn.execute(
            "SELECT id, kind, subject_id, created_at, data FROM traces WHERE namespace = ? AND id = ?",
            (self.namespace, trace_id),
        ).fetchone()
        return Trace(row[0], row[1], row[2], row[3], json.loads(row[4])) if row else None

    def list_traces(
        self, *, kind: str | None = None, subject_id: str | None = None, limit: int = 20
    ) -> list[Trace]:
        sql = "SELECT id, kind, subject_id, created_at, data FROM traces WHERE namespace = ?"
        params: list[object] = [self.namespace]
        if kind:
            sql += " AND kind = ?"
            params.append(kind)
        if subject_id:
            sql += " AND subject_id = ?"
            params.append(subject_id)
        sql += " ORDER BY created_at DESC, id DESC LIMIT ?"
        return [
            Trace(r[0], r[1], r[2], r[3], json.loads(r[4])) for r in self.conn.execute(sql, (*params, limit))
        ]

    # --- writes --------------------------------------------------------------------------
    def set_object_keys(self, object_id: str, keys: Sequence[str]) -> None:
        self._require_write()
        self.conn.execute(
            "DELETE FROM object_keys WHERE namespace = ? AND object_id = ?", (self.namespace, object_id)
        )
        if keys:
            self.conn.executemany(
                "INSERT OR IGNORE INTO object_keys (namespace, key, object_id) VALUES (?, ?, ?)",
                [(self.namespace, k, object_id) for k in dict.fromkeys(keys)],
            )

    def put_job(self, job: Job) -> None:
        self._require_write()
        self.conn.execute(
            "INSERT INTO jobs (namespace, id, kind, target_id, status, attempts, created_at, updated_at, error, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, kind, target_id) DO UPDATE SET "
            "status = excluded.status, attempts = excluded.attempts, updated_at = excluded.updated_at, "
            "error = excluded.error, data = excluded.data",
            (
                self.namespace,
                job.id,
                job.kind,
                job.target_id,
                job.status,
                job.attempts,
                job.created_at,
                job.updated_at,
                job.error,
                dumps(job.data),
            ),
        )

    def record_trace(self, trace: Trace) -> None:
        self._require_write()
        self.conn.execute(
            "INSERT INTO traces (namespace, id, kind, subject_id, created_at, data) VALUES (?, ?, ?, ?, ?, ?)",
            (self.namespace, trace.id, trace.kind, trace.subject_id, trace.created_at, dumps(trace.data)),
        )
