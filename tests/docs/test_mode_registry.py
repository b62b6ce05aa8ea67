"""One declaration per mode (``validation.Mode`` in ``<service>/modes.py``): the services dispatch on
it, the MCP tools list it, docs/modes.md and ``memory-substrate modes`` render it, and reading it
runs nothing."""

from __future__ import annotations

import pytest
from mcp import Client

from memory_substrate import Memory, validation
from memory_substrate.ingest.service import IngestService
from memory_substrate.maintain.service import MaintainService
from memory_substrate.mcp.server import build_server
from memory_substrate.modes_reference import collect, declared, render
from memory_substrate.query.service import QueryService
from memory_substrate.remember.service import RememberService

SERVICES = {
    "memory_ingest": IngestService,
    "memory_query": QueryService,
    "memory_remember": RememberService,
    "memory_maintain": MaintainService,
}


def test_every_declared_mode_names_a_handler_of_its_service() -> None:
    for tool, modes in declared().items():
        assert modes and all(m.tool == tool for m in modes)
        assert len({m.name for m in modes}) == len(modes)
        for mode in modes:
            assert callable(getattr(SERVICES[tool], mode.handler, None)), (tool, mode.name, mode.handler)
            assert mode.help and "\n" not in mode.help, (tool, mode.name)


def test_the_reference_reads_the_declarations_without_opening_a_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memory_substrate.app as app

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the mode reference opened a store")

    monkeypatch.setattr(app.Memory, "__init__", refuse)
    monkeypatch.setattr(app.Memory, "open", refuse)
    entries = collect()
    assert len(entries) == sum(len(m) for m in declared().values())
    assert "### `search`" in render(entries)
    assert not hasattr(validation, "_observer"), (
        "no hook in production code tells the reference what is parsed"
    )


@pytest.mark.anyio
async def test_tools_list_the_declared_modes_with_their_help(memory: Memory) -> None:
    async with Client(build_server(memory)) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    for tool, modes in declared().items():
        listed = tools[tool]
        assert listed.input_schema["$defs"]["Args"]["properties"]["mode"]["enum"] == [m.name for m in modes]
        for mode in modes:
            assert f"{mode.name}" in (listed.description or "") and mode.help in (listed.description or ""), (
                mode.name
            )
        assert listed.annotations is not None
        assert listed.annotations.read_only_hint is (not any(m.writes for m in modes))


def test_an_undeclared_mode_is_refused_naming_the_declared_ones(memory: Memory) -> None:
    from memory_substrate.errors import UnsupportedModeError

    with pytest.raises(UnsupportedModeError, match="allowed: context, expand, page"):
        memory.query("nope", {})
