"""Deferred maintenance of the HNSW vector indexes: bulk writes skip them, a build catches up.

Inserting a row into a pgvector HNSW index costs milliseconds (a graph search per row), so a
bulk ingest that maintained the index row by row ran at a few hundred rows per second, while
building the index over rows already loaded runs several times faster. So:

- every vector row carries a ``batch`` number. Small writes store batch 0; a bulk write (at
  least ``BULK_VECTOR_ROWS`` rows in one call) takes a fresh number from ``vectors_batch_seq``.
- one HNSW index per dimension covers ``dim = D AND batch <= W``, where the watermark ``W`` is
  recorded in ``vector_indexes``. Batch-0 rows are always covered (indexed as they are
  written); rows of bulk batches above ``W`` are *pending*: the index does not hold them.
- a search asks the index for the covered rows and scans the pending rows of its namespace
  exactly, and merges both (see ``PostgresReads.vector_search``), so a turn is findable the
  moment its write commits, indexed or not.
- the build (``build``) catches up: when many rows are pending it builds a new index with a
  higher watermark (CREATE INDEX CONCURRENTLY: reads and writes go on), switches the recorded
  watermark and drops the old index; when few are, it folds them into the live index (batch
  set to 0, a chunk per transaction). ``IdleBuilder`` runs it once writes have paused, and
  ``PostgresStore.build_deferred_indexes`` runs it on demand (after a bulk load, in a bench).
  It also merges the full-text indexes' GIN pending lists the same writes filled (fts.py).
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from typing import Any

import psycopg

from memory_substrate.storage.postgres.fts import merge_pending
from memory_substrate.storage.postgres.schema import LOCK_CLASS_DDL

log = logging.getLogger(__name__)

# A vector write of at least this many rows is a bulk write: its rows are indexed later.
BULK_VECTOR_ROWS = 64
# Pending rows that justify a whole new index rather than folding them into the live one
# (a fold costs an incremental insertion per row; a build costs a pass over every row).
REBUILD_MIN_ROWS = 2_000
REBUILD_FRACTION = 0.25
FOLD_CHUNK = 500
# Second advisory-lock key of a build of dimension D: BUILD_LOCK_BASE + D (one builder per dim).
BUILD_LOCK_BASE = 1_000_000
# maintenance_work_mem for a build: enough for the graph of the rows to fit in memory (pgvector
# builds much faster then), within these bounds.
MIN_BUILD_MEM_MB = 64
MAX_BUILD_MEM_MB = 2_048


def index_name(dim: int, watermark: int) -> str:
    return f"vectors_hnsw_d{dim}_w{watermark}"


def index_expression(dim: int, halfvec: bool) -> str:
    """What an index of dimension ``dim`` holds (and a search must order by to use it)."""
    return f"(vec::halfvec({dim}))" if halfvec else f"(vec::vector({dim}))"


def index_sql(dim: int, watermark: int, *, halfvec: bool, concurrently: bool) -> str:
    """An HNSW index over the rows of one dimension up to a watermark.

    ``halfvec`` (pgvector >= 0.7): the index holds the vectors in half precision, half the size
    of full-precision ones, so it keeps its place in the server's cache beside the tables a
    search reads. Its order is approximate anyway; searches rescore its candidates in full
    precision from the table (``PostgresReads.vector_search``).
    """
    ops = "halfvec_ip_ops" if halfvec else "vector_ip_ops"
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS {index_name(dim, watermark)} "
        f"ON vectors USING hnsw ({index_expression(dim, halfvec)} {ops}) WHERE dim = {dim} AND batch <= {watermark}"
    )


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def pgvector_version(conn: psycopg.Connection[Any]) -> tuple[int, ...]:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return version_tuple(row[0] if row else "0")


def halfvec_supported(version: tuple[int, ...]) -> bool:
    return version >= (0, 7)


def _build_mem_mb(rows: int, dim: int, halfvec: bool) -> int:
    # per element: the vector, about 2*m neighbour tuples at level 0, and bookkeeping
    need = rows * (dim * (2 if halfvec else 4) + 400) * 1.3 / 2**20
    return int(min(MAX_BUILD_MEM_MB, max(MIN_BUILD_MEM_MB, need)))


def build(
    conn: psycopg.Connection[Any], *, wait: bool = False, stop: threading.Event | None = None
) -> dict[str, int]:
    """Index every pending vector row, dimension by dimension. ``conn`` must be in autocommit.

    Returns the rows newly covered per dimension (``{"d256": 100000}``) by this call. A dimension
    another builder is working on is skipped, or with ``wait`` waited for (and then caught up),
    so that everything written before the call is indexed when it returns. A rebuild (after a
    bulk load) is followed by ``settle_tables``. ``stop`` ends a fold between chunks and the
    build between steps.
    """
    done: dict[str, int] = {}
    rebuilt = False
    halfvec = halfvec_supported(pgvector_version(conn))
    dims = [r[0] for r in conn.execute("SELECT dim FROM vector_indexes ORDER BY dim").fetchall()]
    for dim in dims:
        if stop is not None and stop.is_set():
            break
        if wait:
            conn.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_CLASS_DDL, BUILD_LOCK_BASE + dim))
        else:
            locked = conn.execute(
                "SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS_DDL, BUILD_LOCK_BASE + dim)
            ).fetchone()
            if not locked or not locked[0]:
                continue
        try:
            n, whole = _catch_up(conn, dim, halfvec, stop)
            rebuilt = rebuilt or whole
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_CLASS_DDL, BUILD_LOCK_BASE + dim))
        if n:
            done[f"d{dim}"] = n
    # Once for all the rebuilt dimensions, and without holding any dimension's build lock.
    if rebuilt:
        settle_tables(conn, stop)
    # The bulk writes that left vectors pending left full-text entries in GIN's pending lists too.
    merge_pending(conn, stop)
    return done


def _catch_up(
    conn: psycopg.Connection[Any], dim: int, halfvec: bool, stop: threading.Event | None
) -> tuple[int, bool]:
    """(rows newly indexed, whether the index was rebuilt rather than folded into)."""
    row = conn.execute("SELECT watermark, halfvec FROM vector_indexes WHERE dim = %s", (dim,)).fetchone()
    if row is None:
        return 0, False
    watermark, indexed_half = int(row[0]), bool(row[1])
    _drop_strays(conn, dim, watermark)
    pending = _count(conn, f"dim = {dim} AND batch > {watermark}")
    if pending == 0 and indexed_half == halfvec:
        return 0, False
    covered = _count(conn, f"dim = {dim} AND batch <= {watermark}")
    # An index in the other precision (an older schema's, or a pgvector upgrade's) is rebuilt.
    if indexed_half != halfvec or pending >= max(REBUILD_MIN_ROWS, REBUILD_FRACTION * covered):
        return _rebuild(conn, dim, watermark, halfvec, pending + covered), True
    return _fold(conn, dim, watermark, stop), False


def _count(conn: psycopg.Connection[Any], where: str) -> int:
    row = conn.execute(f"SELECT COUNT(*) FROM vectors WHERE {where}").fetchone()
    return int(row[0]) if row else 0


def _rebuild(conn: psycopg.Connection[Any], dim: int, old: int, halfvec: bool, rows: int) -> int:
    """A new index up to the newest batch number, then the switch, then the old one dropped."""
    seq = conn.execute("SELECT last_value FROM vectors_batch_seq").fetchone()
    new = max(old + 1, int(seq[0]) if seq else 0)
    conn.execute(f"SET maintenance_work_mem = '{_build_mem_mb(rows, dim, halfvec)}MB'")
    try:
        conn.execute(index_sql(dim, new, halfvec=halfvec, concurrently=True))
    finally:
        conn.execute("RESET maintenance_work_mem")
    before = _count(conn, f"dim = {dim} AND batch > {old}")
    conn.execute(
        "UPDATE vector_indexes SET watermark = %s, halfvec = %s, built_at = now()::text WHERE dim = %s",
        (new, halfvec, dim),
    )
    # Readers that planned with the old watermark finish first; DROP ... CONCURRENTLY waits for them.
    conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {index_name(dim, old)}")
    left = _count(conn, f"dim = {dim} AND batch > {new}")
    return max(0, before - left)


# The tables a bulk load fills and every search reads.
LOADED_TABLES = ("objects", "segments", "segment_search", "vectors")


def settle_tables(conn: psycopg.Connection[Any], stop: threading.Event | None = None) -> None:
    """VACUUM (ANALYZE) the tables a bulk load filled, now rather than when autovacuum gets to
    them: a rebuild follows a bulk load (a quarter of the rows or more are new). ``conn`` must
    be in autocommit.

    ANALYZE: the planner's statistics are as stale as the index was. Until refreshed, stale row
    estimates picked scans of the whole table for the searches' key probes (segment search
    ~0.75 s at 100k right after a load), and the full-text candidate planning (fts_plan.py)
    reads the lexeme frequencies gathered here.
    VACUUM: a freshly loaded row's commit status is looked up, and its page written again, by
    the first query that reads it, and its page is not yet marked all-visible. Searches on a
    store just loaded paid that (a German store's segment search, whose full-text queries visit
    more rows, at up to 1.65x English's p95) until autovacuum came by; this moves it off the
    search path. A role that does not own a table cannot vacuum it: the server skips it with a
    warning, and autovacuum still will. ``stop`` (the idle builder closing, which cancels the
    statement under way) ends it; an error is logged, not raised.
    """
    for table in LOADED_TABLES:
        if stop is not None and stop.is_set():
            break
        try:
            conn.execute(f"VACUUM (ANALYZE) {table}")
        except psycopg.Error as exc:
            log.info("%s not vacuumed after the load: %s", table, exc)


def _fold(conn: psycopg.Connection[Any], dim: int, watermark: int, stop: threading.Event | None) -> int:
    """Move a few pending rows into the live index (batch 0): one chunk per transaction."""
    total = 0
    while stop is None or not stop.is_set():
        cur = conn.execute(
            "UPDATE vectors SET batch = 0 WHERE ctid = ANY(ARRAY("
            f"SELECT ctid FROM vectors WHERE dim = {dim} AND batch > {watermark} LIMIT {FOLD_CHUNK} "
            "FOR UPDATE SKIP LOCKED))"
        )
        if cur.rowcount <= 0:
            break
        total += cur.rowcount
    return total


def _drop_strays(conn: psycopg.Connection[Any], dim: int, watermark: int) -> None:
    """Indexes of this dimension other than the recorded one: left by an interrupted build
    (an INVALID index) or by a build that stopped before dropping its predecessor."""
    keep = index_name(dim, watermark)
    rows = conn.execute(
        "SELECT indexname FROM pg_indexes WHERE tablename = 'vectors' AND indexname LIKE %s",
        (f"vectors_hnsw_d{dim}_w%",),
    ).fetchall()
    for (name,) in rows:
        if name != keep:
            conn.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"')


class IdleBuilder:
    """Runs ``build`` on a thread of its own once vector writes have paused for ``idle_s``.

    Writers call ``poke`` after committing a bulk write; every poke restarts the wait, so a
    bulk load is not slowed by a build competing with it. ``close`` stops it, cancelling a
    build in progress (the next build drops the invalid index it leaves).
    """

    def __init__(self, url: str, idle_s: float) -> None:
        self.url = url
        self.idle_s = idle_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._conn: psycopg.Connection[Any] | None = None
        self._conn_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="memory-substrate-vector-index", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            if self._stop.is_set():
                return
            self._wake.clear()
            # Wait until no poke came for idle_s (a bulk load pokes after every commit).
            while self._wake.wait(self.idle_s):
                if self._stop.is_set():
                    return
                self._wake.clear()
            if self._stop.is_set():
                return
            try:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    with self._conn_lock:
                        self._conn = conn
                    try:
                        build(conn, stop=self._stop)
                    finally:
                        with self._conn_lock:
                            self._conn = None
            except Exception as exc:  # a failed build leaves rows pending (still searched exactly)
                if not self._stop.is_set():
                    log.warning("deferred vector index build failed: %s", exc)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        with self._conn_lock:
            if self._conn is not None:
                with contextlib.suppress(Exception):  # the connection may already be gone
                    self._conn.cancel()
        self._thread.join(timeout=30)
