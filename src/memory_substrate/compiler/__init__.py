"""Task-aware context compiler: classify, retrieve, rank, render, fit, trace."""

from memory_substrate.compiler.compile import compile_context

__all__ = ["compile_context"]
