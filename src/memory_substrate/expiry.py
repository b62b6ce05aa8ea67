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

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_substrate.models import MemoryObject, ObjectHead, Relation, Segment, SegmentHit, TextHit
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


class _Passes:
    """A member of the port this view hands to the wrapped session unchanged, declared so.

    ``reason`` says why that hides nothing: a write (the view filters reads only), a figure that
    names no object, or a history/operational record that stays by design. There is no catch-all
    pass-through: a read the port gains and this view does not declare is an ``AttributeError``
    on first use, and tests/runtime/test_expiry_by_construction.py fails on it.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, view: VisibleSession | None, owner: type | None = None) -> Any:
        if view is None:
            return self
        return getattr(view.unfiltered, self.name)


WRITE = "a write: the view filters what is read, never what is written"
FIGURE = "a count or a setting: names no object"
RECORD = "history or an operational record (patch, audit event, job, trace, outbox): kept by design"
HEALTH = "a storage health check: names damaged rows, an expired object's too, so repair can mend every one"


class VisibleSession:
    """A view of a session that hides expired objects: their records, relations, segments, hits
    and vectors.

    Every member of ``StoreSession`` is declared here, one by one: a read either filters or is a
    ``_Passes`` with the reason it can show no expired object. Nothing is forwarded implicitly.
    """

    def __init__(self, inner: StoreSession, now: datetime) -> None:
        self._inner = inner
        self.now = now
        self.namespace = inner.namespace
        self._expired: set[str] | None = None
        self._with_ttl: set[str] | None = None

    @property
    def unfiltered(self) -> StoreSession:
        """The session this view wraps, in which expired objects still exist."""
        return self._inner

    @property
    def writable(self) -> bool:
        return self._inner.writable

    @property
    def outbox_written(self) -> int:
        return self._inner.outbox_written

    def expired_ids(self) -> set[str]:
        """Ids of the objects of this namespace that have expired (computed once per session)."""
        if self._expired is None:
            ids = sorted({oid for _, oid in self._inner.find_keys([TTL_KEY])})
            found = self._inner.get_objects(ids) if ids else {}
            self._expired = {oid for oid, obj in found.items() if is_expired(obj, self.now)}
        return self._expired

    def _live(self, ids: Sequence[str]) -> list[str]:
        hidden = self.expired_ids()
        return [i for i in ids if i not in hidden] if hidden else list(ids)

    def _owner_hidden(self, owner_id: str) -> bool:
        """An object vector's owner, or a segment vector's source (``source#segment``), has expired."""
        hidden = self.expired_ids()
        return bool(hidden) and (owner_id in hidden or owner_id.split("#", 1)[0] in hidden)

    # --- objects -----------------------------------------------------------------
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

    def find_source_by_uri(self, uri: str) -> MemoryObject | None:
        obj = self._inner.find_source_by_uri(uri)
        return None if obj is None or is_expired(obj, self.now) else obj

    count_objects = _Passes(FIGURE)

    # --- segments (hidden with their source) ----------------------------------------
    def get_segments(
        self,
        source_id: str,
        *,
        segment_ids: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Segment]:
        if source_id in self.expired_ids():
            return []
        return self._inner.get_segments(source_id, segment_ids=segment_ids, limit=limit, offset=offset)

    def get_segments_by_keys(self, keys: Sequence[tuple[str, str]], *, light: bool = False) -> list[Segment]:
        hidden = self.expired_ids()
        return self._inner.get_segments_by_keys([k for k in keys if k[0] not in hidden], light=light)

    def segment_windows(
        self, ranges: Sequence[tuple[str, int, int]], *, light: bool = False
    ) -> list[Segment]:
        hidden = self.expired_ids()
        return self._inner.segment_windows([r for r in ranges if r[0] not in hidden], light=light)

    def iter_segments(self, *, batch_size: int = 1000) -> Iterator[Segment]:
        hidden = self.expired_ids()
        return (s for s in self._inner.iter_segments(batch_size=batch_size) if s.source_id not in hidden)

    count_segments = _Passes(FIGURE)

    # --- text and vectors -----------------------------------------------------------
    def search_objects_text(self, terms: Sequence[str], *, limit: int) -> list[TextHit]:
        hidden = self.expired_ids()
        return [
            h
            for h in self._inner.search_objects_text(terms, limit=limit + len(hidden))
            if h.object_id not in hidden
        ][:limit]

    def search_segments_text(
        self, terms: Sequence[str], *, limit: int, source_ids: Sequence[str] | None = None
    ) -> list[SegmentHit]:
        hidden = self.expired_ids()
        if not hidden:
            return self._inner.search_segments_text(terms, limit=limit, source_ids=source_ids)
        sources = None if source_ids is None else [i for i in source_ids if i not in hidden]
        hits = self._inner.search_segments_text(terms, limit=limit + len(hidden), source_ids=sources)
        return [h for h in hits if h.source_id not in hidden][:limit]

    def vector_search(
        self, model: str, query: npt.NDArray[np.float32], *, owner_type: str, limit: int
    ) -> list[tuple[str, float]]:
        hidden = self.expired_ids()
        hits = self._inner.vector_search(model, query, owner_type=owner_type, limit=limit + len(hidden))
        return [h for h in hits if not self._owner_hidden(h[0])][:limit]

    def get_vectors(
        self, model: str, owner_type: str, owner_ids: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        owners = [i for i in owner_ids if not self._owner_hidden(i)]
        return self._inner.get_vectors(model, owner_type, owners)

    def iter_vectors(
        self, *, batch_size: int = 1000
    ) -> Iterator[tuple[str, str, str, npt.NDArray[np.float32]]]:
        return (v for v in self._inner.iter_vectors(batch_size=batch_size) if not self._owner_hidden(v[1]))

    def vector_owners(self, owner_type: str) -> list[tuple[str, str]]:
        return [o for o in self._inner.vector_owners(owner_type) if not self._owner_hidden(o[0])]

    def objects_missing_search(self, *, limit: int = 100_000) -> list[str]:
        return self._live(self._inner.objects_missing_search(limit=limit))

    def segments_missing_search(self, *, limit: int = 100_000) -> list[tuple[str, str]]:
        hidden = self.expired_ids()
        return [k for k in self._inner.segments_missing_search(limit=limit) if k[0] not in hidden]

    vector_stats = _Passes(FIGURE)

    # --- graph ------------------------------------------------------------------------
    def _visible(self, rels: list[Relation]) -> list[Relation]:
        hidden = self.expired_ids()
        if not hidden:
            return rels
        return [r for r in rels if r.source_id not in hidden and r.target_id not in hidden]

    def relations_of(self, object_ids: Sequence[str], *, limit: int = 500) -> list[Relation]:
        return self._visible(self._inner.relations_of(self._live(object_ids), limit=limit))

    def list_relations(self, *, limit: int = 10_000) -> list[Relation]:
        return self._visible(self._inner.list_relations(limit=limit))

    def get_relations(self, relation_ids: Sequence[str]) -> dict[str, Relation]:
        found = self._inner.get_relations(relation_ids)
        kept = self._visible(list(found.values()))
        return found if len(kept) == len(found) else {r.id: r for r in kept}

    def relations_among(self, object_ids: Sequence[str], *, limit: int = 10_000) -> list[Relation]:
        return self._inner.relations_among(self._live(object_ids), limit=limit)

    def edges_between(
        self, ids_a: Sequence[str], ids_b: Sequence[str], *, limit: int
    ) -> list[tuple[str, str, str, str]]:
        return self._inner.edges_between(self._live(ids_a), self._live(ids_b), limit=limit)

    def edges_of(self, object_ids: Sequence[str], *, limit: int) -> list[tuple[str, str, str, str]]:
        hidden = self.expired_ids()
        edges = self._inner.edges_of(self._live(object_ids), limit=limit)
        return [e for e in edges if e[2] not in hidden and e[3] not in hidden] if hidden else edges

    # --- lookup keys ------------------------------------------------------------------
    def find_keys(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        hidden = self.expired_ids()
        return [(k, oid) for k, oid in self._inner.find_keys(keys) if oid not in hidden]

    key_counts = _Passes(FIGURE)
    get_config = _Passes(FIGURE)

    # --- history and operational records --------------------------------------------
    list_events = _Passes(RECORD)
    list_patches = _Passes(RECORD)
    get_job = _Passes(RECORD)
    list_jobs = _Passes(RECORD)
    job_counts = _Passes(FIGURE)
    get_trace = _Passes(RECORD)
    list_traces = _Passes(RECORD)
    outbox_pending = _Passes(RECORD)
    outbox_count = _Passes(FIGURE)
    stored_json_problems = _Passes(HEALTH)

    # --- writes (a write session opened with ``hide_expired``) --------------------------
    set_object_keys = _Passes(WRITE)
    put_job = _Passes(WRITE)
    record_trace = _Passes(WRITE)
    insert_object = _Passes(WRITE)
    update_object = _Passes(WRITE)
    insert_segments = _Passes(WRITE)
    insert_relations = _Passes(WRITE)
    delete_relations_from_origin = _Passes(WRITE)
    delete_relations = _Passes(WRITE)
    delete_object = _Passes(WRITE)
    replace_segment_search = _Passes(WRITE)
    upsert_vectors = _Passes(WRITE)
    record_patch = _Passes(WRITE)
    set_config = _Passes(WRITE)
    outbox_delete = _Passes(WRITE)
    flush_outbox = _Passes(WRITE)
    repair_stored_json = _Passes(WRITE)
