"""Storage ports. Everything above ``storage/`` talks to these Protocols only.

A session is bound to exactly one namespace when it is opened: every read and write made
through it is confined to that namespace, and there is no call that spans namespaces.
Write sessions are exclusive per namespace and atomic: everything done inside one commits
together or not at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memory_substrate.models import (
    AuditEvent,
    MemoryObject,
    PatchRecord,
    Relation,
    SearchDoc,
    Segment,
    SegmentHit,
    TextHit,
)


class ObjectFilter(Protocol):
    """Shape of the filters every backend understands (see ``query.filters.Filters``)."""

    object_types: list[str] | None
    kinds: list[str] | None
    statuses: list[str] | None
    ids: list[str] | None
    source_ids: list[str] | None


class StoreSession(Protocol):
    """Reads (and, in a write session, writes) inside one namespace and one transaction."""

    namespace: str

    # --- objects -----------------------------------------------------------------
    def get_object(self, object_id: str) -> MemoryObject | None: ...
    def get_objects(self, object_ids: Sequence[str]) -> dict[str, MemoryObject]: ...
    def list_objects(
        self,
        *,
        object_types: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        ids: Sequence[str] | None = None,
        order: str = "updated_desc",
        limit: int = 50,
        offset: int = 0,
    ) -> list[MemoryObject]: ...
    def find_by_claim(self, claim_key: str) -> list[MemoryObject]: ...
    def find_source_by_uri(self, uri: str) -> MemoryObject | None: ...
    def count_objects(self) -> list[tuple[str, str, str, int]]: ...

    # --- segments ----------------------------------------------------------------
    def get_segments(
        self, source_id: str, *, segment_ids: Sequence[str] | None = None, limit: int | None = None, offset: int = 0
    ) -> list[Segment]: ...
    def get_segments_by_keys(self, keys: Sequence[tuple[str, str]]) -> list[Segment]: ...
    def count_segments(self, source_id: str | None = None) -> int: ...
    def iter_segments(self, *, batch_size: int = 1000) -> Iterator[Segment]:
        """Every segment of the namespace, ordered by (source_id, ordinal, id): bulk export."""
        ...

    # --- text and vectors -----------------------------------------------------------
    def search_objects_text(self, terms: Sequence[str], *, limit: int) -> list[TextHit]: ...
    def search_segments_text(
        self, terms: Sequence[str], *, limit: int, source_ids: Sequence[str] | None = None
    ) -> list[SegmentHit]: ...
    def vector_search(
        self, model: str, query: npt.NDArray[np.float32], *, owner_type: str, limit: int
    ) -> list[tuple[str, float]]: ...
    def vector_stats(self) -> dict[str, int]: ...
    def get_vectors(
        self, model: str, owner_type: str, owner_ids: Sequence[str]
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors of these owners made by ``model`` (owners without one are left out)."""
        ...
    def segment_windows(self, ranges: Sequence[tuple[str, int, int]]) -> list[Segment]:
        """Segments whose ordinal lies in any (source_id, first, last) range, inclusive."""
        ...
    def iter_vectors(self, *, batch_size: int = 1000) -> Iterator[tuple[str, str, str, npt.NDArray[np.float32]]]:
        """Every stored vector as (owner_type, owner_id, model, vector), ordered by owner: bulk export."""
        ...
    def vector_owners(self, owner_type: str) -> list[tuple[str, str]]:
        """(owner_id, model) of every stored vector of ``owner_type`` ("object" or "segment")."""
        ...
    def objects_missing_search(self, *, limit: int = 100_000) -> list[str]:
        """Ids of objects that have no full-text row (a damaged or unfinished index)."""
        ...
    def segments_missing_search(self, *, limit: int = 100_000) -> list[tuple[str, str]]:
        """(source_id, segment_id) of segments that have no full-text row."""
        ...

    # --- graph, history, config -------------------------------------------------------
    def relations_of(self, object_ids: Sequence[str], *, limit: int = 500) -> list[Relation]: ...
    def list_relations(self, *, limit: int = 10_000) -> list[Relation]: ...
    def list_events(self, *, object_id: str | None = None, limit: int = 50) -> list[AuditEvent]: ...
    def list_patches(self, *, limit: int = 50) -> list[PatchRecord]: ...
    def get_config(self) -> dict[str, Any]: ...

    # --- writes (write sessions only) ------------------------------------------------
    def insert_object(self, obj: MemoryObject, search: SearchDoc, claim_key: str | None) -> None: ...
    def update_object(self, obj: MemoryObject, search: SearchDoc, claim_key: str | None) -> None: ...
    def insert_segments(self, segments: Iterable[tuple[Segment, str, str]]) -> None:
        """Insert segments with their normalised search text (body, meta)."""
        ...
    def insert_relations(self, relations: Iterable[Relation]) -> None: ...
    def delete_relations_from_origin(self, origin_id: str) -> int: ...
    def delete_relations(self, relation_ids: Sequence[str]) -> int: ...
    def replace_segment_search(self, rows: Iterable[tuple[str, str, str, str]]) -> int:
        """Rewrite the full-text rows of existing segments: (source_id, segment_id, body, meta)."""
        ...
    def upsert_vectors(
        self, model: str, owner_type: str, rows: Sequence[tuple[str, npt.NDArray[np.float32]]]
    ) -> None: ...
    def record_patch(self, patch: PatchRecord, events: Sequence[AuditEvent]) -> None: ...
    def set_config(self, key: str, value: Any) -> None: ...


class Store(Protocol):
    """A database holding any number of namespaces."""

    backend: str  # "sqlite" | "postgres"
    location: str  # a file path or a redacted URL

    def read(self, namespace: str) -> AbstractContextManager[StoreSession]: ...
    def write(self, namespace: str) -> AbstractContextManager[StoreSession]: ...
    def schema_version(self) -> int: ...
    def namespaces(self) -> list[str]: ...
    def create_token(self, token_hash: str, namespace: str, label: str) -> None: ...
    def namespace_for_token(self, token_hash: str) -> str | None: ...
    def close(self) -> None: ...
