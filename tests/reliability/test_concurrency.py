"""Concurrency: 8 processes writing and 4 reading one store, SQLite file and PostgreSQL database.

Every writer must finish without an error ("database is locked" included), every acknowledged
write must be readable afterwards and nothing may be half-written; readers must never fail.
Throughput is reported (acknowledged calls per second across all writers).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Settings
from memory_substrate.storage.factory import open_store
from tests.reliability.checks import half_written, missing_acknowledged
from tests.reliability.common import child_env, report, scale, spawn

WRITERS, READERS = 8, 4


def test_eight_writers_four_readers(
    backend: str, tmp_path: Path, namespace: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    root = tmp_path / "store"
    env = child_env(root, url, namespace)
    per_writer = scale(12, 150)
    # Create the store first, so the test measures concurrent writes rather than concurrent creation.
    open_store(Settings(root=root, database_url=url, embedder="none")).close()
    writers = [spawn("tests.reliability.writer", env, f"w{i}", str(per_writer)) for i in range(WRITERS)]
    readers = [spawn("tests.reliability.reader", env, str(scale(6, 60))) for _ in range(READERS)]
    acked: list[dict[str, Any]] = []
    failures: list[str] = []
    for proc in writers:
        out, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            failures.append(err.strip().splitlines()[-1] if err.strip() else f"exit {proc.returncode}")
        acked += [json.loads(line) for line in out.splitlines() if line.strip()]
    summaries = []
    for proc in readers:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        summaries.append(json.loads(out))
    reader_errors = [e for s in summaries for e in s["errors"]]
    assert not any("locked" in f for f in failures + reader_errors), failures + reader_errors
    assert failures == [], failures
    assert reader_errors == [], reader_errors

    store = open_store(Settings(root=root, database_url=url, embedder="none"))
    try:
        lost = missing_acknowledged(store, namespace, acked)
        partial = half_written(store, namespace)
    finally:
        store.close()
    assert lost == [] and partial == [], (lost[:10], partial[:10])
    assert len(acked) == WRITERS * per_writer

    times = [a["t"] for a in acked]
    span = max(times) - min(times)
    latencies = sorted(x for s in summaries for x in s["latencies"])
    report(
        f"concurrency[{backend}]",
        writers=WRITERS,
        readers=READERS,
        write_calls=len(acked),
        objects_written=sum(len(a["ids"]) for a in acked),
        lost=0,
        half_written=0,
        writer_failures=len(failures),
        reader_calls=sum(s["calls"] for s in summaries),
        reader_errors=0,
        write_calls_per_s=round(len(acked) / span, 1) if span else None,
        read_p50_ms=round(statistics.median(latencies) * 1000, 1),
        read_p95_ms=round(latencies[int(0.95 * (len(latencies) - 1))] * 1000, 1),
    )
