"""Drive the real `memory-substrate serve` over stdio with the official SDK client."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers import call, entry_point, knowledge

pytestmark = pytest.mark.anyio


def _params(root: Path) -> StdioServerParameters:
    exe = entry_point()
    command, args = (
        (exe, ["serve"]) if exe else (sys.executable, ["-m", "memory_substrate.cli.main", "serve"])
    )
    env = {**os.environ, "MEMORY_SUBSTRATE_ROOT": str(root), "MEMORY_SUBSTRATE_NAMESPACE": "stdio-test"}
    return StdioServerParameters(command=command, args=args, env=env)


async def test_serve_over_stdio_and_data_survives_restart(tmp_path: Path) -> None:
    started = time.perf_counter()
    async with Client(stdio_client(_params(tmp_path))) as c:
        tools = {t.name for t in (await c.list_tools()).tools}
        first_list_s = time.perf_counter() - started
        assert tools == {"memory_ingest", "memory_query", "memory_remember", "memory_maintain"}
        assert len((await c.list_resources()).resources) == 3
        assert len((await c.list_prompts()).prompts) == 2
        out = await call(
            c, "memory_remember", "knowledge", knowledge(title="Survives restarts", summary="durable")
        )
        kid = out["object_id"]
    # Startup must not load an embedding model: tools/list comes back quickly.
    assert first_list_s < 10, first_list_s
    async with Client(stdio_client(_params(tmp_path))) as c:
        page = await call(c, "memory_query", "page", {"id": kid})
        assert page["object"]["title"] == "Survives restarts"
        status = await call(c, "memory_maintain", "structure", {})
        assert status["namespace"] == "stdio-test"


@pytest.mark.parametrize("command", ["stdio", "http", "inspect"])
def test_serve_freezes_what_it_lives_with_before_serving(tmp_path: Path, command: str) -> None:
    """`serve` (stdio, http) and `inspect` freeze their heap once built (memory_substrate.heap): the
    objects they live with (modules, the SDK's and our pydantic models) sit in the permanent
    generation, so the collector's full passes no longer walk them in the middle of a request.
    A program calling `serve_http` or `serve_inspector` itself keeps its collector as it is."""
    import json
    import subprocess

    from tests.inspect.browser import free_port

    runner = {
        "stdio": "from mcp.server.mcpserver import MCPServer as S\nS.run = report",
        "http": "import uvicorn\nuvicorn.Server.run = report",
        "inspect": "import uvicorn\nuvicorn.Server.run = report",
    }[command]
    port = str(free_port())  # the port is bound before the server runs
    args = (
        ["inspect", "--port", port]
        if command == "inspect"
        else ["serve", "--transport", command, "--port", port]
    )
    probe = (
        "import gc, json\n"
        "def report(*args, **kwargs):\n"
        "    print(json.dumps({'frozen': gc.get_freeze_count(), 'tracked': len(gc.get_objects())}))\n"
        f"{runner}\n"
        "from memory_substrate.cli.main import main\n"
        f"main({args!r}, standalone_mode=False)\n"
    )
    env = {**os.environ, "MEMORY_SUBSTRATE_ROOT": str(tmp_path), "MEMORY_SUBSTRATE_NAMESPACE": "heap-test"}
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["frozen"] > 20_000, seen  # the imported server's objects, frozen
    assert seen["tracked"] < seen["frozen"] / 10, seen  # left for the collector: what came after


def test_a_program_serving_http_itself_keeps_its_collector(tmp_path: Path) -> None:
    import json
    import subprocess

    from tests.inspect.browser import free_port

    probe = (
        "import gc, json, uvicorn\n"
        "uvicorn.Server.run = lambda self, *a, **k: print(json.dumps({'frozen': gc.get_freeze_count()}))\n"
        "from memory_substrate import Memory, Settings\n"
        "from memory_substrate.mcp.http import serve_http\n"
        f"serve_http(Memory(Settings(root={str(tmp_path)!r})), port={free_port()})\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"frozen": 0}
