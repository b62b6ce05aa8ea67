"""memory-substrate: durable, graph-based long-term memory for AI agents over MCP."""

from memory_substrate.app import Memory
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.settings import Settings

__all__ = ["Memory", "MemorySubstrateError", "Settings"]
__version__ = "0.1.0"
