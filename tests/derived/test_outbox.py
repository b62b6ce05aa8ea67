"""The outbox port on both stores: rows commit with the write or not at all, name what the
configured backends consume, and are written only when a derived backend is configured."""

from __future__ import annotations

from typing import Any

import pytest

from memory_substrate.errors import StorageError
from memory_substrate.indexing import derived_relations, search_doc
from memory_substrate.models import MemoryObject
from memory_substrate.storage.base import Store
from memory_substrate.storage.factory import open_store
from memory_substrate.storage.outbox import wanted_kinds


@pytest.fixture
def store(make_settings: Any) -> Any:
    s = open_store(make_settings())
    yield s
    s.close()


def _obj(oid: str, *refs: str) -> MemoryObject:
    return MemoryObject(
        id=oid,
        object_type="knowledge",
        kind="fact",
        status="active",
        title=oid,
        subject_refs=list(refs),
        created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-01T00:00:00+00:00",
    )


def _write(store: Store, namespace: str, obj: MemoryObject, *, fail: bool = False) -> None:
    import numpy as np

    with store.write(namespace) as s:
        s.insert_object(obj, search_doc(obj), None)
        s.insert_relations(derived_relations(obj, obj.created_at))
        s.upsert_vectors("m", "object", [(obj.id, np.ones(4, dtype=np.float32) / 2)])  # type: ignore[list-item]  # numpy's stubs type float32 / int as float64
        if fail:
            raise StorageError("boom")


def test_no_rows_without_a_derived_backend(store: Store, namespace: str) -> None:
    _write(store, namespace, _obj("know:1", "node:a"))
    with store.read(namespace) as s:
        assert s.outbox_count() == 0


def test_rows_commit_with_the_write_and_roll_back_with_it(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.set_config("graph_backend", "falkordb")
    obj = _obj("know:1", "node:a")
    _write(store, namespace, obj)
    with store.read(namespace) as s:
        rows = s.outbox_pending()
    rel = derived_relations(obj, obj.created_at)[0].id
    assert {(e.kind, e.item_id, e.detail) for e in rows} == {
        ("object", "know:1", ""),
        ("relation", rel, ""),
        ("vector:object", "know:1", "m"),
    }
    with pytest.raises(StorageError):
        _write(store, namespace, _obj("know:2", "node:b"), fail=True)
    with store.read(namespace) as s:
        assert [e.seq for e in s.outbox_pending()] == [e.seq for e in rows]  # the failed write left nothing
    with store.write(namespace) as s:
        assert s.delete_relations_from_origin("know:1") == 1
    with store.write(namespace) as s:
        assert s.outbox_delete([e.seq for e in rows]) == 3
    with store.read(namespace) as s:
        assert [(e.kind, e.item_id) for e in s.outbox_pending()] == [
            ("relation", rel)
        ]  # the delete was recorded
        assert s.get_relations([rel]) == {}
    with store.read(namespace + "-x") as s:
        assert s.outbox_count() == 0  # per namespace


def test_kinds_follow_the_configured_backends() -> None:
    assert wanted_kinds({}) == frozenset()
    assert wanted_kinds({"graph_backend": "file", "semantic_backend": "builtin"}) == frozenset()
    assert wanted_kinds({"graph_backend": "kuzu"}) == {"object", "relation"}
    assert wanted_kinds({"semantic_backend": "lancedb"}) == {"vector:object", "vector:segment"}
