"""Crash safety: a writer killed with SIGKILL at random moments loses no acknowledged write.

A child process (tests/reliability/writer.py) ingests conversations, remembers knowledge that
cites them and writes atomic batches, printing a line after each call returns. The test kills it
with SIGKILL at a random moment (sometimes before its first write, while the store is being
opened or migrated), then opens the store as a new process would and checks: ``doctor`` passes,
every acknowledged write is present and complete, nothing is half-written (a source without all
its segments, a partial batch, an object without its audit event, an index gap). Both backends.
"""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Settings
from memory_substrate.storage.factory import open_store
from tests.reliability.checks import half_written, missing_acknowledged
from tests.reliability.common import child_env, cli, report, scale, spawn


def _acks(first: str, rest: str) -> list[dict[str, Any]]:
    # Only complete lines count: a line cut by the kill was never acknowledged.
    text = first + rest
    lines = text.split("\n")[:-1] if not text.endswith("\n") else text.split("\n")
    return [json.loads(line) for line in lines if line.strip()]


def test_acknowledged_writes_survive_sigkill(
    backend: str, tmp_path: Path, namespace: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    root = tmp_path / "store"
    env = child_env(root, url, namespace)
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    kills = scale(4, 25)
    acked: list[dict[str, Any]] = []
    early = 0
    for round_no in range(kills):
        proc = spawn("tests.reliability.writer", env, f"r{round_no}", "1000000")
        assert proc.stdout is not None
        if round_no > 0 and rng.random() < 0.2:
            # Kill while the child imports, opens or migrates the store.
            time.sleep(rng.uniform(0.0, 1.0))
            first = ""
            early += 1
        else:
            first = proc.stdout.readline()
            if not first:
                proc.wait(30)
                raise AssertionError(
                    f"writer died before its first write: {proc.stderr.read() if proc.stderr else ''}"
                )
            time.sleep(rng.uniform(0.0, 0.8))
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        acked += _acks(first, proc.stdout.read())
        if proc.stderr is not None:
            proc.stderr.close()
        proc.stdout.close()

        doctor = cli(env, "doctor")
        assert doctor.returncode == 0 and json.loads(doctor.stdout)["ok"] is True, (
            seed,
            doctor.stdout,
            doctor.stderr,
        )
        store = open_store(Settings(root=root, database_url=url, embedder="none"))
        try:
            lost = missing_acknowledged(store, namespace, acked)
            partial = half_written(store, namespace)
        finally:
            store.close()
        assert lost == [], f"seed {seed}, round {round_no}: acknowledged writes lost: {lost[:10]}"
        assert partial == [], f"seed {seed}, round {round_no}: half-written state: {partial[:10]}"
    writes = sum(len(a["ids"]) for a in acked)
    report(
        f"crash_sigkill[{backend}]",
        seed=seed,
        kills=kills,
        kills_before_first_write=early,
        acknowledged_calls=len(acked),
        acknowledged_objects=writes,
        lost=0,
        half_written=0,
        doctor_failures=0,
    )
    assert len(acked) >= kills - early, "the writer acknowledged too little to test anything"
