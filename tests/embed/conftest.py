"""Fixtures shared by the embedder tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_substrate import Settings


@pytest.fixture
def default_settings(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """The default install's settings on this backend: no embedder named anywhere."""
    for var in ("MEMORY_SUBSTRATE_EMBEDDER", "MEMORY_SUBSTRATE_EMBEDDER_MODEL"):
        monkeypatch.delenv(var, raising=False)
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    return Settings(root=tmp_path / "store", **({"database_url": url} if url else {}))
