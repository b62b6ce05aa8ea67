"""Embedding providers: the ``Embedder`` port, the bundled static model and a registry."""

from memory_substrate.embed.base import Embedder, Vector
from memory_substrate.embed.registry import available, create_embedder, register
from memory_substrate.embed.static import StaticEmbedder

__all__ = ["Embedder", "StaticEmbedder", "Vector", "available", "create_embedder", "register"]
