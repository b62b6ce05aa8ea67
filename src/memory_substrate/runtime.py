"""The bundle every service receives: the store, the namespace, settings and a lazy embedder."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from memory_substrate.embed.base import Embedder
from memory_substrate.expiry import VisibleSession, utc_now
from memory_substrate.settings import Settings
from memory_substrate.storage.base import Store, StoreSession


@dataclass
class Runtime:
    store: Store
    namespace: str
    settings: Settings
    # The clock TTL expiry is judged by; tests inject a fixed one.
    clock: Callable[[], datetime] = field(default=utc_now, repr=False)
    _embedder: Embedder | None = field(default=None, repr=False)
    _embedder_error: str | None = field(default=None, repr=False)
    _loaded: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def embedder_or_none(self) -> Embedder | None:
        """The configured embedder, built on first use; None if disabled or unavailable.

        Writes never fail because an embedder is missing: objects without vectors are
        picked up by ``reindex``.
        """
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    self._embedder, self._embedder_error = _build_embedder(self.settings)
                    self._loaded = True
        return self._embedder

    def semantic_status(self) -> dict[str, Any]:
        emb = self.embedder_or_none()
        if emb is None:
            return {
                "enabled": False,
                "provider": self.settings.embedder,
                "reason": self._embedder_error or "disabled",
            }
        return {"enabled": True, "provider": self.settings.embedder, "model": emb.name, "dimensions": emb.dimensions}

    @contextmanager
    def read(self) -> Iterator[StoreSession]:
        """A read session of this namespace in which expired objects do not exist (expiry.py).

        Every read surface opens its sessions here, so TTL is enforced in one place.
        """
        with self.store.read(self.namespace) as session:
            yield cast(StoreSession, VisibleSession(session, self.clock()))

    def for_namespace(self, namespace: str) -> Runtime:
        """A runtime sharing this store and embedder but bound to another namespace."""
        rt = Runtime(self.store, namespace, self.settings, clock=self.clock)
        rt._embedder, rt._embedder_error, rt._loaded = self._embedder, self._embedder_error, self._loaded
        return rt


def _build_embedder(settings: Settings) -> tuple[Embedder | None, str | None]:
    if settings.embedder in ("none", "", "disabled"):
        return None, "disabled by configuration (MEMORY_SUBSTRATE_EMBEDDER=none)"
    try:
        from memory_substrate.embed.registry import create_embedder
    except ImportError as exc:  # the registry is part of the package; this guards partial installs
        return None, f"embedding registry unavailable: {exc}"
    try:
        return create_embedder(settings.embedder, model=settings.embedder_model, url=settings.embedder_url), None
    except Exception as exc:  # a provider that cannot start must not block writes
        return None, f"{type(exc).__name__}: {exc}"
