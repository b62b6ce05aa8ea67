"""Contract: Store.delete_namespace removes every row of one namespace in every table, and
nothing of any other namespace (both backends)."""

from __future__ import annotations

from typing import Any

import numpy as np

from memory_substrate import traces
from memory_substrate.models import Job
from memory_substrate.storage.base import Store
from tests.storage.builders import doc, make_obj, seg, seg_row
from tests.storage.test_contract_isolation import _fill

ROWS = {
    "objects",
    "segments",
    "relations",
    "vectors",
    "patches",
    "audit_events",
    "config",
    "object_keys",
    "jobs",
    "traces",
    "tokens",
}


def _fill_all(store: Store, namespace: str) -> None:
    _fill(store, namespace)
    with store.write(namespace) as s:
        s.set_object_keys("know:1", ["ent:any:secret"])
        s.put_job(Job("job:1", "extract", "src:1", "pending", 0, "t", "t"))
        traces.record(s, "compile", None, {"task": "x"})
    store.create_token(f"hash-{namespace}", namespace, "label")


def _snapshot(store: Store, namespace: str) -> dict[str, Any]:
    with store.read(namespace) as s:
        return {
            "objects": sum(n for *_, n in s.count_objects()),
            "segments": s.count_segments(),
            "text": [h.object_id for h in s.search_objects_text(["secret"], limit=10)],
            "segment_text": [h.segment_id for h in s.search_segments_text(["secret"], limit=10)],
            "vectors": s.vector_search(
                "m",
                np.ones(4, dtype=np.float32) / 2,  # type: ignore[arg-type]  # numpy's stubs type float32 / int as float64
                owner_type="object",
                limit=5,
            ),
            "relations": len(s.list_relations()),
            "patches": len(s.list_patches()),
            "config": s.get_config(),
            "keys": s.find_keys(["ent:any:secret"]),
            "jobs": s.job_counts("extract"),
            "traces": len(s.list_traces()),
        }


def test_delete_namespace_removes_every_row_and_keeps_others(store: Store, namespace: str) -> None:
    other = namespace + "-keep"
    _fill_all(store, namespace)
    _fill_all(store, other)
    kept_before = _snapshot(store, other)
    assert namespace in store.namespaces()

    counts = store.delete_namespace(namespace)

    assert {t for t, n in counts.items() if n > 0} >= ROWS, counts
    assert namespace not in store.namespaces()
    gone = _snapshot(store, namespace)
    assert gone == {
        "objects": 0,
        "segments": 0,
        "text": [],
        "segment_text": [],
        "vectors": [],
        "relations": 0,
        "patches": 0,
        "config": {},
        "keys": [],
        "jobs": {},
        "traces": 0,
    }
    assert store.namespace_for_token(f"hash-{namespace}") is None
    assert _snapshot(store, other) == kept_before
    assert store.namespace_for_token(f"hash-{other}") == other
    # A second delete finds nothing; the namespace can be filled again from scratch.
    assert sum(store.delete_namespace(namespace).values()) == 0
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:2", title="fresh secret"), doc("fresh secret"), None)
        s.insert_segments([seg_row(seg("src:2", 1, "fresh secret text"))])
        s.upsert_vectors("m", "object", [("know:2", np.ones(4, dtype=np.float32) / 2)])  # type: ignore[list-item]  # numpy's stubs type float32 / int as float64
    again = _snapshot(store, namespace)
    assert again["text"] == ["know:2"]
    assert [k for k, _ in again["vectors"]] == ["know:2"]
