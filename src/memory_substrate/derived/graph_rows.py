"""Rows a graph mirror stores for objects and relations (shared by FalkorDB and Kùzu)."""

from __future__ import annotations

import json
from typing import Any, TypedDict, TypeVar

from memory_substrate.models import MemoryObject, Relation

NODE_FIELDS = ("object_type", "kind", "status", "title", "updated_at", "version")
REL_FIELDS = ("id", "rel_type", "source_id", "target_id", "origin_id", "created_at", "payload")
Row = TypeVar("Row")


class NodeRow(TypedDict):
    id: str
    object_type: str
    kind: str
    status: str
    title: str
    updated_at: str
    version: int


class RelRow(TypedDict):
    """A relation as a mirror stores it: ``origin_id`` "" for none, ``payload`` as sorted JSON."""

    id: str
    rel_type: str
    source_id: str
    target_id: str
    origin_id: str
    created_at: str
    payload: str


def node_row(obj: MemoryObject) -> NodeRow:
    return {
        "id": obj.id,
        "object_type": obj.object_type,
        "kind": obj.kind,
        "status": obj.status,
        "title": obj.title[:500],
        "updated_at": obj.updated_at,
        "version": obj.version,
    }


def rel_row(rel: Relation) -> RelRow:
    return {
        "id": rel.id,
        "rel_type": rel.rel_type,
        "source_id": rel.source_id,
        "target_id": rel.target_id,
        "origin_id": rel.origin_id or "",
        "created_at": rel.created_at,
        "payload": json.dumps(rel.payload, ensure_ascii=False, sort_keys=True),
    }


def relation_from(values: list[Any]) -> Relation:
    """A Relation from values in ``REL_FIELDS`` order."""
    rid, rel_type, source, target, origin, created, payload = values
    return Relation(rid, rel_type, source, target, origin or None, json.loads(payload or "{}"), created)


def node_digest(values: list[Any]) -> str:
    """Same format as ``base.object_digest``, from stored ``NODE_FIELDS`` minus the title."""
    object_type, kind, status, _title, updated_at, version = values
    return f"{object_type}|{kind}|{status}|{int(version)}|{updated_at}"


def batches(rows: list[Row], size: int) -> list[list[Row]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]
