"""Time-to-live for memory objects, applied in one place for every read surface.

An object expires when ``metadata.expires_at`` (ISO-8601, UTC) is at or before *now*. Expired
objects stay in the store (history, audit, the ``expire`` sweep of memory_maintain) but no
read of any toolset returns them: every read path opens its session through
``Runtime.read()``, which wraps it in ``VisibleSession``. Keeping the filter here, instead of
in each mode, is what makes "expired nodes disappear everywhere" true by construction.

Objects with an expiry carry the lookup key ``TTL_KEY`` (see ``indexing.lookup_keys``), so
the set of objects that *can* be expired is one indexed key lookup, usually tiny; relation
and search-hit filtering use it instead of loading every endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from memory_substrate.models import MemoryObject, ObjectHead, Relation, TextHit
from memory_substrate.storage.base import StoreSession
from memory_substrate.util import parse_time

TTL_KEY = "ttl:expiring"


def utc_now() -> datetime:
    return datetime.now(UTC)


def expires_at(obj: MemoryObject) -> datetime | None:
    """The object's absolute expiry, or None when it never expires (or the value is unreadable)."""
    raw = obj.metadata.get("expires_at")
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return parse_time(raw)
    except ValueError:
        return None


def is_expired(obj: MemoryObject, now: datetime) -> bool:
    when = expires_at(obj)
    return when is not None and when <= now


class VisibleSession:
    """A read view of a session that hides expired objects, their relations and their hits.

    Everything not overridden here is delegated unchanged, so it satisfies ``StoreSession``.
    """

    def __init__(self, inner: StoreSession, now: datetime) -> None:
        self._inner = inner
        self.now = now
        self.namespace = inner.namespace
        self._expired: set[str] | None = None
        self._with_ttl: set[str] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @property
    def unfiltered(self) -> StoreSession:
        """The session this view wraps, in which expired objects still exist."""
        return self._inner

    def expired_ids(self) -> set[str]:
        """Ids of the objects of this namespace that have expired (computed once per session)."""
        if self._expired is None:
            ids = sorted({oid for _, oid in self._inner.find_keys([TTL_KEY])})
            found = self._inner.get_objects(ids) if ids else {}
            self._expired = {oid for oid, obj in found.items() if is_expired(obj, self.now)}
        return self._expired

    def get_object(self, object_id: str) -> MemoryObject | None:
        obj = self._inner.get_object(object_id)
        return None if obj is None or is_expired(obj, self.now) else obj

    def get_objects(self, object_ids: Sequence[str]) -> dict[str, MemoryObject]:
        found = self._inner.get_objects(object_ids)
        return {k: o for k, o in found.items() if not is_expired(o, self.now)}

    def get_object_heads(self, object_ids: Sequence[str]) -> dict[str, ObjectHead]:
        hidden = self.expired_ids()
        return {k: h for k, h in self._inner.get_object_heads(object_ids).items() if k not in hidden}

    def list_objects(self, *, limit: int = 50, **kwargs: Any) -> list[MemoryObject]:
        hidden = len(self.expired_ids())
        objs = self._inner.list_objects(limit=limit + hidden, **kwargs)
        return [o for o in objs if not is_expired(o, self.now)][:limit]

    def ids_by_tail(self, tails: Sequence[str]) -> list[str]:
        # An expired object makes no short id ambiguous. Only the objects found are checked
        # (``expired_ids`` reads every object with a TTL: ~1 s at 20,000 of them), unless the
        # session has that set already.
        got = self._inner.ids_by_tail(tails)
        if not got:
            return got
        if self._expired is not None:
            return [i for i in got if i not in self._expired]
        if self._with_ttl is None:  # ids only, from the keys index
            self._with_ttl = {oid for _, oid in self._inner.find_keys([TTL_KEY])}
        maybe = [i for i in got if i in self._with_ttl]
        objs = self._inner.get_objects(maybe) if maybe else {}
        return [i for i in got if i not in objs or not is_expired(objs[i], self.now)]

    def find_by_claim(self, claim_key: str) -> list[MemoryObject]:
        return [o for o in self._inner.find_by_claim(claim_key) if not is_expired(o, self.now)]

    def find_keys(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        hidden = self.expired_ids()
        return [(k, oid) for k, oid in self._inner.find_keys(keys) if oid not in hidden]

    def search_objects_text(self, terms: Sequence[str], *, limit: int) -> list[TextHit]:
        hidden = self.expired_ids()
        return [h for h in self._inner.search_objects_text(terms, limit=limit + len(hidden)) if h.object_id not in hidden][:limit]

    def vector_search(self, model: str, query: Any, *, owner_type: str, limit: int) -> list[tuple[str, float]]:
        hidden = self.expired_ids()
        hits = self._inner.vector_search(model, query, owner_type=owner_type, limit=limit + len(hidden))
        return [h for h in hits if h[0] not in hidden][:limit]

    def _visible(self, rels: list[Relation]) -> list[Relation]:
        hidden = self.expired_ids()
        if not hidden:
            return rels
        return [r for r in rels if r.source_id not in hidden and r.target_id not in hidden]

    def relations_of(self, object_ids: Sequence[str], *, limit: int = 500) -> list[Relation]:
        return self._visible(self._inner.relations_of([i for i in object_ids if i not in self.expired_ids()], limit=limit))

    def list_relations(self, *, limit: int = 10_000) -> list[Relation]:
        return self._visible(self._inner.list_relations(limit=limit))

    def relations_among(self, object_ids: Sequence[str], *, limit: int = 10_000) -> list[Relation]:
        hidden = self.expired_ids()
        return self._inner.relations_among([i for i in object_ids if i not in hidden], limit=limit)

    def edges_between(self, ids_a: Sequence[str], ids_b: Sequence[str], *, limit: int) -> list[tuple[str, str, str, str]]:
        hidden = self.expired_ids()
        return self._inner.edges_between(
            [i for i in ids_a if i not in hidden], [i for i in ids_b if i not in hidden], limit=limit
        )

    def edges_of(self, object_ids: Sequence[str], *, limit: int) -> list[tuple[str, str, str, str]]:
        hidden = self.expired_ids()
        edges = self._inner.edges_of([i for i in object_ids if i not in hidden], limit=limit)
        return [e for e in edges if e[2] not in hidden and e[3] not in hidden] if hidden else edges
