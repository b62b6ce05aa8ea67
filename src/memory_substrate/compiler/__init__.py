"""Task-aware context compiler (spec 004): classify, retrieve, rank, render, fit, trace."""

from memory_substrate.compiler.compile import compile_context

__all__ = ["compile_context"]
