"""The composition root and the Python API that the MCP server, the CLI and library users share."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_substrate.derived.mirrored_store import mirrored
from memory_substrate.embed.registry import require_known as require_known_embedder
from memory_substrate.graph import deferred
from memory_substrate.ids import expand_short_ids
from memory_substrate.runtime import Runtime
from memory_substrate.settings import Settings
from memory_substrate.storage.base import Store
from memory_substrate.storage.factory import open_store
from memory_substrate.validation import check_input, namespace_name

if TYPE_CHECKING:
    from memory_substrate.graph.window_run import Extractor
    from memory_substrate.ingest.captured import Progress
    from memory_substrate.ingest.service import IngestService
    from memory_substrate.maintain.service import MaintainService
    from memory_substrate.query.service import QueryService
    from memory_substrate.remember.service import RememberService


class Memory:
    """Durable agent memory in one namespace.

    >>> mem = Memory.open(root="/tmp/mem")            # doctest: +SKIP
    >>> mem.remember("knowledge", {...})              # doctest: +SKIP

    Every method takes the MCP tools' ``mode``/``input_data``/``options`` triple and returns
    the same JSON-shaped dict the MCP tools return. Errors raise ``MemorySubstrateError``
    subclasses with a stable ``code``; an unknown embedder name raises ``ValidationError`` here.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        store: Store | None = None,
        namespace: str | None = None,
        runtime: Runtime | None = None,
    ):
        self.settings = settings or Settings()
        ns = self.settings.namespace if namespace is None else namespace
        if runtime is None:
            require_known_embedder(self.settings.embedder)  # before a store is opened or created
            namespace_name(ns)  # the one rule (validation.py), before a store is opened or created
        if runtime is not None:
            self.store = runtime.store
        else:
            # Writes are mirrored into configured derived backends after commit (derived/mirrored_store.py);
            # what a crashed process committed but never mirrored is replayed now.
            wrapped = mirrored(store or open_store(self.settings), self.settings)
            self.store = wrapped
        self.runtime = runtime or Runtime(self.store, ns, self.settings)
        self._owns_store = store is None and runtime is None
        if runtime is None:
            wrapped.replay_pending(self.runtime.namespace)
            # Vectors a closed process left to make (graph/deferred.py) are made from now on.
            deferred.resume(self.runtime)

    # Each service, and what it imports, is built when first used: a process that only captures
    # (a hook) never loads the compiler, and one that only reads never loads the write paths.
    @cached_property
    def _ingest(self) -> IngestService:
        from memory_substrate.ingest.service import IngestService

        return IngestService(self.runtime)

    @cached_property
    def _query(self) -> QueryService:
        from memory_substrate.query.service import QueryService

        return QueryService(self.runtime)

    @cached_property
    def _remember(self) -> RememberService:
        from memory_substrate.remember.service import RememberService

        return RememberService(self.runtime)

    @cached_property
    def _maintain(self) -> MaintainService:
        from memory_substrate.maintain.service import MaintainService

        return MaintainService(self.runtime)

    @classmethod
    def open(
        cls, root: str | Path | None = None, *, namespace: str | None = None, **overrides: Any
    ) -> Memory:
        if root is not None:
            overrides["root"] = Path(root)
        return cls(Settings(**overrides), namespace=namespace)

    @property
    def namespace(self) -> str:
        return self.runtime.namespace

    def ingest(
        self,
        mode: str,
        input_data: dict[str, Any],
        options: dict[str, Any] | None = None,
        *,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        _check_args(input_data, options)
        return self._ingest.run(mode, input_data, options, progress=progress)

    def query(
        self, mode: str, input_data: dict[str, Any], options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        _check_args(input_data, options)
        input_data, options = expand_short_ids(self.runtime.read, input_data, options)
        return self._query.run(mode, input_data, options)

    def remember(
        self, mode: str, input_data: dict[str, Any], options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        _check_args(input_data, options)
        input_data, options = expand_short_ids(self.runtime.read, input_data, options)
        return self._remember.run(mode, input_data, options)

    def maintain(
        self,
        mode: str,
        input_data: dict[str, Any],
        options: dict[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        extractor: Extractor | None = None,
    ) -> dict[str, Any]:
        _check_args(input_data, options)
        input_data, options = expand_short_ids(self.runtime.read, input_data, options)
        return self._maintain.run(mode, input_data, options, progress=progress, extractor=extractor)

    def status(self) -> dict[str, Any]:
        """Where the store is, its schema version and object counts (no model is loaded)."""
        structure = self._maintain.run("structure", {}, {})
        return {
            "namespace": self.namespace,
            "storage": structure["storage"],
            "counts": structure["counts"],
            "embedder": self.settings.embedder,
        }

    def for_namespace(self, namespace: str) -> Memory:
        """A view of the same store and embedder in another namespace (closing it closes nothing)."""
        return Memory(self.settings, store=self.store, runtime=self.runtime.for_namespace(namespace))

    def close(self) -> None:
        if self._owns_store:
            deferred.stop_workers(self.store)  # what still waits stays queued for the next open
            self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_args(input_data: Any, options: Any) -> None:
    """NUL, lone surrogates and non-finite numbers are refused in every field of every mode, with
    the field's path (validation.check_input).
    (Then short ids are expanded to full ones, ids.py: the one place memory_* arguments enter.)"""
    check_input(input_data, "input_data")
    check_input(options, "options")
