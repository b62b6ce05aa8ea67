"""Bearer tokens of the HTTP transport: minting one, and the form the store keeps (its sha256)."""

from __future__ import annotations

import hashlib
import secrets

from memory_substrate.storage.base import Store

TOKEN_PREFIX = "mst_"


def hash_token(token: str) -> str:
    """The stored form of a token: its sha256, hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A new random bearer token (256 bits)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def create_token(store: Store, namespace: str, label: str = "", expires_at: str | None = None) -> str:
    """Create a token bound to ``namespace``; only its hash is stored. Returns the token."""
    token = new_token()
    store.create_token(hash_token(token), namespace, label, expires_at)
    return token
