"""Contract: atomic writes, namespace isolation, tokens and concurrent governed writers (both backends)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from memory_substrate import Memory
from memory_substrate.errors import DuplicateError, StorageError
from memory_substrate.models import AuditEvent, PatchRecord, Relation
from memory_substrate.storage.base import Store
from tests.storage.builders import doc, make_obj, seg, seg_row

TS = "2024-01-01T00:00:00.000000+00:00"


def _fill(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:1", title="shared secret"), doc("shared secret"), "claim")
        s.insert_object(
            make_obj("src:1", object_type="source", kind="file", metadata={"uri": "file:///x"}),
            doc("shared"),
            None,
        )
        s.insert_segments([seg_row(seg("src:1", 1, "shared secret text"))])
        s.insert_relations([Relation("rel:1", "about", "know:1", "node:1", "know:1", {}, TS)])
        s.upsert_vectors("m", "object", [("know:1", np.ones(4, dtype=np.float32) / 2)])  # type: ignore[list-item]  # numpy's stubs type float32 / int as float64
        s.upsert_vectors("m", "segment", [("src:1#seg-1", np.ones(4, dtype=np.float32) / 2)])  # type: ignore[list-item]  # numpy's stubs type float32 / int as float64
        s.record_patch(
            PatchRecord("patch:1", "t", "m", None, TS, 1, {}),
            [AuditEvent("evt:1", "patch:1", "know:1", "create", TS)],
        )
        s.set_config("k", "v")


def test_namespace_isolation(store: Store, namespace: str) -> None:
    other = namespace + "-b"
    _fill(store, namespace)
    q: npt.NDArray[np.float32] = np.ones(4, dtype=np.float32) / 2  # type: ignore[assignment]  # numpy's stubs type float32 / int as float64
    with store.read(other) as s:
        assert s.get_object("know:1") is None
        assert s.get_objects(["know:1", "src:1"]) == {}
        assert s.list_objects(limit=1000) == []
        assert s.find_by_claim("claim") == []
        assert s.find_source_by_uri("file:///x") is None
        assert s.count_objects() == []
        assert s.get_segments("src:1") == []
        assert s.get_segments_by_keys([("src:1", "seg-1")]) == []
        assert s.count_segments() == 0
        assert list(s.iter_segments()) == []
        assert s.search_objects_text(["shared", "secret"], limit=10) == []
        assert s.search_segments_text(["shared", "secret"], limit=10) == []
        assert s.vector_search("m", q, owner_type="object", limit=10) == []
        assert s.vector_search("m", q, owner_type="segment", limit=10) == []
        assert s.vector_stats() == {}
        assert s.vector_owners("object") == []
        assert list(s.iter_vectors()) == []
        assert s.relations_of(["know:1", "node:1"]) == []
        assert s.list_relations() == []
        assert s.list_events() == [] and s.list_events(object_id="know:1") == []
        assert s.list_patches() == []
        assert s.get_config() == {}
    # Writes in the other namespace never touch the first one.
    with store.write(other) as s:
        assert s.delete_relations_from_origin("know:1") == 0
        assert s.delete_relations(["rel:1"]) == 0
        with pytest.raises(StorageError):
            s.update_object(make_obj("know:1"), doc("x"), None)
    with store.read(namespace) as s:
        assert s.get_object("know:1") is not None
        assert len(s.list_relations()) == 1
    # The same ids may exist in two namespaces independently.
    _fill(store, other)
    with store.read(other) as s:
        assert s.count_segments() == 1


def test_namespace_is_required(store: Store) -> None:
    for opener in (store.read, store.write):
        with pytest.raises(StorageError), opener("") as _:
            pass


def test_exception_in_write_session_leaves_nothing(store: Store, namespace: str) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom), store.write(namespace) as s:
        s.insert_object(make_obj("know:1"), doc("atomic"), "claim")
        s.insert_segments([seg_row(seg("src:1", 1, "atomic"))])
        s.insert_relations([Relation("rel:1", "about", "know:1", "node:1", "know:1", {}, TS)])
        s.upsert_vectors("m", "object", [("know:1", np.ones(3, dtype=np.float32))])
        s.record_patch(
            PatchRecord("patch:1", "t", "m", None, TS, 1, {}),
            [AuditEvent("evt:1", "patch:1", "know:1", "create", TS)],
        )
        s.set_config("k", 1)
        raise Boom
    with store.read(namespace) as s:
        assert s.list_objects() == [] and s.count_segments() == 0
        assert s.search_objects_text(["atomic"], limit=5) == []
        assert s.search_segments_text(["atomic"], limit=5) == []
        assert s.list_relations() == [] and s.vector_stats() == {}
        assert s.list_patches() == [] and s.list_events() == [] and s.get_config() == {}
    # The store is still usable after the rollback.
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:1"), doc("atomic"), None)
    with store.read(namespace) as s:
        assert s.get_object("know:1") is not None


def test_read_session_is_a_snapshot(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:1"), doc("x"), None)
    with store.read(namespace) as r:
        assert len(r.list_objects()) == 1
        done = threading.Event()

        def writer() -> None:
            with store.write(namespace) as w:
                w.insert_object(make_obj("know:2"), doc("y"), None)
            done.set()

        t = threading.Thread(target=writer)
        t.start()
        assert done.wait(30), "a writer must not wait for a reader"
        assert len(r.list_objects()) == 1  # still the snapshot taken when the session began
        t.join()
    with store.read(namespace) as r:
        assert len(r.list_objects()) == 2


def test_tokens(store: Store, namespace: str) -> None:
    assert store.namespace_for_token("a" * 64) is None
    store.create_token("b" * 64, namespace, "laptop")
    assert store.namespace_for_token("b" * 64) == namespace
    with pytest.raises(Exception):  # noqa: B017 - each driver raises its own integrity error
        store.create_token("b" * 64, namespace + "-other", "dup")
    assert store.namespace_for_token("b" * 64) == namespace


KNOWLEDGE: dict[str, Any] = {
    "kind": "fact",
    "title": "Deploys run on Fridays",
    "summary": "The team deploys production every Friday afternoon.",
    "reason": "stated by the user",
    "memory_source": "user_declared",
    "scope_refs": ["scope:project"],
    "payload": {"subject": "node:team", "predicate": "deploys_on", "value": "friday"},
}


def test_concurrent_duplicate_claims_exactly_one_wins(make_settings: Any, namespace: str) -> None:
    """Writers in separate stores (as in separate processes) race on one structured claim."""
    writers = 6
    # Create the database first: the race under test is governance, not first-time schema setup
    # (a fresh SQLite file opened by several connections at once can report "database is locked").
    Memory(make_settings(), namespace=namespace).close()
    barrier = threading.Barrier(writers)
    outcomes: list[str] = []
    lock = threading.Lock()

    def run() -> None:
        mem = Memory(make_settings(), namespace=namespace)
        try:
            barrier.wait(timeout=30)
            try:
                result = mem.remember("knowledge", dict(KNOWLEDGE))
                outcome = "created:" + result["object_id"]
            except DuplicateError as exc:
                outcome = exc.code
        finally:
            mem.close()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=run) for _ in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(outcomes) == writers
    assert sum(o.startswith("created:") for o in outcomes) == 1, outcomes
    assert outcomes.count("memory_duplicate") == writers - 1, outcomes
    with Memory(make_settings(), namespace=namespace) as mem:
        counts = mem.status()["counts"]
        assert counts["by_object_type"]["knowledge"] == 1


def test_rolled_back_vectors_never_reach_later_readers(store: Store, namespace: str) -> None:
    """A search inside a write that rolls back must not leave its matrix for later readers.

    The version a rolled-back write bumped to is reused by the next commit, so a matrix cached
    under it would be served as if current: the phantom vector would be found and the committed
    one missed.
    """
    q = np.array([1, 0, 0, 0], dtype=np.float32)
    with store.write(namespace) as s:
        s.upsert_vectors("m", "object", [("know:base", np.array([0, 1, 0, 0], dtype=np.float32))])
    with store.read(namespace) as s:
        assert [h[0] for h in s.vector_search("m", q, owner_type="object", limit=5)] == ["know:base"]
    with pytest.raises(RuntimeError), store.write(namespace) as s:
        s.upsert_vectors("m", "object", [("know:phantom", q)])
        assert s.vector_search("m", q, owner_type="object", limit=1)[0][0] == "know:phantom"
        assert "know:phantom" in s.get_vectors("m", "object", ["know:phantom"])
        raise RuntimeError("roll back")
    with store.write(namespace) as s:
        s.upsert_vectors("m", "object", [("know:real", q)])
    with store.read(namespace) as s:
        ids = [h[0] for h in s.vector_search("m", q, owner_type="object", limit=5)]
        assert ids == ["know:real", "know:base"]
        assert "know:phantom" not in s.get_vectors("m", "object", ["know:phantom", "know:real"])
