"""A search's vector stream runs beside its full-text stream in a spare read session
(search/streams.py). Where sessions share a bounded pool (PostgreSQL) a spare session is taken only
when one is free: with every connection held, ``spare_read`` says so at once (no wait on the pool's
timeout) and the work runs in the caller's own session, with the same answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory, Settings
from memory_substrate.runtime import Runtime
from memory_substrate.search.streams import beside
from memory_substrate.storage.base import StoreSession
from memory_substrate.storage.postgres.store import PostgresStore

KNOWLEDGE = {
    "kind": "fact",
    "title": "WAL mode",
    "summary": "SQLite runs in WAL mode",
    "reason": "test",
    "memory_source": "user_declared",
    "scope_refs": ["scope:test"],
}


def _count(s: StoreSession) -> int:
    return sum(n for otype, _kind, _status, n in s.count_objects() if otype == "knowledge")


@pytest.fixture
def one_connection(postgres_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(postgres_url, min_size=1, max_size=1, idle_build_s=None, timeout=30.0)
    try:
        yield store
    finally:
        store.close()


@pytest.mark.postgres
def test_a_pool_with_every_connection_held_has_no_spare_session(
    one_connection: PostgresStore, namespace: str
) -> None:
    with one_connection.read(namespace):
        t0 = time.perf_counter()
        with one_connection.spare_read(namespace) as spare:
            assert spare is None
        assert time.perf_counter() - t0 < 5.0  # not the pool's 30 s timeout
    with one_connection.spare_read(namespace) as spare:  # the connection is free again
        assert spare is not None and _count(spare) == 0


@pytest.mark.postgres
def test_work_without_a_spare_session_runs_in_the_callers(
    one_connection: PostgresStore, namespace: str, postgres_url: str, tmp_path: Path
) -> None:
    settings = Settings(root=tmp_path, embedder="none", database_url=postgres_url)
    writer = Memory(settings, namespace=namespace)
    try:
        writer.remember("knowledge", KNOWLEDGE)
        writer.remember(
            "knowledge", {**KNOWLEDGE, "title": "Checkpoints", "summary": "a checkpoint every 1000 pages"}
        )
    finally:
        writer.close()
    rt = Runtime(one_connection, namespace, settings)
    with rt.read() as mine:
        t0 = time.perf_counter()
        answer = beside(rt, mine, _count).result()
        assert answer == 2 and time.perf_counter() - t0 < 5.0


def test_a_spare_session_reads_the_namespace(make_settings: Any, namespace: str) -> None:
    mem = Memory(make_settings(), namespace=namespace)
    try:
        mem.remember("knowledge", KNOWLEDGE)
        rt = mem.runtime
        with rt.read() as mine:
            # run on a worker in a session of its own (a thread's own connection, a free pooled one)
            assert beside(rt, mine, lambda s: (s is not mine, _count(s))).result() == (True, 1)
    finally:
        mem.close()
