"""One settings object, read once by the composition root (never at import time)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_root() -> Path:
    return Path.home() / "memory-substrate"


def _spec002(name: str, default: Any, **constraints: Any) -> Any:
    """A graph-toolset limit: spec 002 names its variables without a prefix (``MAX_TEXT_LENGTH``);
    both names are read and the prefixed one wins."""
    return Field(default, validation_alias=AliasChoices(f"MEMORY_SUBSTRATE_{name.upper()}", name.upper(), name),
                 **constraints)


class Settings(BaseSettings):
    """Runtime configuration; environment variables use the ``MEMORY_SUBSTRATE_`` prefix."""

    model_config = SettingsConfigDict(env_prefix="MEMORY_SUBSTRATE_", extra="ignore")

    root: Path = Field(default_factory=default_root)
    namespace: str = "default"
    database_url: str | None = None  # postgresql://... selects PostgreSQL; default SQLite under root
    embedder: str = "static"  # "static" (bundled, offline), "none", or a registered provider
    embedder_model: str | None = None
    embedder_url: str | None = None
    max_file_bytes: int = 2_000_000  # larger files are skipped with a reason (repo) or refused (file)
    max_pdf_bytes: int = 100_000_000
    web_allow_private: bool = False
    web_timeout_s: float = 15.0
    web_max_bytes: int = 5_000_000
    # Optional extraction model (any OpenAI-compatible chat endpoint); never used on the hot path.
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 3
    extract_in_background: bool = True  # `serve` drains the extraction queue when a model is configured
    # Derived backends (issue 12): a FalkorDB server; Kùzu (LadybugDB) and LanceDB live under derived_root.
    falkordb_url: str | None = None
    # Limits and caches of the spec-002 graph toolset (graphmem/limits.py, docs/graph-toolset.md).
    max_text_length: int = _spec002("max_text_length", 10_000, ge=0)
    max_metadata_size: int = _spec002("max_metadata_size", 100_000, ge=0)  # bytes of the metadata's UTF-8 JSON
    min_ttl_days: float = _spec002("min_ttl_days", 0.0, ge=0)  # exclusive: ttl_days must be greater
    max_ttl_days: float = _spec002("max_ttl_days", 3650.0, ge=0)
    cache_embeddings_enabled: bool = _spec002("cache_embeddings_enabled", True)
    cache_embeddings_maxsize: int = _spec002("cache_embeddings_maxsize", 1000, ge=0)
    cache_search_enabled: bool = _spec002("cache_search_enabled", True)
    cache_search_maxsize: int = _spec002("cache_search_maxsize", 100, ge=0)
    cache_search_ttl: float = _spec002("cache_search_ttl", 60.0, ge=0)
    search_default_limit: int = _spec002("search_default_limit", 10, ge=0)
    similarity_threshold: float = _spec002("similarity_threshold", 0.75, ge=0)  # find_similar and auto_link default
    subgraph_default_max_nodes: int = _spec002("subgraph_default_max_nodes", 20, ge=0)
    trace_max_depth: int = _spec002("trace_max_depth", 4, ge=0)
    graph_scope: str = _spec002("graph_scope", "scope:project")  # the scope label graph-toolset writes carry

    @property
    def derived_root(self) -> Path:
        return Path(self.root).expanduser() / "derived"

    @property
    def sqlite_path(self) -> Path:
        return Path(self.root).expanduser() / "memory.sqlite3"
