from memory_substrate.storage.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
