"""Reading a whole namespace through the ``StoreSession`` port, page by page (backend-free)."""

from __future__ import annotations

from memory_substrate.models import MemoryObject
from memory_substrate.storage.base import StoreSession

PAGE = 2000
ALL = 1_000_000_000  # "no limit" for port calls that take one


def load_objects(
    session: StoreSession, *, object_types: list[str] | None = None, statuses: list[str] | None = None
) -> list[MemoryObject]:
    """Every matching object of the namespace, read in pages (one consistent transaction)."""
    out: list[MemoryObject] = []
    offset = 0
    while True:
        page = session.list_objects(
            object_types=object_types, statuses=statuses, order="updated_desc", limit=PAGE, offset=offset
        )
        out.extend(page)
        if len(page) < PAGE:
            return out
        offset += PAGE
