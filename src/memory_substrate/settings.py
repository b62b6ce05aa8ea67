"""One settings object, read once by the composition root (never at import time).

Every setting comes from a ``MEMORY_SUBSTRATE_`` environment variable. The graph toolset's limits
are settings too, read by the toolset's own unprefixed names as well: ``MAX_TEXT_LENGTH`` or
``MEMORY_SUBSTRATE_MAX_TEXT_LENGTH``, from the environment or from ``.env`` in the working
directory (only these limits are read from the file). The source decides first: anything in the
environment wins over the file, so an unprefixed variable in the environment wins over a prefixed
one in ``.env``; within one source the prefixed name wins. A bad limit value does not stop the settings from loading: that limit keeps its default,
and ``config_error`` says why, so the graph toolset can answer it on every call (graphmem/).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, PrivateAttr, ValidationError, model_validator
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from memory_substrate.json_types import JsonObject

PREFIX = "MEMORY_SUBSTRATE_"
# The graph toolset's limits: field -> default.
GRAPH_LIMITS: dict[str, int | float | bool | str] = {
    "max_text_length": 10_000,
    "max_metadata_size": 100_000,  # bytes of the metadata's UTF-8 JSON
    "min_ttl_days": 0.0,  # exclusive: ttl_days must be greater
    "max_ttl_days": 3650.0,
    "cache_embeddings_enabled": True,
    "cache_embeddings_maxsize": 1000,
    "cache_search_enabled": True,
    "cache_search_maxsize": 100,
    "cache_search_ttl": 60.0,
    "search_default_limit": 10,
    "similarity_threshold": 0.75,  # find_similar and auto_link default (cosine)
    "subgraph_default_max_nodes": 20,
    "trace_max_depth": 4,
    "graph_scope": "scope:project",  # the scope label graph-toolset writes carry
}
# The key a limit's value arrives under from any source: its first alias.
_LIMIT_KEYS = {PREFIX + name.upper(): name for name in GRAPH_LIMITS}
_DOTENV_ERROR = "__dotenv_error__"  # why ``.env`` could not be read (a key no field has)
_KIND = {"int_parsing": "int", "float_parsing": "float", "bool_parsing": "bool"}


def _limit(name: str) -> Any:
    """A graph-toolset limit: ``MEMORY_SUBSTRATE_NAME``, else the toolset's own ``NAME``; never negative."""
    default = GRAPH_LIMITS[name]
    alias = AliasChoices(PREFIX + name.upper(), name.upper(), name)
    if isinstance(default, str):
        return Field(default, validation_alias=alias)
    return Field(default, ge=0, validation_alias=alias)


