"""PostgreSQL + pgvector backend (``pip install 'memory-substrate[postgres]'``)."""

from memory_substrate.storage.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
