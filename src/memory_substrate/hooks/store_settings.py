"""The settings a hook opens the store with: the CLI's store options, and the hooks' own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict


class StoreOverrides(TypedDict, total=False):
    """The CLI's options that choose the store and the embedder (the root is the hooks' own)."""

    database_url: str
    embedder: str


class LockWait(TypedDict, total=False):
    """How long a write waits for another process's lock, when the caller bounds it (else the
    setting's own default, or its environment variable, holds)."""

    lock_timeout_s: float


def store_overrides(options: Mapping[str, object]) -> StoreOverrides:
    """The store options among the CLI's global ones, those set only (click gives a string or None)."""
    out: StoreOverrides = {}
    for key, value in options.items():
        if key == "database_url" and isinstance(value, str):
            out["database_url"] = value
        elif key == "embedder" and isinstance(value, str):
            out["embedder"] = value
    return out
