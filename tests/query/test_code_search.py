"""Code questions in segment search (issue 22): asked in the words of a symbol's docstring
summary, without its name, a search finds the symbol.

* A code symbol's summary sentence outweighs its parameter list and the rest of its docstring
  in the ranker's terms (``retrieval.segment_terms``), and ``reindex`` rebuilds the same terms.
* Documented functions defined inside another function are outlined, so they can be found.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call

pytestmark = pytest.mark.anyio

SESSION_PY = '''"""A websocket session."""


class WebSocketSession:
    """A websocket session over a connection."""

    def receive(self, timeout: float | None = None) -> object:
        """Receive an event from the server.

        Mainly useful to receive raw events; most of the time, receive_text(), receive_bytes()
        and receive_json() are what you want.
        """

    def receive_text(self, timeout: float | None = None) -> str:
        """Receive text from the server.

        Args:
            timeout: Number of seconds to wait for an event. If None, block until an event is
                available.

        Raises:
            TimeoutError: No event was received before the timeout delay.
        """

    def receive_bytes(self, timeout: float | None = None) -> bytes:
        """Receive bytes from the server.

        Waits at most ``timeout`` seconds for an event (TimeoutError when none came).
        """

    def _background_receive(self, max_bytes: int) -> None:
        """Background task reading the connection into a queue."""
'''

HIGHLIGHT_PY = '''"""Syntax highlighting."""


class Syntax:
    """Source code with syntax highlighting."""

    def split_lines(self, text: str) -> list[str]:
        """Split text into lines."""

    def highlight(self, code: str) -> list[str]:
        """Highlight code and return one styled line per source line."""

        def line_tokenize() -> list[tuple[str, str]]:
            """Split tokens to one per line."""
            return []

        def _helper() -> None:
            pass

        return [t for _, t in line_tokenize()]
'''


def _repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "session.py").write_text(SESSION_PY, encoding="utf-8")
    (root / "pkg" / "syntax.py").write_text(HIGHLIGHT_PY, encoding="utf-8")
    return root


@pytest.fixture(params=["none", "static"])
def any_memory(request: pytest.FixtureRequest, make_settings: Any, namespace: str) -> Iterator[Memory]:
    with closing(Memory(make_settings(embedder=request.param), namespace=namespace)) as mem:
        yield mem


async def _symbols(c: Client, query: str) -> list[str]:
    found = await call(
        c,
        "memory_query",
        "search",
        {"query": query},
        {"result_unit": "segment", "detail": "full", "max_items": 5},
    )
    return [i["locator"].get("symbol", "") for i in found["items"]]


async def test_a_symbol_is_found_by_its_summary_sentence(any_memory: Memory, tmp_path: Path) -> None:
    async with Client(build_server(any_memory)) as c:
        await call(c, "memory_ingest", "repo", {"path": str(_repo(tmp_path / "repo"))})
        # "event" is also in the other methods' arguments sections; only receive's summary says it.
        symbols = await _symbols(c, "an event from the server")
        assert symbols[0] == "WebSocketSession.receive", symbols


async def test_a_documented_nested_function_is_found(any_memory: Memory, tmp_path: Path) -> None:
    async with Client(build_server(any_memory)) as c:
        await call(c, "memory_ingest", "repo", {"path": str(_repo(tmp_path / "repo"))})
        symbols = await _symbols(c, "Split tokens to one per line.")
        assert symbols[0] == "Syntax.highlight.line_tokenize", symbols
        assert not any(s.endswith("_helper") for s in await _symbols(c, "helper")), (
            "undocumented: not outlined"
        )


def _terms(mem: Memory) -> dict[str, str]:
    with mem.store.write(mem.namespace) as s:
        raw: Any = s  # the backend's own session, for its connection
        rows = raw.conn.execute(
            f"SELECT id, terms FROM segments WHERE namespace = '{mem.namespace}'"
        ).fetchall()
    return {r[0]: r[1] for r in rows}


def test_reindex_rebuilds_the_weighted_terms(make_settings: Any, namespace: str, tmp_path: Path) -> None:
    mem = Memory(make_settings(embedder="none"), namespace=namespace)
    try:
        mem.ingest("repo", {"path": str(_repo(tmp_path / "repo"))})
        stored = _terms(mem)
        receive = next(t for t in stored.values() if t.startswith("method websocketsession receiv pkg"))
        assert receive.split().count("event") >= 4  # the summary's terms count four times
        with mem.store.write(mem.namespace) as s:
            raw: Any = s  # the backend's own session, for its connection
            raw.conn.execute(f"UPDATE segments SET terms = NULL WHERE namespace = '{mem.namespace}'")
        mem.maintain("reindex", {}, {"apply": True})
        assert _terms(mem) == stored
    finally:
        mem.close()
