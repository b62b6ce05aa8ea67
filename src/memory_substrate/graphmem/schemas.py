"""Input validation and the graph toolset's node/edge views (pure functions, no storage).

A graph-toolset node is a view of one object of the shared model:

* Fact   = an object of type ``knowledge`` (created ones have kind ``fact``),
* Entity = an object of type ``entity`` (created ones) or ``node`` (the nodes memory_remember writes).

The spec's own attributes live under ``metadata.graph`` of the object (``source``, the caller's
``metadata``, ``ttl_days``, ``last_dedup_at``); the expiry is ``metadata.expires_at`` (ISO-8601),
which every read path honours (expiry.py).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from memory_substrate.errors import ValidationError
from memory_substrate.expiry import expires_at
from memory_substrate.graphmem.view_types import EdgeView, NodeView
from memory_substrate.json_types import JsonObject
from memory_substrate.models import MemoryObject, Relation
from memory_substrate.settings import Settings
from memory_substrate.util import parse_time
from memory_substrate.validation import namespace_name

RELATION_TYPE = re.compile(r"^[A-Za-z0-9_]{1,100}$")
NODE_TYPES = {"fact": "Fact", "entity": "Entity"}
GRAPH_OBJECT_TYPES = ("knowledge", "entity", "node")
LIVE = ("active", "candidate", "contested")
# graph-toolset status -> lifecycle statuses it covers (the first is what a write sets).
STATUS_TO_LIFECYCLE = {
    "active": ("active", "candidate", "contested"),
    "outdated": ("stale", "superseded"),
    "archived": ("archived", "expired"),
}
LIFECYCLE_TO_STATUS = {s: k for k, v in STATUS_TO_LIFECYCLE.items() for s in v}


# --- validation ------------------------------------------------------------------------
def owner(value: str) -> str:
    return namespace_name(value, "owner_id")  # owner_id is the namespace: the one rule


def relation_type(value: str) -> str:
    if not RELATION_TYPE.match(value):
        raise ValidationError(f"relation_type {value!r} is invalid: use letters, digits and '_' only")
    return value


def text(value: str | None, limits: Settings, field: str = "text") -> str:
    if value is None or not value.strip():
        raise ValidationError(f"{field} is required and must not be empty")
    if len(value) > limits.max_text_length:
        raise ValidationError(f"Text too long (max {limits.max_text_length} chars)")
    return value


def metadata(value: JsonObject | None, limits: Settings, field: str = "metadata") -> JsonObject:
    if value is None:
        return {}
    try:
        size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError):
        raise ValidationError(f"{field} must be JSON-serialisable") from None
    if size > limits.max_metadata_size:
        raise ValidationError(f"{field} too large ({size} bytes, max {limits.max_metadata_size})")
    return value


def status(value: str | None) -> str | None:
    if value is not None and value not in STATUS_TO_LIFECYCLE:
        raise ValidationError(f"status must be one of active, outdated, archived (got {value!r})")
    return value


def node_type(value: str) -> str:
    found = NODE_TYPES.get(value.strip().lower())
    if found is None:
        raise ValidationError(f"node_type must be Fact or Entity (got {value!r})")
    return found


def expiry(ttl_days: float | None, expires_at_ms: int | None, limits: Settings, now: datetime) -> str | None:
    """The ISO expiry from an absolute ``expires_at`` (ms; wins) or a relative ``ttl_days``."""
    if ttl_days is not None and not (limits.min_ttl_days < ttl_days <= limits.max_ttl_days):
        raise ValidationError(
            f"ttl_days must be > {limits.min_ttl_days:g} and <= {limits.max_ttl_days:g} (got {ttl_days!r})"
        )
    if expires_at_ms is not None:
        if expires_at_ms <= int(now.timestamp() * 1000):
            raise ValidationError("expires_at is in the past (milliseconds since the epoch expected)")
        try:
            return datetime.fromtimestamp(expires_at_ms / 1000, UTC).isoformat(timespec="milliseconds")
        except (OverflowError, OSError, ValueError):
            raise ValidationError(
                "expires_at is out of range (milliseconds since the epoch expected)"
            ) from None
    if ttl_days is not None:
        return (now + timedelta(days=ttl_days)).isoformat(timespec="milliseconds")
    return None


# --- views -----------------------------------------------------------------------------
def ms(value: str | None) -> int | None:
    return int(parse_time(value).timestamp() * 1000) if value else None


def node_type_of(obj: MemoryObject) -> str:
    return "Fact" if obj.object_type == "knowledge" else "Entity"


def is_graph_node(obj: MemoryObject | None) -> bool:
    return obj is not None and obj.object_type in GRAPH_OBJECT_TYPES


GRAPH_ID_PREFIXES = ("know:", "ent:", "node:")


def is_graph_id(object_id: str) -> bool:
    return object_id.startswith(GRAPH_ID_PREFIXES)


def json_object(value: object) -> JsonObject:
    """``value or {}`` read as the JSON object it is written as. Any other value fails as
    reading its keys always has (an internal error): a caller's own metadata key of another type
    is not one the toolset can show."""
    found = value or {}
    if not isinstance(found, dict):
        raise AttributeError(f"'{type(found).__name__}' object has no attribute 'get'")
    return found


def graph_attributes_of(obj: MemoryObject) -> JsonObject:
    """The object's graph-toolset attributes (``metadata.graph``); empty when it has none."""
    return json_object(obj.metadata.get("graph"))


def node_view(obj: MemoryObject, namespace: str) -> NodeView:
    g = graph_attributes_of(obj)
    exp = expires_at(obj)
    view: NodeView = {
        "id": obj.id,
        "node_type": node_type_of(obj),
        "owner_id": namespace,
        "text": obj.summary if obj.object_type == "knowledge" else obj.title,
        "metadata": g.get("metadata") or {},
        "created_at": ms(obj.created_at),
        "updated_at": ms(obj.updated_at),
        "last_dedup_at": g.get("last_dedup_at"),
        "ttl_days": g.get("ttl_days"),
        "expires_at": int(exp.timestamp() * 1000) if exp else None,
        "source": g.get("source") or obj.memory_source or "substrate",
        "status": LIFECYCLE_TO_STATUS.get(obj.status, "active"),
        "lifecycle_status": obj.status,
        "kind": obj.kind,
        "version": obj.version,
    }
    if obj.object_type == "knowledge":
        if obj.title and obj.title != obj.summary:
            view["title"] = obj.title
        p = obj.payload
        if p.get("subject") and p.get("predicate"):
            view["triplet"] = {
                "subject": p.get("subject"),
                "predicate": p.get("predicate"),
                "object": p.get("object"),
                "value": p.get("value"),
            }
    else:
        view["name"] = obj.title
        view["type"] = g.get("type_label") or obj.kind
        if obj.payload.get("aliases"):
            view["aliases"] = obj.payload["aliases"]
    return view


def edge_view(rel: Relation) -> EdgeView:
    schema = json_object(rel.payload.get("relation_schema"))
    return {
        "id": rel.id,
        "from_id": rel.source_id,
        "to_id": rel.target_id,
        "relation_type": rel.rel_type,
        "metadata": rel.payload.get("properties") or {},
        "derivation": schema.get("derivation"),
    }
