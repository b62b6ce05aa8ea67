"""Ports added for the graph toolset, on both backends: ``delete_object`` (the object and every
derived row go, history stays), ``edges_of`` and ``relations_among`` (graph walks)."""

from __future__ import annotations

import numpy as np

from memory_substrate.models import AuditEvent, PatchRecord, Relation
from memory_substrate.storage.base import Store
from memory_substrate.text import query_terms
from tests.storage.builders import doc, make_obj, seg, seg_row

TS = "2024-01-01T00:00:00.000000+00:00"


def _unit(i: int) -> np.ndarray:
    v = np.zeros(4, dtype=np.float32)
    v[i] = 1.0
    return v


def test_delete_object_removes_derived_rows_and_keeps_history(store: Store, namespace: str) -> None:
    with store.write(namespace) as s:
        for oid, title in (("know:a", "zebra crossing"), ("know:b", "other thing"), ("ent:c", "Carol")):
            s.insert_object(make_obj(oid, title=title), doc(title), "claim-a" if oid == "know:a" else None)
        s.insert_object(
            make_obj("src:s", object_type="source", kind="conversation", title="chat"), doc("chat"), None
        )
        s.insert_segments([seg_row(seg("src:s", 1, "zebra talk"))])
        s.set_object_keys("know:a", ["fact:s:ent:c", "ttl:expiring"])
        s.upsert_vectors("m", "object", [("know:a", _unit(0)), ("know:b", _unit(1))])
        s.upsert_vectors("m", "entity:person", [("ent:c", _unit(2))])
        s.upsert_vectors("m", "segment", [("src:s#seg-1", _unit(3))])
        s.insert_relations(
            [
                Relation("rel:1", "about", "know:a", "ent:c", "know:a", {}, TS),
                Relation("rel:2", "RELATED_TO", "know:b", "know:a", None, {}, TS),
                Relation("rel:3", "RELATED_TO", "know:b", "ent:c", None, {}, TS),
            ]
        )
        s.record_patch(
            PatchRecord("patch:1", "t", "m", None, TS, 1),
            [AuditEvent("evt:1", "patch:1", "know:a", "create", TS)],
        )
    with store.read(namespace) as s:  # warm any in-memory vector matrix before the delete
        assert s.vector_search("m", _unit(0), owner_type="object", limit=5)[0][0] == "know:a"
    with store.write(namespace) as s:
        assert s.delete_object("know:a") is True
        assert s.delete_object("know:a") is False
        assert s.delete_object("src:s") is True
    with store.read(namespace) as s:
        assert s.get_object("know:a") is None and s.get_object("know:b") is not None
        assert [h.object_id for h in s.search_objects_text(query_terms("zebra"), limit=10)] == []
        assert s.search_segments_text(query_terms("zebra"), limit=10) == []
        assert s.get_segments("src:s") == []
        assert s.find_keys(["fact:s:ent:c", "ttl:expiring"]) == []
        assert [r.id for r in s.list_relations()] == ["rel:3"]
        assert s.find_by_claim("claim-a") == []
        assert [h[0] for h in s.vector_search("m", _unit(0), owner_type="object", limit=5)] == ["know:b"]
        assert s.vector_owners("segment") == []
        assert [o for o, _ in s.vector_owners("entity:person")] == ["ent:c"]
        assert [e.id for e in s.list_events(object_id="know:a")] == ["evt:1"]


def test_delete_object_stays_in_its_namespace(store: Store, namespace: str) -> None:
    other = namespace + "-x"
    for ns in (namespace, other):
        with store.write(ns) as s:
            s.insert_object(make_obj("know:a", title="same id"), doc("same id"), None)
    with store.write(namespace) as s:
        assert s.delete_object("know:a")
    with store.read(other) as s:
        assert s.get_object("know:a") is not None


def test_edges_of_and_relations_among(store: Store, namespace: str) -> None:
    rels = [
        Relation("rel:ab", "R", "know:a", "know:b", None, {"properties": {"w": 1}}, TS),
        Relation("rel:bc", "R", "know:b", "know:c", None, {}, TS),
        Relation("rel:cd", "S", "know:c", "know:d", "know:c", {}, TS),
    ]
    with store.write(namespace) as s:
        s.insert_relations(rels)
    with store.write(namespace + "-x") as s:
        s.insert_relations([Relation("rel:zz", "R", "know:b", "know:z", None, {}, TS)])
    with store.read(namespace) as s:
        assert sorted(s.edges_of(["know:b"], limit=10)) == [
            ("rel:ab", "R", "know:a", "know:b"),
            ("rel:bc", "R", "know:b", "know:c"),
        ]
        assert len(s.edges_of(["know:b", "know:c"], limit=10)) == 3  # an edge between two of them once
        assert len(s.edges_of(["know:b", "know:c"], limit=2)) == 2
        assert s.edges_of([], limit=10) == []
        among = s.relations_among(["know:a", "know:b", "know:c"])
        assert [r.id for r in among] == ["rel:ab", "rel:bc"] and among[0].payload == {"properties": {"w": 1}}
        assert s.relations_among(["know:a"]) == [] and s.relations_among([]) == []


def test_edge_reads_count_each_edge_once_and_edges_between_meets_two_sets(
    store: Store, namespace: str
) -> None:
    # a-b twice (two types), b-c, c-d, d-a, and b->b's twin in another namespace.
    rels = [
        Relation("rel:ab", "R", "know:a", "know:b", None, {}, TS),
        Relation("rel:ab2", "S", "know:b", "know:a", None, {}, TS),
        Relation("rel:bc", "R", "know:b", "know:c", None, {}, TS),
        Relation("rel:cd", "R", "know:c", "know:d", None, {}, TS),
        Relation("rel:da", "R", "know:d", "know:a", None, {}, TS),
    ]
    with store.write(namespace) as s:
        s.insert_relations(rels)
    with store.write(namespace + "-x") as s:
        s.insert_relations([Relation("rel:ab", "R", "know:a", "know:b", None, {}, TS)])
    with store.read(namespace) as s:
        # Edges with both ends among the ids count once toward the limit: fewer than the limit
        # means the read is complete (a graph walk relies on it).
        every = s.edges_of(["know:a", "know:b"], limit=10)
        assert sorted(e[0] for e in every) == ["rel:ab", "rel:ab2", "rel:bc", "rel:da"]
        assert len(s.edges_of(["know:a", "know:b"], limit=4)) == 4
        assert len({e[0] for e in s.edges_of(["know:a", "know:b"], limit=3)}) == 3
        assert sorted(s.edges_between(["know:a"], ["know:b", "know:d"], limit=10)) == [
            ("rel:ab", "R", "know:a", "know:b"),
            ("rel:ab2", "S", "know:b", "know:a"),
            ("rel:da", "R", "know:d", "know:a"),
        ]
        # Either side may be the bigger one; an edge with both ends on both sides comes once.
        assert sorted(
            e[0] for e in s.edges_between(["know:b", "know:c", "know:d"], ["know:c"], limit=10)
        ) == ["rel:bc", "rel:cd"]
        both = s.edges_between(["know:a", "know:b"], ["know:a", "know:b", "know:c"], limit=10)
        assert sorted(e[0] for e in both) == ["rel:ab", "rel:ab2", "rel:bc"]
        assert len(s.edges_between(["know:a", "know:b"], ["know:a", "know:b", "know:c"], limit=2)) == 2
        assert (
            s.edges_between([], ["know:a"], limit=10) == []
            and s.edges_between(["know:c"], ["know:a"], limit=10) == []
        )
