"""The embedded default store: one SQLite file, WAL, FTS5, vectors as blobs scored with numpy."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory_substrate.errors import NotFoundError, StorageError
from memory_substrate.storage.base import token_row
from memory_substrate.storage.sqlite.checkpoint import SAFETY_PAGES, Checkpointer
from memory_substrate.storage.sqlite.fulltext import SessionFullText, TermDocs
from memory_substrate.storage.sqlite.graph import SessionGraph
from memory_substrate.storage.sqlite.json_health import SessionJsonHealth
from memory_substrate.storage.sqlite.reads import SQLiteReads
from memory_substrate.storage.sqlite.schema import migrate
from memory_substrate.storage.sqlite.writer_lock import WriterLock
from memory_substrate.storage.sqlite.writes import SessionWrites
from memory_substrate.storage.vector_cache import VectorCache, VectorStep
from memory_substrate.util import now_iso


class SQLiteStore:
    backend = "sqlite"
    parallel_reads = True  # each thread reads on its own connection (WAL: readers never wait)

    def __init__(self, path: Path, *, create: bool = True, lock_timeout_s: float = 30.0) -> None:
        """Open (and with ``create``, create) the store file and migrate it.

        Raises ``NotFoundError`` when ``create`` is false and there is no store at ``path``, and
        ``StorageError`` when the directory or file cannot be created or opened. A write waits
        ``lock_timeout_s`` for another process's lock before it fails as busy.
        """
        self.path = Path(path).expanduser()
        self._lock_timeout_s = float(lock_timeout_s)
        self.location = str(self.path)
        if not create and not self.path.is_file():
            raise NotFoundError(
                f"no store at {self.location} (the first write or `serve` creates it)",
                details={"location": self.location},
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(
                f"cannot create the store directory {self.path.parent}: {exc.strerror}",
                details={"location": self.location},
            ) from None
        self._local = threading.local()
        self._vectors = VectorCache()
        self._checkpointer = Checkpointer(self.path)
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._write_lock = threading.RLock()
        self._process_lock = WriterLock(self.path, self._lock_timeout_s)
        try:
            self._version = migrate(self._conn())
        except sqlite3.Error as exc:
            self.close()
            raise StorageError(
                f"cannot open the store at {self.location}: {exc}", details={"location": self.location}
            ) from None

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=self._lock_timeout_s
            )
            # busy_timeout first: switching a new file to WAL takes a lock another opener may hold.
            conn.execute(f"PRAGMA busy_timeout={round(self._lock_timeout_s * 1000)}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute(
                f"PRAGMA wal_autocheckpoint={SAFETY_PAGES}"
            )  # the checkpointer thread does it sooner
            self._local.conn = conn
            self._local.term_docs = TermDocs()
            with self._lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def _session(self, namespace: str, writable: bool) -> Iterator[SQLiteSession]:
        if not namespace:
            raise StorageError("a namespace is required")
        conn = self._conn()
        # Writers of this process queue on a lock first: SQLite's busy handler retries with
        # sleeps and no order, so under many threads one writer could wait out the whole busy
        # timeout (seen with 50 HTTP clients). The busy timeout then covers other processes only.
        lock = self._write_lock if writable else contextlib.nullcontext()
        with lock, contextlib.ExitStack() as held:
            try:
                if writable:  # then one queue across processes (writer_lock.py), released after COMMIT
                    held.enter_context(self._process_lock.held())
                conn.execute("BEGIN IMMEDIATE" if writable else "BEGIN")
            except (sqlite3.OperationalError, TimeoutError) as exc:
                if not isinstance(exc, TimeoutError) and "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                raise StorageError(
                    f"the store is busy: another process kept it locked for more than {self._lock_timeout_s:g} s; retry",
                    details={"location": self.location},
                ) from None
            session = SQLiteSession(conn, namespace, writable, self._vectors, self._local.term_docs)
            try:
                yield session
                if writable:
                    session.flush_outbox()  # in this transaction: committed with the writes or not at all
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")
                self._vectors.advance(namespace, session.vector_steps)
                if writable:
                    self._checkpointer.poke()

    def read(self, namespace: str) -> Any:
        return self._session(namespace, False)

    def spare_read(self, namespace: str) -> Any:
        return self._session(namespace, False)  # the thread's own connection: never waits

    def write(self, namespace: str) -> Any:
        return self._session(namespace, True)

    def schema_version(self) -> int:
        return self._version

    def namespaces(self) -> list[str]:
        rows = (
            self._conn()
            .execute(
                "SELECT namespace FROM objects UNION SELECT namespace FROM patches UNION SELECT namespace FROM traces "
                "UNION SELECT namespace FROM config ORDER BY 1"
            )
            .fetchall()
        )
        return [r[0] for r in rows]

    def delete_namespace(self, namespace: str) -> dict[str, int]:
        from memory_substrate.storage.sqlite.purge import delete_namespace

        if not namespace:
            raise StorageError("a namespace is required")
        with self._write_lock:  # queue behind this process's writers, as write sessions do
            counts = delete_namespace(self._conn(), namespace)
        self._vectors.forget(namespace)
        return counts

    def create_token(
        self, token_hash: str, namespace: str, label: str, expires_at: str | None = None
    ) -> None:
        self._conn().execute(
            "INSERT INTO tokens (token_hash, namespace, label, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
            (token_hash, namespace, label, now_iso(), expires_at),
        )

    def namespace_for_token(self, token_hash: str) -> str | None:
        row = (
            self._conn()
            .execute(
                "SELECT namespace FROM tokens WHERE token_hash = ? AND (expires_at IS NULL OR expires_at > ?)",
                (token_hash, now_iso()),
            )
            .fetchone()
        )
        return row[0] if row else None

    def list_tokens(self, namespace: str | None = None) -> list[dict[str, Any]]:
        rows = (
            self._conn()
            .execute(
                "SELECT token_hash, namespace, label, created_at, expires_at FROM tokens"
                " WHERE (? IS NULL OR namespace = ?) ORDER BY created_at, token_hash",
                (namespace, namespace),
            )
            .fetchall()
        )
        return [token_row(*r) for r in rows]

    def revoke_tokens(self, token_hashes: list[str]) -> int:
        with self._write_lock:
            conn = self._conn()
            n = 0
            for h in token_hashes:
                n += conn.execute("DELETE FROM tokens WHERE token_hash = ?", (h,)).rowcount
            return n

    def vector_models(self, namespace: str, models: Sequence[str]) -> list[str]:
        # Index vectors_ns_model: an EXISTS probe per model. On this thread's
        # connection, so inside an open session it reads that session's snapshot.
        rows = self._conn().execute(
            "SELECT m.value FROM json_each(?) m WHERE EXISTS (SELECT 1 FROM vectors v WHERE v.namespace = ? "
            "AND v.owner_type IN ('object', 'segment') AND v.model = m.value)",
            (json.dumps(list(models)), namespace),
        )
        return [r[0] for r in rows]

    def build_deferred_indexes(self) -> dict[str, int]:
        """Nothing is deferred here: vectors are searched exactly from a cached matrix."""
        return {}

    def close(self) -> None:
        self._checkpointer.close()
        self._process_lock.close()
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()


class SQLiteSession(SessionWrites, SQLiteReads, SessionGraph, SessionFullText, SessionJsonHealth):
    def __init__(
        self,
        conn: sqlite3.Connection,
        namespace: str,
        writable: bool,
        vectors: VectorCache,
        term_docs: TermDocs | None = None,
    ) -> None:
        self.conn = conn
        self.term_docs = term_docs
        self.namespace = namespace
        self.writable = writable
        self._vectors = vectors
        self.vectors_written = False  # set by a vector write: this transaction's matrix is private
        self.vector_steps: list[VectorStep] = []  # applied to the shared cache after commit
