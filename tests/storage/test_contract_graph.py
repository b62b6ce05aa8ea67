"""Storage contract of the knowledge graph's side tables (lookup keys, jobs, traces), on both backends."""

from __future__ import annotations

import pytest

from memory_substrate.models import Job, Trace
from memory_substrate.storage.base import Store


def test_lookup_keys_replace_find_and_count(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.set_object_keys("ent:a", ["ent:any:x", "fact:custom:likes", "ent:any:shared"])
        s.set_object_keys("ent:b", ["ent:any:shared", "fact:custom:likes", "fact:custom:hates"])
    with store.read(namespace) as s:
        assert s.find_keys(["ent:any:shared", "missing"]) == [
            ("ent:any:shared", "ent:a"),
            ("ent:any:shared", "ent:b"),
        ]
        assert s.key_counts("fact:custom:") == [("fact:custom:likes", 2), ("fact:custom:hates", 1)]
        assert s.key_counts("fact:custom:", limit=1) == [("fact:custom:likes", 2)]
    with store.write(namespace) as s:
        s.set_object_keys("ent:a", [])  # removed
        s.set_object_keys("ent:b", ["ent:any:y"])  # replaced
    with store.read(namespace) as s:
        assert s.find_keys(["ent:any:shared", "ent:any:x"]) == []
        assert s.find_keys(["ent:any:y"]) == [("ent:any:y", "ent:b")]
        assert s.key_counts("fact:") == []
    with store.read(namespace + "-other") as s:
        assert s.find_keys(["ent:any:y"]) == []


def test_jobs_upsert_by_kind_and_target(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.put_job(
            Job(
                "job:1",
                "extract",
                "src:a",
                "pending",
                0,
                "2026-01-01T00:00:01",
                "2026-01-01T00:00:01",
                None,
                {"r": 1},
            )
        )
        s.put_job(
            Job(
                "job:2",
                "extract",
                "src:b",
                "pending",
                0,
                "2026-01-01T00:00:02",
                "2026-01-01T00:00:02",
                None,
                {},
            )
        )
        s.put_job(Job("job:9", "extract", "src:a", "failed", 3, "x", "2026-01-01T00:00:03", "boom", {"r": 2}))
    with store.read(namespace) as s:
        job = s.get_job("extract", "src:a")
        assert job is not None and job.id == "job:1" and job.status == "failed" and job.attempts == 3
        assert job.error == "boom" and job.data == {"r": 2}
        assert [j.target_id for j in s.list_jobs(kind="extract")] == ["src:a", "src:b"]
        assert [j.target_id for j in s.list_jobs(kind="extract", statuses=["pending"])] == ["src:b"]
        assert s.job_counts("extract") == {"failed": 1, "pending": 1}
        assert s.get_job("extract", "src:zzz") is None
    with store.read(namespace + "-other") as s:
        assert s.list_jobs(kind="extract") == [] and s.job_counts("extract") == {}


def test_traces_record_and_list_newest_first(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.record_trace(
            Trace("trace:1", "extraction", "src:a", "2026-01-01T00:00:01", {"n": 1, "nested": {"ü": [1]}})
        )
        s.record_trace(Trace("trace:2", "compile", None, "2026-01-01T00:00:02", {}))
        s.record_trace(Trace("trace:3", "extraction", "src:a", "2026-01-01T00:00:03", {"n": 3}))
    with store.read(namespace) as s:
        got = s.get_trace("trace:1")
        assert got is not None and got.data == {"n": 1, "nested": {"ü": [1]}} and got.subject_id == "src:a"
        assert [t.id for t in s.list_traces()] == ["trace:3", "trace:2", "trace:1"]
        assert [t.id for t in s.list_traces(kind="extraction", subject_id="src:a", limit=1)] == ["trace:3"]
        assert s.get_trace("trace:missing") is None
    with store.read(namespace + "-other") as s:
        assert s.get_trace("trace:1") is None


def test_graph_writes_refused_in_read_session(store: Store, namespace: str) -> None:
    from memory_substrate.errors import StorageError

    with store.read(namespace) as s, pytest.raises(StorageError, match="read session"):
        s.set_object_keys("ent:a", ["k"])
