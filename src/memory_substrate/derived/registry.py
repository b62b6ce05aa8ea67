"""Which derived backends exist, what each needs installed, and one lazily built instance of each.

The only place that names FalkorDB, Kùzu and LanceDB; everything else asks for "the configured
graph reader" or "the configured vector index" (``access.py``).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Mapping

from memory_substrate.derived.base import DerivedBackend
from memory_substrate.errors import NotAvailableError
from memory_substrate.settings import Settings

GRAPH_BACKENDS = ("file", "falkordb", "kuzu")
SEMANTIC_BACKENDS = ("builtin", "lancedb")
BUILTIN = {"file", "builtin"}
# backend -> (modules it imports, the extra that installs them)
REQUIREMENTS: dict[str, tuple[tuple[str, ...], str]] = {
    "falkordb": (("falkordb",), "falkordb"),
    "kuzu": (("ladybug", "pyarrow"), "kuzu"),
    "lancedb": (("lancedb", "pyarrow"), "lancedb"),
}


def install_hint(name: str) -> str:
    return f"pip install 'memory-substrate[{REQUIREMENTS[name][1]}]'"


def missing_modules(name: str) -> list[str]:
    return [m for m in REQUIREMENTS[name][0] if importlib.util.find_spec(m) is None]


def require(name: str) -> None:
    """Raise ``NotAvailableError`` naming the extra when a backend's packages are not installed."""
    missing = missing_modules(name)
    if missing:
        raise NotAvailableError(
            f"the {name} backend needs its extra: {install_hint(name)} (missing: {', '.join(missing)})",
            details={"backend": name, "install": install_hint(name), "missing": missing},
        )


class DerivedIndexes:
    """One instance per backend per process, built on first use from settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._backends: dict[str, DerivedBackend] = {}
        self._lock = threading.Lock()

    def backend(self, name: str) -> DerivedBackend:
        """The backend called ``name``; raises ``NotAvailableError`` when it cannot be used here."""
        with self._lock:
            if name not in self._backends:
                self._backends[name] = self._build(name)
            return self._backends[name]

    def _build(self, name: str) -> DerivedBackend:
        if name not in REQUIREMENTS:
            raise NotAvailableError(f"no derived backend named {name!r}", details={"backend": name})
        require(name)
        root = self.settings.derived_root
        if name == "falkordb":
            url = self.settings.falkordb_url
            if not url:
                raise NotAvailableError(
                    "graph_backend 'falkordb' needs a server: set MEMORY_SUBSTRATE_FALKORDB_URL "
                    "(for example redis://localhost:6379, or the unix:// URL that "
                    "'memory-substrate falkordb-server' prints)",
                    details={"backend": name, "setting": "MEMORY_SUBSTRATE_FALKORDB_URL"},
                )
            from memory_substrate.derived.falkordb_graph import FalkorDBBackend

            return FalkorDBBackend(url)
        if name == "kuzu":
            from memory_substrate.derived.kuzu_graph import shared_kuzu

            return shared_kuzu(root / "ladybug")
        from memory_substrate.derived.lancedb_vectors import LanceDBBackend

        return LanceDBBackend(root / "lancedb")

    def configured(self, config: Mapping[str, object]) -> list[str]:
        """Names of the derived (non-built-in) backends a namespace config selects."""
        names = [str(config.get("graph_backend") or "file"), str(config.get("semantic_backend") or "builtin")]
        return [n for n in names if n not in BUILTIN]

    def close(self) -> None:
        with self._lock:
            for backend in self._backends.values():
                backend.close()
            self._backends.clear()
