"""The scale-out store: PostgreSQL with pgvector, shared by any number of server processes.

Sessions map onto PostgreSQL transactions:

- a write session is one READ COMMITTED transaction that first takes
  ``pg_advisory_xact_lock(class, hashtext(namespace))``. Writers to one namespace are
  serialised across every process, so governance that reads then writes (duplicate and
  conflict checks) is race-free; writers to different namespaces run in parallel. READ
  COMMITTED matters: every statement after the lock sees what earlier writers committed.
- a read session is one REPEATABLE READ, READ ONLY transaction: a consistent snapshot, like
  a read transaction of the embedded store.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from types import EllipsisType
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg import IsolationLevel
from psycopg_pool import ConnectionPool

from memory_substrate.errors import StorageError
from memory_substrate.storage.base import token_row
from memory_substrate.storage.postgres.fts_plan import TermStats
from memory_substrate.storage.postgres.schema import LOCK_CLASS_NAMESPACE, migrate
from memory_substrate.storage.postgres.vector_index import IdleBuilder, halfvec_supported, pgvector_version
from memory_substrate.storage.postgres.vector_index import build as build_vector_indexes
from memory_substrate.storage.postgres.writes import PostgresSession
from memory_substrate.util import now_iso

# Bulk vector writes pausing this long (seconds) start the deferred index build.
IDLE_BUILD_S = 2.0
# How long a spare read session (a search's vector stream, run beside its full-text stream) waits
# for a pooled connection before the caller runs that work in its own session instead: long enough
# for the pool to open one more (a few milliseconds on a local server), short against a search.
SPARE_WAIT_S = 0.05


def redact(url: str) -> str:
    """The URL with any password replaced by ``***`` (for status output and logs)."""
    url = re.sub(r"(://[^:/@?#]*:)[^@/?#]*@", r"\1***@", url)
    return re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", url)


class PostgresStore:
    """A PostgreSQL database holding any number of namespaces (see the module docstring)."""

    backend = "postgres"
    # A second session beside a caller's comes from the pool only when one is free within
    # SPARE_WAIT_S (``spare_read``): never a wait on connections held by callers that wait in turn.
    parallel_reads = True

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
        idle_build_s: float | EllipsisType | None = ...,
    ) -> None:
        """Connect, migrate and open a connection pool.

        ``idle_build_s``: seconds without bulk vector writes after which this process builds
        the vector indexes those writes deferred (default ``IDLE_BUILD_S``; None: only
        ``build_deferred_indexes`` does).

        Raises ``StorageError`` when the server cannot be reached or pgvector is missing.
        """
        self.url = url.replace("postgres://", "postgresql://", 1) if url.startswith("postgres://") else url
        self.location = redact(self.url)
        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                self._version = migrate(conn)
                pgvector = pgvector_version(conn)
        except psycopg.OperationalError as exc:
            raise StorageError(
                f"cannot connect to PostgreSQL at {self.location}", details={"error": str(exc).strip()}
            ) from exc
        self._iterative_scan = pgvector >= (0, 8)
        self._halfvec = halfvec_supported(pgvector)
        self._hnsw_dims: set[int] = set()
        self._term_stats = TermStats()
        self._lock = threading.Lock()
        self._pool = ConnectionPool(
            self.url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            kwargs={"autocommit": True},
            configure=register_vector,
            name="memory-substrate",
            open=True,
        )
        idle = IDLE_BUILD_S if isinstance(idle_build_s, EllipsisType) else idle_build_s
        self._builder = IdleBuilder(self.url, idle) if idle is not None else None
        if self._builder is not None and self._has_pending():
            self._builder.poke()  # left by an earlier process, rows an older schema left unindexed, old indexes

    def _has_pending(self) -> bool:
        """Rows a build has to index, or an index of the other precision to replace."""
        with self._pool.connection() as conn:
            return conn.execute(
                "SELECT EXISTS (SELECT 1 FROM vector_indexes WHERE halfvec <> %s) OR "
                "EXISTS (SELECT 1 FROM vector_indexes i JOIN LATERAL (SELECT 1 FROM vectors v "
                "WHERE v.dim = i.dim AND v.batch > i.watermark LIMIT 1) p ON true)",
                (self._halfvec,),
            ).fetchone() == (True,)

    @contextmanager
    def _session(
        self, namespace: str, writable: bool, timeout: float | None = None
    ) -> Iterator[PostgresSession]:
        if not namespace:
            raise StorageError("a namespace is required")
        with self._pool.connection(timeout=timeout) as conn:
            # Applied by psycopg to the BEGIN statement itself: no extra round trip.
            conn.isolation_level = (
                IsolationLevel.READ_COMMITTED if writable else IsolationLevel.REPEATABLE_READ
            )
            conn.read_only = not writable
            with conn.transaction():
                if writable:
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_CLASS_NAMESPACE, namespace)
                    )
                session = PostgresSession(
                    conn,
                    namespace,
                    writable,
                    hnsw_dims=self._hnsw_dims,
                    iterative_scan=self._iterative_scan,
                    halfvec=self._halfvec,
                    term_stats=self._term_stats,
                )
                yield session
                if writable:
                    session.flush_outbox()  # in this transaction: committed with the writes or not at all
        if session.pending_dims and self._builder is not None:
            self._builder.poke()  # committed: index the bulk rows once writes pause

    def read(self, namespace: str) -> Any:
        """A read-only snapshot of one namespace."""
        return self._session(namespace, False)

    @contextmanager
    def spare_read(self, namespace: str) -> Iterator[PostgresSession | None]:
        """A read-only snapshot of one namespace if the pool has a connection for it within
        SPARE_WAIT_S, else None: at once when every connection is held or other requests already
        wait for one (a spare read never queues ahead of them), else after that wait or a failed
        connection. The pool's timeout would otherwise be waited out whenever every connection is
        held by a request that waits on its own spare read."""
        stats = self._pool.get_stats()
        held = not stats.get("pool_available") and stats.get("pool_size", 0) >= stats.get("pool_max", 0)
        if held or stats.get("requests_waiting"):
            yield None  # every connection is held, or others wait for one: not even a short wait
            return
        stack = ExitStack()
        try:
            session: PostgresSession | None = stack.enter_context(
                self._session(namespace, False, SPARE_WAIT_S)
            )
        except psycopg.OperationalError:  # PoolTimeout, a closed pool, a connection that failed
            session = None
        with stack:
            yield session

    def write(self, namespace: str) -> Any:
        """An exclusive (per namespace, across processes), atomic write session."""
        return self._session(namespace, True)

    def schema_version(self) -> int:
        return self._version

    def namespaces(self) -> list[str]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT namespace FROM objects UNION SELECT namespace FROM patches UNION SELECT namespace FROM traces "
                "UNION SELECT namespace FROM config ORDER BY 1"
            ).fetchall()
        return [r[0] for r in rows]

    def delete_namespace(self, namespace: str) -> dict[str, int]:
        from memory_substrate.storage.postgres.purge import delete_namespace

        if not namespace:
            raise StorageError("a namespace is required")
        with self._pool.connection() as conn:
            return delete_namespace(conn, namespace)

    def create_token(
        self, token_hash: str, namespace: str, label: str, expires_at: str | None = None
    ) -> None:
        """Store a token's hash bound to one namespace (the token itself is never stored)."""
        if not namespace:
            raise StorageError("a namespace is required")
        with self._pool.connection() as conn:
            conn.execute(
                "INSERT INTO tokens (token_hash, namespace, label, created_at, expires_at) VALUES (%s, %s, %s, %s, %s)",
                (token_hash, namespace, label, now_iso(), expires_at),
            )

    def namespace_for_token(self, token_hash: str) -> str | None:
        with self._pool.connection() as conn:
            row = conn.execute(
                "SELECT namespace FROM tokens WHERE token_hash = %s AND (expires_at IS NULL OR expires_at > %s)",
                (token_hash, now_iso()),
            ).fetchone()
        return row[0] if row else None

    def list_tokens(self, namespace: str | None = None) -> list[dict[str, Any]]:
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT token_hash, namespace, label, created_at, expires_at FROM tokens"
                " WHERE (%s::text IS NULL OR namespace = %s) ORDER BY created_at, token_hash",
                (namespace, namespace),
            ).fetchall()
        return [token_row(*r) for r in rows]

    def revoke_tokens(self, token_hashes: list[str]) -> int:
        with self._pool.connection() as conn:
            cur = conn.execute("DELETE FROM tokens WHERE token_hash = ANY(%s)", (list(token_hashes),))
            return cur.rowcount

    def vector_models(self, namespace: str, models: Sequence[str]) -> list[str]:
        # Index vectors_ns_model (namespace, owner_type, model, ...): an EXISTS probe per model.
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT m FROM unnest(%s::text[]) AS m WHERE EXISTS (SELECT 1 FROM vectors v WHERE v.namespace = %s "
                "AND v.owner_type IN ('object', 'segment') AND v.model = m)",
                (list(models), namespace),
            ).fetchall()
        return [r[0] for r in rows]

    def build_deferred_indexes(self) -> dict[str, int]:
        """Index the vectors bulk writes left pending (they are searched exactly meanwhile).

        Runs now, in this thread (the idle builder does the same on its own once writes pause;
        a build it has under way is waited for):
        a new HNSW index per dimension when many rows are pending, else a fold into the live
        one. Returns the rows newly indexed per dimension.
        """
        with psycopg.connect(self.url, autocommit=True) as conn:
            return build_vector_indexes(conn, wait=True)

    def close(self) -> None:
        if self._builder is not None:
            self._builder.close()
        with self._lock:
            if not self._pool.closed:
                self._pool.close()
