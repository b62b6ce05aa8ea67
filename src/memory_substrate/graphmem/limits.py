"""Validation limits and cache settings of the graph toolset, read from the environment.

Spec 002 names its variables without a prefix (``MAX_TEXT_LENGTH``...); this project's
convention is the ``MEMORY_SUBSTRATE_`` prefix. Both are read; the prefixed one wins, so a
deployment can set the project's variable without touching a shared, unprefixed one.
Spec 002 configures them in a ``.env`` file: ``.env`` in the working directory is read too,
below the process environment (a variable set in the environment wins over the file). Read once
when the toolset is built (never at import time).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from dotenv import dotenv_values

from memory_substrate.errors import ValidationError

PREFIX = "MEMORY_SUBSTRATE_"


@dataclass(frozen=True)
class GraphLimits:
    max_text_length: int = 10_000
    max_metadata_size: int = 100_000  # bytes of the metadata's UTF-8 JSON
    min_ttl_days: float = 0.0  # exclusive: ttl_days must be greater
    max_ttl_days: float = 3650.0
    cache_embeddings_enabled: bool = True
    cache_embeddings_maxsize: int = 1000
    cache_search_enabled: bool = True
    cache_search_maxsize: int = 100
    cache_search_ttl: float = 60.0
    search_default_limit: int = 10
    similarity_threshold: float = 0.75  # find_similar and auto_link default (cosine)
    subgraph_default_max_nodes: int = 20
    trace_max_depth: int = 4
    graph_scope: str = "scope:project"  # the scope label graph-toolset writes carry

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> GraphLimits:
        """Limits from ``env`` (default: ``./.env`` overlaid with ``os.environ``); raises
        ValidationError naming the variable and its value on a bad value."""
        env = dot_env_and_environ() if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = f.name.upper()
            raw = env.get(PREFIX + name, env.get(name))
            if raw is None:
                continue
            values[f.name] = _parse(name, raw, type(getattr(cls, f.name)))
        return cls(**values)


def _parse(name: str, raw: str, kind: type) -> Any:
    try:
        if kind is bool:
            low = raw.strip().lower()
            if low not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(raw)
            return low in ("1", "true", "yes", "on")
        if kind is str:
            return raw.strip()
        value = kind(raw)
    except ValueError:
        raise ValidationError(f"{name}={raw!r} is not a valid {kind.__name__}") from None
    if value < 0:
        raise ValidationError(f"{name} must not be negative")
    return value


def dot_env_and_environ(directory: Path | None = None) -> dict[str, str]:
    """``.env`` of ``directory`` (default the working directory), then the environment over it."""
    path = (directory or Path.cwd()) / ".env"
    try:
        from_file = {k: v for k, v in dotenv_values(path).items() if v is not None} if path.is_file() else {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    return {**from_file, **os.environ}
