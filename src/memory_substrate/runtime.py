"""The bundle every service receives: the store, the namespace, settings and a lazy embedder.

``Runtime`` owns the unit of work. Outside ``storage/``, this module and the derived-index mirror
(``derived/mirror.py``, ``derived/mirrored_store.py``) nothing opens a store session:

* ``read()`` — a read session in which expired objects do not exist (every read surface);
* ``read_with_expired()`` — a read session that sees expired rows too, for the callers that must
  (maintenance sweeps and counts, export, health, importers matching what is stored);
* ``write(tool, mode, reason)`` — a write session and its ``Patch``; the patch (with its audit
  events) is recorded when the block ends if the caller did not commit it, then the transaction
  commits. Any error rolls everything back.

``scripts/import_graph.py`` lists the places that open sessions; ``tests/docs/test_architecture.py`` keeps the
list short.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from memory_substrate.embed.base import Embedder, Vector
from memory_substrate.embed.choice import Choice, choose
from memory_substrate.expiry import VisibleSession, utc_now
from memory_substrate.json_types import JsonObject
from memory_substrate.patch import Patch
from memory_substrate.settings import Settings
from memory_substrate.storage.base import Store, StoreSession
from memory_substrate.validation import namespace_name


@dataclass
class _Snapshot:
    store: Store
    namespace: str
    session: StoreSession
    deferred: list[Callable[[], None]]


# The read snapshot pinned by ``Runtime.snapshot()`` in this thread (worker threads start without one).
_PINNED: ContextVar[_Snapshot | None] = ContextVar("memory_substrate_snapshot", default=None)


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
    _choice: Choice | None = field(default=None, repr=False)
    # Embedders built so far, by provider; shared with ``for_namespace`` runtimes (one model load).
    _built: dict[str, tuple[Embedder | None, str | None]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # Every surface reaches a namespace through a Runtime: the one rule is checked here.
        namespace_name(self.namespace)

    def embedder_or_none(self) -> Embedder | None:
        """This namespace's embedder (``embedder_choice``), built on first use; None if disabled
        or unavailable.

        Writes never fail because an embedder is missing: objects without vectors are
        picked up by ``reindex``.
        """
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    provider = self._choose().provider
                    self._embedder, self._embedder_error = self._build(provider)
                    self._loaded = True
        return self._embedder

    def embedder_choice(self) -> Choice:
        """Which provider this namespace embeds with, and why when it is not the configured one
        (embed/choice.py: a store written before the default changed keeps its vectors' model).
        One indexed query on first use; no model is loaded."""
        if self._choice is None:
            with self._lock:
                return self._choose()
        return self._choice

    def _choose(self) -> Choice:
        if self._choice is None:
            settings = self.settings
            self._choice = choose(
                settings.embedder,
                bool({"embedder", "embedder_model"} & settings.model_fields_set),
                self.namespace,
                lambda models: self.store.vector_models(self.namespace, models),
                lambda provider: self._build(provider)[0],
            )
        return self._choice

    def _build(self, provider: str) -> tuple[Embedder | None, str | None]:
        if provider not in self._built:
            self._built[provider] = _build_embedder(self.settings, provider)
        return self._built[provider]

    def semantic_status(self) -> JsonObject:
        emb = self.embedder_or_none()
        choice = self.embedder_choice()
        kept = {"kept": choice.kept} if choice.kept else {}
        if emb is None:
            return {
                "enabled": False,
                "provider": choice.provider,
                "reason": self._embedder_error or "disabled",
                **kept,
            }
        return {
            "enabled": True,
            "provider": choice.provider,
            "model": emb.name,
            "dimensions": emb.dimensions,
            **kept,
        }

    @contextmanager
    def read(self) -> Iterator[StoreSession]:
        """A read session of this namespace in which expired objects do not exist (expiry.py).

        Every read surface opens its sessions here, so TTL is enforced in one place. Inside
        ``snapshot()`` every read of this namespace is that snapshot's session.
        """
        pinned = self._pinned()
        if pinned is not None:
            yield pinned.session
            return
        with self.store.read(self.namespace) as session:
            yield cast(StoreSession, VisibleSession(session, self.clock()))

    @contextmanager
    def spare_read(self) -> Iterator[StoreSession | None]:
        """A second read session of this namespace beside one the caller holds (``Store.spare_read``),
        expired objects hidden as in ``read``; None when the store has none free without waiting."""
        with self.store.spare_read(self.namespace) as session:
            yield None if session is None else cast(StoreSession, VisibleSession(session, self.clock()))

    def _pinned(self) -> _Snapshot | None:
        pinned = _PINNED.get()
        if pinned is not None and pinned.store is self.store and pinned.namespace == self.namespace:
            return pinned
        return None

    @contextmanager
    def snapshot(self) -> Iterator[StoreSession]:
        """One read transaction for a whole request: every ``read()`` of this namespace made in this
        thread until the block ends gets the same session, so all its parts see one state.

        Writes registered with ``after_snapshot`` run once the snapshot has closed (a request's
        own records, such as the compile trace, are not part of its read transaction).
        """
        pinned = self._pinned()
        if pinned is not None:  # already inside one: join it
            yield pinned.session
            return
        deferred: list[Callable[[], None]] = []
        with self.read() as session:
            token = _PINNED.set(_Snapshot(self.store, self.namespace, session, deferred))
            try:
                yield session
            finally:
                _PINNED.reset(token)
        for write in deferred:
            write()

    def in_snapshot(self) -> bool:
        """Whether a ``snapshot()`` of this namespace is open in this thread (its reads are pinned)."""
        return self._pinned() is not None

    def after_snapshot(self, write: Callable[[], None]) -> None:
        """Run ``write`` when the current snapshot of this namespace closes (now, outside one)."""
        pinned = self._pinned()
        if pinned is None:
            write()
        else:
            pinned.deferred.append(write)

    @contextmanager
    def read_with_expired(self) -> Iterator[StoreSession]:
        """A read session of this namespace that also sees expired objects (no TTL filter).

        For the few callers that must: maintenance (the expire sweep, counts, reports), export,
        health figures, and importers comparing against what is stored.
        """
        with self.store.read(self.namespace) as session:
            yield session

    @contextmanager
    def write(
        self,
        tool: str,
        mode: str,
        reason: str | None,
        *,
        embed: bool = True,
        prepared: dict[str, Vector] | None = None,
        hide_expired: bool = False,
        summary: JsonObject | None = None,
    ) -> Iterator[tuple[StoreSession, Patch]]:
        """One unit of work: a write session of this namespace and the ``Patch`` writing through it.

        The caller may ``patch.commit(summary)`` itself (to use the record); otherwise a patch that
        wrote anything is recorded with its audit events (summary ``summary`` or ``{"mode": mode}``)
        when the block ends. A patch that wrote nothing records nothing. ``hide_expired`` wraps the
        session in ``VisibleSession`` so governance reads do not see expired objects.
        """
        with self.store.write(self.namespace) as raw:
            session = cast(StoreSession, VisibleSession(raw, self.clock())) if hide_expired else raw
            embedder = self.embedder_or_none() if embed else None
            patch = Patch(session, tool=tool, mode=mode, reason=reason, embedder=embedder, prepared=prepared)
            yield session, patch
            if patch.committed is None and patch.operations:
                patch.commit(summary if summary is not None else {"mode": mode})

    def for_namespace(self, namespace: str) -> Runtime:
        """A runtime sharing this store and embedder but bound to another namespace."""
        rt = Runtime(self.store, namespace, self.settings, clock=self.clock, _built=self._built)
        if namespace == self.namespace:
            rt._choice = self._choice
            rt._embedder, rt._embedder_error, rt._loaded = self._embedder, self._embedder_error, self._loaded
        return rt

    def with_embedder(self, namespace: str, embedder: Embedder | None) -> Runtime:
        """A runtime sharing this store and clock, bound to ``namespace``, that embeds with
        ``embedder`` (e.g. a caching wrapper of this one); None keeps why this one has none."""
        rt = Runtime(self.store, namespace, self.settings, clock=self.clock, _built=self._built)
        rt._embedder, rt._loaded = embedder, True
        reason = None if embedder is not None else self.semantic_status().get("reason")
        rt._embedder_error = reason if isinstance(reason, str) else None
        if namespace == self.namespace:
            rt._choice = self.embedder_choice()  # another namespace's is found on first use
        return rt


def _build_embedder(settings: Settings, provider: str | None = None) -> tuple[Embedder | None, str | None]:
    """``provider`` (default: the configured one) with the settings' model and URL."""
    provider = settings.embedder if provider is None else provider
    if provider in ("none", "", "disabled"):
        return None, "disabled by configuration (MEMORY_SUBSTRATE_EMBEDDER=none)"
    try:
        from memory_substrate.embed.registry import create_embedder
    except ImportError as exc:  # the registry is part of the package; this guards partial installs
        return None, f"embedding registry unavailable: {exc}"
    try:
        return create_embedder(provider, model=settings.embedder_model, url=settings.embedder_url), None
    except Exception as exc:  # a provider that cannot start must not block writes
        return None, f"{type(exc).__name__}: {exc}"
