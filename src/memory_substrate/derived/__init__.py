"""Derived graph and vector backends: FalkorDB, Kùzu (LadybugDB) and LanceDB as rebuildable mirrors.

SQLite / PostgreSQL stay canonical. A configured backend is kept in line through the outbox that
every write session records in its own transaction (``storage/outbox.py``), replayed after commit
by ``mirror.Mirror``; ``reindex`` rebuilds a backend from scratch and ``repair`` measures drift
(counts and checksums) and fixes it. Reads go through two narrow ports (``base.py``):
``GraphReader`` (one hop, neighbourhood, paths) and ``VectorIndex`` (top-k by cosine); the
built-in backends implement them over the canonical tables, so callers never branch on a backend.
"""
