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

from memory_substrate.json_types import JsonObject
from memory_substrate.models import (
    AuditEvent,
    Job,
    MemoryObject,
    ObjectHead,
    PatchRecord,
    Relation,
    SearchDoc,
    Segment,
    SegmentHit,
    TextHit,
    Trace,
)
from memory_substrate.storage.json_text import StoredJson
from memory_substrate.storage.outbox import OutboxEntry

TOKEN_ID_CHARS = 12  # a token is named by this many hex characters of its hash (never by itself)
ID_TAIL_CHARS = 6  # objects are indexed by the last this many characters of their id (short ids, ids.py)


def token_row(
    token_hash: str, namespace: str, label: str, created_at: str, expires_at: str | None
) -> dict[str, Any]:
    """One row of ``Store.list_tokens``: ``token_id`` names it; ``token_hash`` is for revoking."""
    return {
        "token_id": token_hash[:TOKEN_ID_CHARS],
        "namespace": namespace,
        "label": label,
        "created_at": created_at,
        "expires_at": expires_at,
        "token_hash": token_hash,
    }


class StoreSession(Protocol):
    """Reads (and, in a write session, writes) inside one namespace and one transaction."""

    namespace: str
    writable: bool  # a write session sees its own uncommitted writes; a second session would not

    # --- objects -----------------------------------------------------------------
    def get_object(self, object_id: str) -> MemoryObject | None: ...
    def get_objects(self, object_ids: Sequence[str]) -> dict[str, MemoryObject]: ...
    def get_object_heads(self, object_ids: Sequence[str]) -> dict[str, ObjectHead]:
        """Type, kind, status, title and summary of these objects (absent ids left out), without
        decoding whole records: search ranks a hundred candidates and shows ten."""
        ...

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
    def ids_by_tail(self, tails: Sequence[str]) -> list[str]:
        """Ids of this namespace's objects whose last ``ID_TAIL_CHARS`` characters are among
        ``tails`` (sorted, each once): one indexed query that resolves short ids and finds the
        objects a short id of the context package must not be mistaken for."""
        ...

    def find_by_claim(self, claim_key: str) -> list[MemoryObject]: ...
    def find_source_by_uri(self, uri: str) -> MemoryObject | None: ...
    def count_objects(self) -> list[tuple[str, str, str, int]]: ...

    # --- segments ----------------------------------------------------------------
    def get_segments(
        self,
        source_id: str,
        *,
        segment_ids: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Segment]: ...
    def get_segments_by_keys(self, keys: Sequence[tuple[str, str]], *, light: bool = False) -> list[Segment]:
        """The segments of these (source_id, segment_id) keys; ``light`` as for ``segment_windows``."""
        ...

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

    def segment_windows(
        self, ranges: Sequence[tuple[str, int, int]], *, light: bool = False
    ) -> list[Segment]:
        """Segments whose ordinal lies in any (source_id, first, last) range, inclusive.

        ``light``: for ranking only: ``locator`` empty, ``hash`` empty and ``metadata`` holding
        just ``name`` and ``created_at`` (whichever are set), so no row's JSON is decoded whole;
        ``terms`` holds the ranker's stored terms (None on rows stored without them).
        """
        ...

    def iter_vectors(
        self, *, batch_size: int = 1000
    ) -> Iterator[tuple[str, str, str, npt.NDArray[np.float32]]]:
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
    def get_relations(self, relation_ids: Sequence[str]) -> dict[str, Relation]: ...
    def edges_of(self, object_ids: Sequence[str], *, limit: int) -> list[tuple[str, str, str, str]]:
        """(relation id, rel_type, source_id, target_id) of relations touching any of ``object_ids``,
        each once, at most ``limit`` (fewer means complete), without payloads: what a graph walk
        needs, cheaply."""
        ...

    def relations_among(self, object_ids: Sequence[str], *, limit: int = 10_000) -> list[Relation]:
        """Relations whose source and target are both among ``object_ids`` (a subgraph's edges)."""
        ...

    def edges_between(
        self, ids_a: Sequence[str], ids_b: Sequence[str], *, limit: int
    ) -> list[tuple[str, str, str, str]]:
        """Light edges (as ``edges_of``) with one end among ``ids_a`` and the other among ``ids_b``,
        either direction, each once, at most ``limit``: where two walks meet, read without reading
        every edge of either side (a hub's edges are filtered in the index, not in Python)."""
        ...

    def list_events(self, *, object_id: str | None = None, limit: int = 50) -> list[AuditEvent]: ...
    def list_patches(self, *, limit: int = 50) -> list[PatchRecord]: ...
    def get_config(self) -> JsonObject: ...

    # --- stored JSON health (storage/json_text.py) ------------------------------------
    def stored_json_problems(self, *, limit: int = 1000) -> list[StoredJson]:
        """Rows of this namespace, at most ``limit``, whose JSON a reader of this database cannot
        use: a non-finite number (NaN, Infinity) or text that is not JSON."""
        ...

    def repair_stored_json(self, rows: Sequence[StoredJson]) -> list[StoredJson]:
        """Rewrite each of ``rows`` that holds non-finite numbers with those numbers as null (write
        sessions only); returns the rows rewritten. Text that is not JSON is left alone."""
        ...

    # --- lookup keys, jobs, traces (the knowledge graph's indexes and its operational records) ---
    def find_keys(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        """(key, object_id) for every stored lookup key among ``keys``, ordered by key then id."""
        ...

    def key_counts(self, prefix: str, *, limit: int = 100) -> list[tuple[str, int]]:
        """Keys starting with ``prefix`` and how many objects hold each, most held first."""
        ...

    def get_job(self, kind: str, target_id: str) -> Job | None: ...
    def list_jobs(self, *, kind: str, statuses: Sequence[str] | None = None, limit: int = 100) -> list[Job]:
        """Jobs oldest first."""
        ...

    def job_counts(self, kind: str) -> dict[str, int]: ...
    def get_trace(self, trace_id: str) -> Trace | None: ...
    def list_traces(
        self, *, kind: str | None = None, subject_id: str | None = None, limit: int = 20
    ) -> list[Trace]:
        """Newest first."""
        ...

    # --- writes (write sessions only) ------------------------------------------------
    def set_object_keys(self, object_id: str, keys: Sequence[str]) -> None:
        """Replace the lookup keys of one object (an empty list removes them)."""
        ...

    def put_job(self, job: Job) -> None:
        """Insert or replace the job of (kind, target_id)."""
        ...

    def record_trace(self, trace: Trace) -> None: ...
    def insert_object(self, obj: MemoryObject, search: SearchDoc, claim_key: str | None) -> None: ...
    def update_object(self, obj: MemoryObject, search: SearchDoc, claim_key: str | None) -> None: ...
    def insert_segments(self, segments: Iterable[tuple[Segment, str, str]]) -> None:
        """Insert segments with their normalised search text (body, meta)."""
        ...

    def insert_relations(self, relations: Iterable[Relation]) -> None: ...
    def delete_relations_from_origin(self, origin_id: str) -> int: ...
    def delete_relations(self, relation_ids: Sequence[str]) -> int: ...
    def delete_object(self, object_id: str) -> bool:
        """Remove one object and every row derived from it: its full-text row, lookup keys,
        vectors (every owner type), relations from, to or originating at it, and, for a source,
        its segments with their rows and vectors. Patches and audit events stay (history).
        Returns False when the object does not exist."""
        ...

    def replace_segment_search(self, rows: Iterable[tuple[str, str, str, str]]) -> int:
        """Rewrite the full-text rows of existing segments: (source_id, segment_id, body, meta)."""
        ...

    def upsert_vectors(
        self, model: str, owner_type: str, rows: Sequence[tuple[str, npt.NDArray[np.float32]]]
    ) -> None: ...
    def record_patch(self, patch: PatchRecord, events: Sequence[AuditEvent]) -> None: ...
    def set_config(self, key: str, value: object) -> None: ...

    # --- derived-index outbox (storage/outbox.py) -------------------------------------
    outbox_written: int  # rows this write session added to the outbox when it committed

    def outbox_pending(self, *, limit: int = 10_000) -> list[OutboxEntry]:
        """Outbox entries of this namespace not yet applied to its derived backends, oldest first."""
        ...

    def outbox_count(self) -> int: ...
    def outbox_delete(self, seqs: Sequence[int]) -> int:
        """Remove applied entries (write sessions only)."""
        ...

    def flush_outbox(self) -> int:
        """Record what this session touched as outbox rows; the store calls it just before commit."""
        ...


class Store(Protocol):
    """A database holding any number of namespaces."""

    backend: str  # "sqlite" | "postgres"
    location: str  # a file path or a redacted URL
    # True when a second read session beside an open one is worth taking (``spare_read``): a
    # thread's own SQLite connection, or a pooled PostgreSQL one that is free now.
    parallel_reads: bool

    def read(self, namespace: str) -> AbstractContextManager[StoreSession]: ...
    def spare_read(self, namespace: str) -> AbstractContextManager[StoreSession | None]:
        """A read session to run beside one the caller holds, or None when none is free without
        waiting (a bounded pool whose connections are all held, perhaps by callers waiting on
        theirs): the caller then does the work in its own session."""
        ...

    def write(self, namespace: str) -> AbstractContextManager[StoreSession]: ...
    def schema_version(self) -> int: ...
    def namespaces(self) -> list[str]: ...
    def delete_namespace(self, namespace: str) -> dict[str, int]:
        """Delete every row of ``namespace`` in every table, atomically; rows deleted per table."""
        ...

    def create_token(
        self, token_hash: str, namespace: str, label: str, expires_at: str | None = None
    ) -> None: ...
    def namespace_for_token(self, token_hash: str) -> str | None:
        """The namespace of a live token (known and not expired), else None."""
        ...

    def list_tokens(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """Tokens as ``token_row``: token_id (hash prefix, what people see), token_hash (to revoke by;
        never printed), namespace, label, created_at, expires_at."""
        ...

    def revoke_tokens(self, token_hashes: list[str]) -> int:
        """Delete these tokens (by full hash); how many were deleted."""
        ...

    def vector_models(self, namespace: str, models: Sequence[str]) -> list[str]:
        """Those of ``models`` that made at least one object or segment vector of ``namespace``
        (one indexed lookup per model, never a scan of the vectors). Outside any session: the
        embedder is chosen with it, possibly while a session of this thread is open."""
        ...

    def build_deferred_indexes(self) -> dict[str, int]:
        """Build now the indexes bulk writes deferred (searches stay exact meanwhile); rows
        newly indexed per index. A store that defers nothing returns {}."""
        ...

    def close(self) -> None: ...
