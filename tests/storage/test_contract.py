"""The storage contract: every test runs against SQLite and against a real PostgreSQL.

Objects, segments, full text (field weights, CJK, diacritics), vectors, relations,
history and config. Isolation, atomicity, tokens and concurrency live in
``test_contract_isolation.py``.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from memory_substrate.models import AuditEvent, MemoryObject, PatchRecord, Relation
from memory_substrate.retrieval.terms import index_terms
from memory_substrate.storage.base import Store, StoreSession
from memory_substrate.text import index_text, query_terms
from tests.storage.builders import doc, make_obj, seg, seg_row


def _ts(n: int) -> str:
    return f"2024-01-01T00:00:{n:02d}.000000+00:00"


def test_sessions_implement_every_port_method() -> None:
    from memory_substrate.storage.postgres.store import PostgresStore
    from memory_substrate.storage.postgres.writes import PostgresSession
    from memory_substrate.storage.sqlite.store import SQLiteSession, SQLiteStore

    def port_methods(proto: type) -> set[str]:
        return {n for n, v in vars(proto).items() if inspect.isfunction(v) and not n.startswith("_")}

    for impl in (SQLiteSession, PostgresSession):
        assert port_methods(StoreSession) <= set(dir(impl)), impl
    for store_cls in (SQLiteStore, PostgresStore):
        assert port_methods(Store) <= set(dir(store_cls)), store_cls


def test_object_insert_get_update(store: Store, namespace: str) -> None:
    obj = make_obj(
        "know:1", title="Alpha", payload={"z": 1, "a": [1, 2]}, confidence=0.7, scope_refs=["scope:p"]
    )
    with store.write(namespace) as s:
        s.insert_object(obj, doc("Alpha"), "claim-1")
    with store.read(namespace) as s:
        assert s.get_object("know:1") == obj
        got = s.get_object("know:1")
        assert got is not None
        assert list(got.payload) == ["z", "a"]  # key order survives
        assert s.get_object("know:missing") is None
        assert s.get_objects(["know:1", "know:1", "know:missing"]) == {"know:1": obj}
        assert s.get_objects([]) == {}
    updated = replace(obj, status="contested", kind="decision", updated_at=_ts(5), version=2)
    with store.write(namespace) as s:
        s.update_object(updated, doc("Alpha"), None)
    with store.read(namespace) as s:
        assert s.get_object("know:1") == updated
        assert s.find_by_claim("claim-1") == []


def test_update_missing_object_raises(store: Store, namespace: str) -> None:
    from memory_substrate.errors import StorageError

    with pytest.raises(StorageError), store.write(namespace) as s:
        s.update_object(make_obj("know:nope"), doc("x"), None)


def test_list_objects_filters_order_paging(store: Store, namespace: str) -> None:
    objs = [
        make_obj("know:a", created_at=_ts(1), updated_at=_ts(9)),
        make_obj("know:b", kind="decision", created_at=_ts(2), updated_at=_ts(8)),
        make_obj(
            "work:c",
            object_type="work_item",
            kind="task",
            status="open",
            created_at=_ts(3),
            updated_at=_ts(7),
        ),
        make_obj("know:d", status="candidate", created_at=_ts(3), updated_at=_ts(7)),
    ]
    with store.write(namespace) as s:
        for o in objs:
            s.insert_object(o, doc(o.title), None)
    with store.read(namespace) as s:
        ids: Callable[[list[MemoryObject]], list[str]] = lambda rows: [o.id for o in rows]  # noqa: E731
        assert ids(s.list_objects()) == ["know:a", "know:b", "work:c", "know:d"]
        assert ids(s.list_objects(order="created_asc")) == ["know:a", "know:b", "know:d", "work:c"]
        assert ids(s.list_objects(order="created_desc")) == ["work:c", "know:d", "know:b", "know:a"]
        assert ids(s.list_objects(object_types=["work_item"])) == ["work:c"]
        assert ids(s.list_objects(kinds=["decision", "task"])) == ["know:b", "work:c"]
        assert ids(s.list_objects(statuses=["candidate"])) == ["know:d"]
        assert ids(s.list_objects(ids=["know:d", "know:a"])) == ["know:a", "know:d"]
        assert ids(s.list_objects(object_types=["knowledge"], statuses=["active"], order="created_asc")) == [
            "know:a",
            "know:b",
        ]
        assert ids(s.list_objects(order="created_asc", limit=2, offset=1)) == ["know:b", "know:d"]
        assert s.count_objects() == [
            ("knowledge", "decision", "active", 1),
            ("knowledge", "fact", "active", 1),
            ("knowledge", "fact", "candidate", 1),
            ("work_item", "task", "open", 1),
        ]


def test_claim_lookup_and_source_by_uri(store: Store, namespace: str) -> None:
    old = make_obj(
        "src:old", object_type="source", kind="file", created_at=_ts(1), metadata={"uri": "file:///a"}
    )
    new = make_obj(
        "src:new", object_type="source", kind="file", created_at=_ts(2), metadata={"uri": "file:///a"}
    )
    gone = make_obj(
        "src:gone",
        object_type="source",
        kind="file",
        status="archived",
        created_at=_ts(3),
        metadata={"uri": "file:///a"},
    )
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:1"), doc("one"), "k1")
        s.insert_object(make_obj("know:2"), doc("two"), "k1")
        s.insert_object(make_obj("know:3"), doc("three"), "k2")
        for o in (old, new, gone):
            s.insert_object(o, doc(o.title), None)
    with store.read(namespace) as s:
        assert sorted(o.id for o in s.find_by_claim("k1")) == ["know:1", "know:2"]
        assert s.find_by_claim("k-none") == []
        found = s.find_source_by_uri("file:///a")
        assert found is not None and found.id == "src:new"
        assert s.find_source_by_uri("file:///b") is None


def test_segments_by_source_and_keys(store: Store, namespace: str) -> None:
    segs_a = [seg("src:a", n, f"text {n}", role="user") for n in range(1, 6)]
    segs_b = [seg("src:b", 1, "other")]
    with store.write(namespace) as s:
        s.insert_segments(seg_row(x) for x in segs_a + segs_b)
    with store.read(namespace) as s:
        assert s.get_segments("src:a") == segs_a
        assert [x.id for x in s.get_segments("src:a", limit=2, offset=1)] == ["seg-2", "seg-3"]
        assert [x.id for x in s.get_segments("src:a", segment_ids=["seg-4", "seg-1"])] == ["seg-1", "seg-4"]
        assert s.get_segments("src:a", segment_ids=[]) == []
        assert s.get_segments("src:none") == []
        got = s.get_segments_by_keys(
            [("src:a", "seg-2"), ("src:b", "seg-1"), ("src:b", "seg-9"), ("src:a", "seg-2")]
        )
        assert sorted((x.source_id, x.id) for x in got) == [("src:a", "seg-2"), ("src:b", "seg-1")]
        assert s.get_segments_by_keys([]) == []
        assert s.count_segments() == 6
        assert s.count_segments("src:a") == 5
        assert s.count_segments("src:none") == 0
        assert list(s.iter_segments(batch_size=2)) == segs_a + segs_b


def test_object_text_field_weights(store: Store, namespace: str) -> None:
    """title outranks summary outranks body outranks meta; scores: higher is better."""
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:meta"), doc("plain words", "more words", "body words", "zebra"), None)
        s.insert_object(make_obj("know:body"), doc("plain words", "more words", "zebra crossing", "m"), None)
        s.insert_object(make_obj("know:summary"), doc("plain words", "a zebra here", "body words", "m"), None)
        s.insert_object(make_obj("know:title"), doc("Zebra facts", "more words", "body words", "m"), None)
        s.insert_object(make_obj("know:none"), doc("plain words", "more words", "body words", "m"), None)
    with store.read(namespace) as s:
        hits = s.search_objects_text(["zebra"], limit=10)
        assert [h.object_id for h in hits] == ["know:title", "know:summary", "know:body", "know:meta"]
        assert all(a.score > b.score > 0 for a, b in itertools.pairwise(hits))
        assert [h.object_id for h in s.search_objects_text(["zebra"], limit=2)] == [
            "know:title",
            "know:summary",
        ]
        # OR of terms: either term matches; matching both ranks higher.
        both = s.search_objects_text(["crossing", "facts"], limit=10)
        assert {h.object_id for h in both} == {"know:body", "know:title"}
        assert s.search_objects_text([], limit=10) == []
        assert s.search_objects_text(["absent"], limit=10) == []


def test_text_terms_are_literal(store: Store, namespace: str) -> None:
    """Terms that look like query syntax are matched literally, never parsed."""
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:1"), doc("and or not near"), None)
    with store.read(namespace) as s:
        for terms in (["or"], ["not"], ["'", '"', "&", "|", "!", ":*", "(", "\\"], ["a'b"], ["near"]):
            hits = s.search_objects_text(terms, limit=5)
            assert [h.object_id for h in hits] in ([], ["know:1"])
        assert [h.object_id for h in s.search_objects_text(["or", "'"], limit=5)] == ["know:1"]


def test_segment_text_search(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.insert_segments(
            [
                seg_row(seg("src:a", 1, "we chose kafka for events"), meta="user"),
                seg_row(seg("src:a", 2, "lunch plans"), meta="kafka channel"),
                seg_row(seg("src:b", 1, "kafka retention is seven days"), meta="assistant"),
            ]
        )
    with store.read(namespace) as s:
        hits = s.search_segments_text(["kafka"], limit=10)
        assert {(h.source_id, h.segment_id) for h in hits} == {
            ("src:a", "seg-1"),
            ("src:a", "seg-2"),
            ("src:b", "seg-1"),
        }
        assert (hits[-1].source_id, hits[-1].segment_id) == ("src:a", "seg-2")  # meta ranks below body
        only_b = s.search_segments_text(["kafka"], limit=10, source_ids=["src:b"])
        assert [(h.source_id, h.segment_id) for h in only_b] == [("src:b", "seg-1")]
        assert s.search_segments_text(["retention", "lunch"], limit=1)[0].score > 0
        assert s.search_segments_text([], limit=10) == []


def test_cjk_search(store: Store, namespace: str) -> None:
    texts = {
        "know:zh": "数据库迁移计划",
        "know:ja": "データベースの移行",
        "know:ko": "데이터베이스 이전",
        "know:en": "database",
    }
    with store.write(namespace) as s:
        for oid, title in texts.items():
            s.insert_object(make_obj(oid, title=title), doc(title), None)
        s.insert_segments([seg_row(seg("src:c", 1, "我们讨论了数据库迁移"))])
    with store.read(namespace) as s:
        assert [h.object_id for h in s.search_objects_text(query_terms("数据库"), limit=5)] == ["know:zh"]
        assert [h.object_id for h in s.search_objects_text(query_terms("移行"), limit=5)] == ["know:ja"]
        assert [h.object_id for h in s.search_objects_text(query_terms("데이터베이스"), limit=5)] == [
            "know:ko"
        ]
        assert [h.segment_id for h in s.search_segments_text(query_terms("迁移"), limit=5)] == ["seg-1"]


def test_diacritics_fold_like_the_embedded_tokenizer(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:1"), doc("Café résumé"), None)
    with store.read(namespace) as s:
        assert [h.object_id for h in s.search_objects_text(["cafe"], limit=5)] == ["know:1"]
        assert [h.object_id for h in s.search_objects_text([index_text("résumé")], limit=5)] == ["know:1"]


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_vectors_upsert_search_and_invalidation(store: Store, namespace: str) -> None:
    q = _unit(1, 0, 0)
    with store.write(namespace) as s:
        s.upsert_vectors("m1", "object", [("know:a", _unit(1, 0.1, 0)), ("know:b", _unit(0, 1, 0))])
        s.upsert_vectors("m1", "segment", [("src:x#seg-1", _unit(1, 0, 0))])
    with store.read(namespace) as s:
        hits = s.vector_search("m1", q, owner_type="object", limit=5)
        assert [h[0] for h in hits] == ["know:a", "know:b"]
        assert hits[0][1] == pytest.approx(float(_unit(1, 0.1, 0) @ q), abs=1e-5)
        assert hits[1][1] == pytest.approx(0.0, abs=1e-5)
        assert s.vector_search("m1", q, owner_type="object", limit=1)[0][0] == "know:a"
        assert s.vector_search("m2", q, owner_type="object", limit=5) == []
        assert s.vector_search("m1", _unit(1, 0), owner_type="object", limit=5) == []  # other dimension
        assert s.vector_stats() == {"object:m1": 2, "segment:m1": 1}
    # A new write is seen by the next search (no stale cache), and an upsert replaces.
    with store.write(namespace) as s:
        s.upsert_vectors("m1", "object", [("know:c", _unit(1, 0, 0)), ("know:b", _unit(-1, 0, 0))])
    with store.read(namespace) as s:
        hits = s.vector_search("m1", q, owner_type="object", limit=5)
        assert [h[0] for h in hits] == ["know:c", "know:a", "know:b"]
        assert hits[2][1] == pytest.approx(-1.0, abs=1e-5)
        assert sorted(s.vector_owners("object")) == [("know:a", "m1"), ("know:b", "m1"), ("know:c", "m1")]
        exported = list(s.iter_vectors(batch_size=2))
        assert [(t, o, m) for t, o, m, _ in exported] == [
            ("object", "know:a", "m1"),
            ("object", "know:b", "m1"),
            ("object", "know:c", "m1"),
            ("segment", "src:x#seg-1", "m1"),
        ]
        assert np.allclose(exported[1][3], _unit(-1, 0, 0))
        assert exported[1][3].dtype == np.float32


def test_relations(store: Store, namespace: str) -> None:
    rels = [
        Relation("rel:1", "about", "know:a", "node:x", "know:a", {"relation_schema": {"version": 1}}, _ts(1)),
        Relation("rel:2", "related_to", "know:b", "know:a", "know:b", {}, _ts(2)),
        Relation("rel:3", "about", "know:c", "node:y", "know:c", {}, _ts(3)),
    ]
    with store.write(namespace) as s:
        s.insert_relations(rels)
        s.insert_relations([])
    with store.read(namespace) as s:
        assert s.list_relations() == rels
        assert s.list_relations(limit=1) == rels[:1]
        assert [r.id for r in s.relations_of(["know:a"])] == ["rel:1", "rel:2"]
        assert [r.id for r in s.relations_of(["node:y", "know:b"])] == ["rel:2", "rel:3"]
        assert s.relations_of([]) == []
    replaced = replace(rels[0], target_id="node:z")
    with store.write(namespace) as s:
        s.insert_relations([replaced])  # same id replaces
        assert s.delete_relations_from_origin("know:c") == 1
        assert s.delete_relations(["rel:2", "rel:missing"]) == 1
    with store.read(namespace) as s:
        assert s.list_relations() == [replaced]


def test_events_patches_and_config(store: Store, namespace: str) -> None:
    p1 = PatchRecord("patch:1", "memory_remember", "knowledge", "why", _ts(1), 2, {"mode": "knowledge"})
    p2 = PatchRecord("patch:2", "memory_ingest", "conversation", None, _ts(2), 1, {})
    events1 = [
        AuditEvent("evt:1", "patch:1", "know:a", "create", _ts(1), {"kind": "fact"}),
        AuditEvent("evt:2", "patch:1", "know:b", "create", _ts(1), {}),
    ]
    events2 = [
        AuditEvent("evt:3", "patch:2", "know:a", "status_change", _ts(2), {"changes": {"status": "x"}})
    ]
    with store.write(namespace) as s:
        s.record_patch(p1, events1)
        s.record_patch(p2, events2)
        s.set_config("decay_days", 30)
        s.set_config("weights", {"a": 1.5, "b": [1, "x"]})
        s.set_config("decay_days", 45)
    with store.read(namespace) as s:
        assert s.list_patches() == [p2, p1]
        assert s.list_patches(limit=1) == [p2]
        assert [e.id for e in s.list_events()] == ["evt:3", "evt:2", "evt:1"]
        assert s.list_events(object_id="know:a") == [events2[0], events1[0]]
        assert s.list_events(limit=1) == events2
        assert s.get_config() == {"decay_days": 45, "weights": {"a": 1.5, "b": [1, "x"]}}


def test_write_in_read_session_refused(store: Store, namespace: str) -> None:
    from memory_substrate.errors import StorageError

    with store.read(namespace) as s, pytest.raises(StorageError):
        s.insert_object(make_obj("know:1"), doc("x"), None)
    with store.read(namespace) as s, pytest.raises(StorageError):
        s.set_config("a", 1)


def test_schema_version_and_namespaces(store: Store, namespace: str) -> None:
    assert store.schema_version() >= 1
    with store.write(namespace) as s:
        s.insert_object(make_obj("know:1"), doc("x"), None)
    with store.write(namespace + "-p") as s:
        s.record_patch(PatchRecord("patch:1", "t", "m", None, _ts(1), 0, {}), [])
    assert {namespace, namespace + "-p"} <= set(store.namespaces())


def test_get_vectors_by_owner(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.upsert_vectors("m1", "segment", [("src:x#seg-1", _unit(1, 0, 0)), ("src:x#seg-2", _unit(0, 1, 0))])
        s.upsert_vectors("m2", "object", [("know:a", _unit(0, 0, 1))])
    with store.read(namespace) as s:
        got = s.get_vectors("m1", "segment", ["src:x#seg-2", "src:x#seg-1", "src:x#seg-9"])
        assert set(got) == {"src:x#seg-1", "src:x#seg-2"}
        assert got["src:x#seg-2"].dtype == np.float32
        assert np.allclose(got["src:x#seg-2"], _unit(0, 1, 0))
        assert s.get_vectors("m2", "segment", ["src:x#seg-1"]) == {}
        assert s.get_vectors("m1", "segment", []) == {}
    # A later write is visible (no stale cache).
    with store.write(namespace) as s:
        s.upsert_vectors("m1", "segment", [("src:x#seg-1", _unit(-1, 0, 0))])
    with store.read(namespace) as s:
        assert np.allclose(s.get_vectors("m1", "segment", ["src:x#seg-1"])["src:x#seg-1"], _unit(-1, 0, 0))


def test_segment_windows(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.insert_segments([seg_row(seg("src:a", n, f"a{n}")) for n in range(1, 11)])
        s.insert_segments([seg_row(seg("src:b", n, f"b{n}")) for n in range(1, 4)])
    with store.read(namespace) as s:
        got = s.segment_windows([("src:a", 2, 4), ("src:a", 3, 6), ("src:b", 0, 0), ("src:zz", 0, 5)])
        keys = sorted((g.source_id, g.ordinal) for g in got)
        # Overlapping ranges return each segment once.
        assert keys == [("src:a", 2), ("src:a", 3), ("src:a", 4), ("src:a", 5), ("src:a", 6), ("src:b", 0)]
        assert {g.text for g in got if g.source_id == "src:b"} == {"b1"}
        assert s.segment_windows([]) == []


def test_segment_windows_overlapping_across_batches(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.insert_segments([seg_row(seg("src:a", n, f"a{n}")) for n in range(1, 401)])
    # More ranges than one batch holds, all overlapping: every segment still comes back once.
    ranges = [("src:a", i, i + 5) for i in range(0, 390)]
    with store.read(namespace) as s:
        got = s.segment_windows(ranges)
    assert sorted(g.ordinal for g in got) == list(range(0, 395))


def test_light_segment_windows_carry_what_ranking_needs(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        s.insert_segments(
            [
                seg_row(
                    seg("src:a", 1, "hello", name="ana", created_at="2024-05-01T10:00:00+00:00", role="user")
                ),
                seg_row(seg("src:a", 2, "no speaker here")),
                seg_row(seg("src:a", 3, "late", name="bo")),
            ]
        )
    with store.read(namespace) as s:
        full = {g.id: g for g in s.segment_windows([("src:a", 0, 2)])}
        light = {g.id: g for g in s.segment_windows([("src:a", 0, 2)], light=True)}
    assert set(light) == set(full) == {"seg-1", "seg-2", "seg-3"}
    for sid, g in light.items():
        assert (g.source_id, g.ordinal, g.text, g.created_at) == (
            full[sid].source_id,
            full[sid].ordinal,
            full[sid].text,
            full[sid].created_at,
        )
        assert g.locator == {} and g.hash == ""
    assert light["seg-1"].metadata == {"name": "ana", "created_at": "2024-05-01T10:00:00+00:00"}
    assert light["seg-2"].metadata == {} and light["seg-3"].metadata == {"name": "bo"}
    assert full["seg-1"].metadata["role"] == "user" and full["seg-1"].hash == "h1"
    # The ranker's stored terms come with light rows only: what index_terms makes of the text.
    assert light["seg-2"].terms == " ".join(index_terms("no speaker here")) == "speaker"
    assert light["seg-1"].terms == " ".join(index_terms("hello"))
    assert all(g.terms is None for g in full.values())


def test_light_reads_by_key_match_light_windows(store: Store, namespace: str) -> None:
    rows = [
        seg_row(
            seg("src:a", 1, "Running the migrations", name="ana", created_at="2024-05-01T10:00:00+00:00")
        ),
        seg_row(seg("src:a", 2, "de-stress before the release", name="bo")),
        seg_row(seg("src:b", 1, "")),
    ]
    with store.write(namespace) as s:
        s.insert_segments(rows)
    with store.read(namespace) as s:
        by_key = {
            (g.source_id, g.id): g
            for g in s.get_segments_by_keys(
                [("src:a", "seg-1"), ("src:a", "seg-2"), ("src:b", "seg-1"), ("src:x", "seg-1")], light=True
            )
        }
        windows = {
            (g.source_id, g.id): g for g in s.segment_windows([("src:a", 0, 5), ("src:b", 0, 5)], light=True)
        }
        whole = s.get_segments_by_keys([("src:a", "seg-1")])
    assert set(by_key) == set(windows) == {("src:a", "seg-1"), ("src:a", "seg-2"), ("src:b", "seg-1")}
    for key, g in by_key.items():
        w = windows[key]
        assert (g.text, g.ordinal, g.metadata, g.created_at, g.terms) == (
            w.text,
            w.ordinal,
            w.metadata,
            w.created_at,
            w.terms,
        )
    terms = by_key[("src:a", "seg-2")].terms
    assert terms is not None
    assert terms.split() == index_terms("de-stress before the release")
    assert by_key[("src:b", "seg-1")].terms == ""
    assert whole[0].locator == {"message_index": 0} and whole[0].terms is None


def test_object_heads(store: Store, namespace: str) -> None:
    a = make_obj("know:a", title="Alpha plan", summary="the first", status="contested", kind="decision")
    b = make_obj("src:b", object_type="source", kind="conversation", title="Chat", summary="")
    with store.write(namespace) as s:
        s.insert_object(a, doc("Alpha plan"), None)
        s.insert_object(b, doc("Chat"), None)
    with store.read(namespace) as s:
        heads = s.get_object_heads(["know:a", "src:b", "know:missing", "know:a"])
        assert s.get_object_heads([]) == {}
    assert set(heads) == {"know:a", "src:b"}
    assert (heads["know:a"].object_type, heads["know:a"].kind, heads["know:a"].status) == (
        "knowledge",
        "decision",
        "contested",
    )
    assert (heads["know:a"].title, heads["know:a"].summary) == ("Alpha plan", "the first")
    assert (heads["src:b"].object_type, heads["src:b"].title, heads["src:b"].summary) == (
        "source",
        "Chat",
        "",
    )


def test_vector_search_after_many_writes_equals_a_cold_read(
    store: Store, namespace: str, make_settings: Any
) -> None:
    """A warm process keeps its matrices current by applying its own commits (inserts,
    replacements, deletes, a second model, a rolled-back write); every search must equal what a
    freshly opened store, which loads everything from disk, answers."""
    from memory_substrate.storage.factory import open_store

    rng = np.random.default_rng(3)

    def vec() -> np.ndarray:
        v = rng.normal(size=8).astype(np.float32)
        return v / np.linalg.norm(v)

    queries = [vec() for _ in range(4)]
    live: list[str] = []

    def answers(s: StoreSession) -> list[list[tuple[str, float]]]:
        out = [s.vector_search(m, q, owner_type="object", limit=7) for q in queries for m in ("m1", "m2")]
        return [[(oid, round(score, 4)) for oid, score in hits] for hits in out]

    for step in range(40):
        with store.read(namespace) as s:
            answers(s)  # keep the warm matrices cached at the current version
        with store.write(namespace) as s:
            action = step % 5
            if action in (0, 1, 2) or not live:
                fresh = [f"know:{step}-{j}" for j in range(int(rng.integers(1, 4)))]
                for oid in fresh:
                    s.insert_object(make_obj(oid), doc(title=oid), None)
                again = (
                    [str(o) for o in rng.choice(live, size=min(2, len(live)), replace=False)] if live else []
                )
                s.upsert_vectors("m1", "object", [(oid, vec()) for oid in fresh + again])
                live.extend(fresh)
            elif action == 3:
                gone = str(rng.choice(live))
                assert s.delete_object(gone)
                live.remove(gone)
            else:
                s.upsert_vectors("m2", "object", [(oid, vec()) for oid in live[:3]])
        if step % 7 == 6:  # a rolled-back write must leave no trace in the warm cache
            with pytest.raises(RuntimeError), store.write(namespace) as s:
                s.upsert_vectors("m1", "object", [("know:phantom", queries[0])])
                raise RuntimeError("roll back")
        cold = open_store(make_settings())
        try:
            with store.read(namespace) as warm_s, cold.read(namespace) as cold_s:
                warm, fresh_answers = answers(warm_s), answers(cold_s)
                assert warm == fresh_answers, f"step {step}"
                assert all(oid != "know:phantom" for hits in warm for oid, _ in hits)
                got = warm_s.get_vectors("m1", "object", live)
                want = cold_s.get_vectors("m1", "object", live)
                assert set(got) == set(want)
                assert all(np.allclose(got[k], want[k]) for k in got)
        finally:
            cold.close()


def test_ids_by_tail_finds_every_object_ending_with_the_digits_in_this_namespace_only(
    store: Store, namespace: str
) -> None:
    ids = [
        "know:01a2000000000000abc123",
        "src:01a2000000000001abc123",
        "know:abc123",
        "know:01a2000000000002ffffff",
    ]
    with store.write(namespace) as s:
        for oid in ids:
            s.insert_object(make_obj(oid), doc(oid), None)
    with store.write(namespace + "-other") as s:
        s.insert_object(make_obj("know:99990000000000009abc123"), doc("x"), None)
    with store.read(namespace) as s:
        assert s.ids_by_tail(["abc123"]) == sorted(ids[:3])
        assert s.ids_by_tail(["abc123", "ffffff", "000000"]) == sorted(ids)
        assert s.ids_by_tail(["bc123", ""]) == []  # only whole 6-character tails are looked up
        assert s.ids_by_tail([]) == []
