"""Pick a backend from settings. The only place that knows which databases exist."""

from __future__ import annotations

from pathlib import Path

from memory_substrate.errors import NotAvailableError
from memory_substrate.settings import Settings
from memory_substrate.storage.base import Store


def open_store(settings: Settings, *, create: bool = True) -> Store:
    """The store the settings name. With ``create=False`` an embedded store that does not exist yet
    raises ``NotFoundError`` instead of being created (read-only commands use this); a PostgreSQL
    database must exist either way, and its tables are created on first connection."""
    url = settings.database_url
    if url and url.startswith(("postgresql://", "postgres://")):
        try:
            from memory_substrate.storage.postgres import PostgresStore
        except ImportError as exc:
            raise NotAvailableError(
                "PostgreSQL support needs its extra: pip install 'memory-substrate[postgres]'",
                details={"missing": str(exc)},
            ) from exc
        return PostgresStore(url)
    if url and not url.startswith("sqlite:"):
        raise NotAvailableError(f"unsupported database URL scheme in {url.split('://', 1)[0]!r}")
    from memory_substrate.storage.sqlite import SQLiteStore

    wait = settings.lock_timeout_s
    if url:  # sqlite:///absolute/path.sqlite3
        return SQLiteStore(Path(url.removeprefix("sqlite://")), create=create, lock_timeout_s=wait)
    return SQLiteStore(settings.sqlite_path, create=create, lock_timeout_s=wait)


def store_files(settings: Settings) -> tuple[Path, ...]:
    """The database files of an embedded store (their siblings named after them belong to it too);
    empty for a server database. The path policy denies them to every capture."""
    url = settings.database_url
    if url and url.startswith("sqlite:"):
        return (Path(url.removeprefix("sqlite://")),)
    if url:
        return ()
    return (settings.sqlite_path,)
