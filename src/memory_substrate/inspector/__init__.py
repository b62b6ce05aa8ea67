"""A read-only local web inspector over one store (``memory-substrate inspect``)."""

from memory_substrate.inspector.app import build_inspector, serve_inspector

__all__ = ["build_inspector", "serve_inspector"]
