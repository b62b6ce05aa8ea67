"""One settings object, read once by the composition root (never at import time)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_root() -> Path:
    return Path.home() / "memory-substrate"


class Settings(BaseSettings):
    """Runtime configuration; environment variables use the ``MEMORY_SUBSTRATE_`` prefix."""

    model_config = SettingsConfigDict(env_prefix="MEMORY_SUBSTRATE_", extra="ignore")

    root: Path = Field(default_factory=default_root)
    namespace: str = "default"
    database_url: str | None = None  # postgresql://... selects PostgreSQL; default SQLite under root
    embedder: str = "static-multilingual"  # bundled, offline (English as "static"); "none"; or a registered provider
    embedder_model: str | None = None
    embedder_url: str | None = None
    # Filesystem access for path-taking modes (docs/security.md): None reads any path (stdio/CLI
    # default); a list reads only under those directories ([] = none, the HTTP default).
    allow_paths: list[Path] | None = None
    max_file_bytes: int = 2_000_000  # larger files are skipped with a reason (repo) or refused (file)
    max_pdf_bytes: int = 100_000_000
    web_allow_private: bool = False
    # Private hosts or networks web capture may fetch although private: names ("wiki.corp"),
    # addresses or CIDRs ("10.1.2.0/24"). Checked against every resolved address at connect time.
    web_allow_hosts: list[str] = Field(default_factory=list)
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

    @property
    def derived_root(self) -> Path:
        return Path(self.root).expanduser() / "derived"

    @property
    def sqlite_path(self) -> Path:
        return Path(self.root).expanduser() / "memory.sqlite3"
