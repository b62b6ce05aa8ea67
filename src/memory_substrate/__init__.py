"""memory-substrate: durable, graph-based long-term memory for AI agents over MCP."""

from memory_substrate.app import Memory
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.settings import Settings
from memory_substrate.version import __version__

__all__ = ["Memory", "MemorySubstrateError", "Settings", "__version__"]