class _LimitsDotEnv(DotEnvSettingsSource):
    """``.env`` of the working directory, for the graph-toolset limits only."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        self.unread: str | None = None
        try:
            env_file = Path.cwd() / ".env"  # when the settings are built
        except FileNotFoundError:  # the working directory was removed: no .env to read
            super().__init__(settings_cls, env_file=None)
            return
        try:  # the file is read here
            super().__init__(settings_cls, env_file=env_file)
        except (OSError, UnicodeDecodeError) as exc:
            # Another tool's file may sit there: the settings still load and the limits keep their
            # defaults; the graph toolset answers why (``config_error``).
            super().__init__(settings_cls, env_file=None)
            self.unread = f"cannot read {env_file}: {type(exc).__name__}: {exc}"

    def __call__(self) -> JsonObject:
        if self.unread is not None:
            return {_DOTENV_ERROR: self.unread}
        return {k: v for k, v in super().__call__().items() if k in _LIMIT_KEYS}


def default_root() -> Path:
    return Path.home() / "memory-substrate"


class Settings(BaseSettings):
    """Runtime configuration; environment variables use the ``MEMORY_SUBSTRATE_`` prefix."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore", populate_by_name=True)

    root: Path = Field(default_factory=default_root)
    namespace: str = "default"
    database_url: str | None = None  # postgresql://... selects PostgreSQL; default SQLite under root
    # How long a write on the embedded store waits while another process holds its write lock,
    # before it fails as busy (nothing written). An agent's hook waits less: it must not stall.
    lock_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    embedder: str = "use-gated"  # offline (English as "static", other languages through USE); "none"; or a registered provider
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
    # Names the HTTP surfaces answer to besides their bound address ("mem.example.com", or with a
    # port "mem.example.com:443"); any other Host header gets 421 (hosts.py, docs/security.md).
    allowed_hosts: list[str] = Field(default_factory=list)
    # Bulkhead (docs/security.md): each namespace runs at most this many slow calls at once (captures,
    # extraction, reindex), on threads apart from those serving reads; this many more may wait.
    slow_concurrency: int = Field(default=4, ge=1)
    slow_queue: int = Field(default=8, ge=0)
    # Heavy reads (a very long query or task, a very large budget: mcp/bulkhead.py) of a namespace
    # run at most this many at once, so they never take the interpreter from other namespaces' reads.
    heavy_read_concurrency: int = Field(default=1, ge=1)
    heavy_read_queue: int = Field(default=8, ge=0)
    # Optional extraction model (any OpenAI-compatible chat endpoint); never used on the hot path.
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    # A slow local model (docs/knowledge-graph.md, "Slow local models"): answers are streamed, so
    # llm_timeout_s bounds the wait for the first token and between chunks, and
    # llm_window_timeout_s bounds one window's whole answer.
    llm_timeout_s: float = 120.0
    llm_window_timeout_s: float = 900.0
    llm_max_retries: int = 3
    llm_backoff_s: float = 2.0
    llm_max_in_flight: int = 1  # requests one endpoint is sent at once (a local server queues the rest)
    llm_max_output_tokens: int = 2048  # upper bound of the max_tokens sized to each window
    extract_in_background: bool = True  # `serve` drains the extraction queue when a model is configured
    # Vectors a capture's embedder marks costly (use-gated: other languages) are made by a background
    # worker after the capture returns (graph/deferred.py); off: every vector is made during capture.
    embed_in_background: bool = True
    # Derived backends: a FalkorDB server; Kùzu (LadybugDB) and LanceDB live under derived_root.
    falkordb_url: str | None = None
    # The graph toolset's limits, see the module docstring.
    max_text_length: int = _limit("max_text_length")
    max_metadata_size: int = _limit("max_metadata_size")
    min_ttl_days: float = _limit("min_ttl_days")
    max_ttl_days: float = _limit("max_ttl_days")
    cache_embeddings_enabled: bool = _limit("cache_embeddings_enabled")
    cache_embeddings_maxsize: int = _limit("cache_embeddings_maxsize")
    cache_search_enabled: bool = _limit("cache_search_enabled")
    cache_search_maxsize: int = _limit("cache_search_maxsize")
    cache_search_ttl: float = _limit("cache_search_ttl")
    search_default_limit: int = _limit("search_default_limit")
    similarity_threshold: float = _limit("similarity_threshold")
    subgraph_default_max_nodes: int = _limit("subgraph_default_max_nodes")
    trace_max_depth: int = _limit("trace_max_depth")
    graph_scope: str = _limit("graph_scope")
    _config_error: str | None = PrivateAttr(default=None)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Read when the settings are built: ``.env`` of the working directory at that moment.
        return init_settings, env_settings, _LimitsDotEnv(settings_cls), file_secret_settings

    @model_validator(mode="wrap")
    @classmethod
    def _bad_limits_keep_their_defaults(cls, data: Any, handler: Any) -> Any:
        unread = data.pop(_DOTENV_ERROR, None) if isinstance(data, dict) else None
        try:
            settings = handler(data)
            reasons = []
        except ValidationError as exc:
            bad = [e for e in exc.errors() if e["loc"] and _limit_name(e["loc"][0]) is not None]
            if not isinstance(data, dict) or len(bad) != len(exc.errors()):
                raise
            reasons = [_reason(e) for e in bad]
            settings = handler({k: v for k, v in data.items() if k not in {e["loc"][0] for e in bad}})
        if unread is not None:
            reasons.insert(0, unread)
        if reasons:
            settings._config_error = "; ".join(reasons)
        return settings

    @property
    def config_error(self) -> str | None:
        """Why a graph-toolset limit was refused (it kept its default), or None."""
        return self._config_error

    @property
    def derived_root(self) -> Path:
        return Path(self.root).expanduser() / "derived"

    @property
    def sqlite_path(self) -> Path:
        return Path(self.root).expanduser() / "memory.sqlite3"


def _limit_name(key: object) -> str | None:
    if not isinstance(key, str):  # an error's location starts with a field name or alias
        return None
    return _LIMIT_KEYS.get(key) or (key if key in GRAPH_LIMITS else None)


def _reason(error: ErrorDetails) -> str:
    name = str(_limit_name(error["loc"][0])).upper()
    kind = _KIND.get(error["type"])
    if kind is not None:
        return f"{name}={error['input']!r} is not a valid {kind}"
    if error["type"] == "greater_than_equal":
        return f"{name} must not be negative"
    return f"{name}={error['input']!r}: {error['msg']}"
