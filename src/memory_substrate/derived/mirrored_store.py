"""A store wrapper that mirrors each committed write into the configured derived backends.

The canonical store records the outbox inside the write transaction; this wrapper only decides
*when* to replay it: right after a write session that added outbox rows commits. The wrapper is
built by the composition root (``app.Memory``); services see an ordinary ``Store``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from memory_substrate.derived.mirror import Mirror
from memory_substrate.derived.registry import DerivedIndexes
from memory_substrate.settings import Settings
from memory_substrate.storage.base import Store, StoreSession


class MirroredStore:
    def __init__(self, inner: Store, settings: Settings) -> None:
        self.inner = inner
        self.indexes = DerivedIndexes(settings)
        self.mirror = Mirror(inner, self.indexes)
        self.backend = inner.backend
        self.location = inner.location
        self.parallel_reads = inner.parallel_reads

    def read(self, namespace: str) -> Any:
        return self.inner.read(namespace)

    def spare_read(self, namespace: str) -> Any:
        return self.inner.spare_read(namespace)

    @contextmanager
    def _write(self, namespace: str) -> Iterator[StoreSession]:
        with self.inner.write(namespace) as session:
            yield session
        if session.outbox_written:
            self.mirror.sync_quietly(namespace)

    def write(self, namespace: str) -> Any:
        return self._write(namespace)

    def replay_pending(self, namespace: str) -> None:
        """At start: replay what a crashed process committed but never mirrored."""
        with self.inner.read(namespace) as session:
            pending = session.outbox_count()
        if pending:
            self.mirror.sync_quietly(namespace)

    def delete_namespace(self, namespace: str) -> dict[str, int]:
        """Delete the namespace canonically, then drop its mirrors (a delete leaves no outbox rows)."""
        with self.inner.read(namespace) as session:
            configured = self.indexes.configured(session.get_config())
        counts = self.inner.delete_namespace(namespace)
        for name in configured:
            try:
                self.mirror.drop(namespace, name)
            except Exception as exc:  # a down mirror must not undo a delete; repair reports it
                self.mirror.last_error[namespace] = (
                    f"{name}: {type(exc).__name__}: {exc}"  # keyed as sync keys it
                )
        return counts

    def schema_version(self) -> int:
        return self.inner.schema_version()

    def namespaces(self) -> list[str]:
        return self.inner.namespaces()

    def create_token(
        self, token_hash: str, namespace: str, label: str, expires_at: str | None = None
    ) -> None:
        self.inner.create_token(token_hash, namespace, label, expires_at)

    def namespace_for_token(self, token_hash: str) -> str | None:
        return self.inner.namespace_for_token(token_hash)

    def list_tokens(self, namespace: str | None = None) -> list[dict[str, Any]]:
        return self.inner.list_tokens(namespace)

    def revoke_tokens(self, token_hashes: list[str]) -> int:
        return self.inner.revoke_tokens(token_hashes)

    def vector_models(self, namespace: str, models: Sequence[str]) -> list[str]:
        return self.inner.vector_models(namespace, models)

    def build_deferred_indexes(self) -> dict[str, int]:
        return self.inner.build_deferred_indexes()

    def close(self) -> None:
        self.indexes.close()
        self.inner.close()


def mirrored(store: Store, settings: Settings) -> MirroredStore:
    return store if isinstance(store, MirroredStore) else MirroredStore(store, settings)
