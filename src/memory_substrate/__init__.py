"""memory-substrate: durable, graph-based long-term memory for AI agents over MCP."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_substrate.version import __version__

if TYPE_CHECKING:
    from memory_substrate.app import Memory
    from memory_substrate.errors import MemorySubstrateError
    from memory_substrate.settings import Settings

__all__ = ["Memory", "MemorySubstrateError", "Settings", "__version__"]

# Importing the package (which every submodule does first) must stay cheap: a command such as
# `memory-substrate --version` or a hook imports submodules only, and the API below pulls in the
# compiler, the settings and numpy. So the names load on first use.
_LAZY = {
    "Memory": "memory_substrate.app",
    "MemorySubstrateError": "memory_substrate.errors",
    "Settings": "memory_substrate.settings",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memory_substrate' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
