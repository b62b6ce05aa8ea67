"""A vector search inside a write session that is rolled back leaves nothing behind.

A transaction's own vector writes (upserts and an object's deletion alike) are visible to its
searches; once it rolls back, readers must see the committed vectors, even after a later
commit (the SQLite store caches matrices by a version number that a rollback frees for reuse).
"""

from __future__ import annotations

import numpy as np
import pytest

from memory_substrate.storage.base import Store
from tests.storage.builders import doc, make_obj


def _unit(i: int) -> np.ndarray:
    v = np.zeros(8, dtype=np.float32)
    v[i] = 1.0
    return v


def _ids(store: Store, namespace: str, i: int) -> set[str]:
    with store.read(namespace) as s:
        return {oid for oid, _ in s.vector_search("m", _unit(i), owner_type="object", limit=10)}


def test_a_rolled_back_deletion_searched_in_its_session_is_not_what_readers_see(
    store: Store, namespace: str
) -> None:
    with store.write(namespace) as s:
        for oid in ("know:a", "know:c"):
            s.insert_object(make_obj(oid, title=oid), doc(oid), None)
        s.upsert_vectors("m", "object", [("know:a", _unit(0)), ("know:c", _unit(2))])
    assert _ids(store, namespace, 0) == {"know:a", "know:c"}

    with pytest.raises(RuntimeError), store.write(namespace) as s:
        assert s.delete_object("know:a")
        inside = {oid for oid, _ in s.vector_search("m", _unit(0), owner_type="object", limit=10)}
        assert inside == {"know:c"}  # the session sees its own deletion
        raise RuntimeError("roll back")

    with store.write(namespace) as s:
        s.insert_object(make_obj("know:b", title="b"), doc("b"), None)
        s.upsert_vectors("m", "object", [("know:b", _unit(1))])
    assert _ids(store, namespace, 0) == {"know:a", "know:b", "know:c"}
