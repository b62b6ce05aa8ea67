"""Time from spawning `memory-substrate serve` to its first tools/list answer, over stdio.

    .venv/bin/python bench/startup_bench.py [--runs 5]

Baseline in the same run: a bare SDK server (one trivial tool) started the same way, i.e. the
cost of Python plus the MCP SDK alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

BARE = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("bare")
@server.tool()
def ping() -> str:
    return "pong"
server.run("stdio")
"""


async def _first_list(params: StdioServerParameters) -> float:
    t = time.perf_counter()
    async with Client(stdio_client(params)) as c:
        await c.list_tools()
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    exe = shutil.which("memory-substrate") or str(Path(sys.executable).parent / "memory-substrate")
    ours, bare = [], []
    with tempfile.TemporaryDirectory() as root:
        env = {**os.environ, "MEMORY_SUBSTRATE_ROOT": root}
        for _ in range(args.runs):
            ours.append(anyio.run(_first_list, StdioServerParameters(command=exe, args=["serve"], env=env)))
            bare.append(
                anyio.run(
                    _first_list, StdioServerParameters(command=sys.executable, args=["-c", BARE], env=env)
                )
            )
    print(
        f"first tools/list median over {args.runs}: memory-substrate {statistics.median(ours):.2f}s  "
        f"bare SDK server {statistics.median(bare):.2f}s  ratio {statistics.median(ours) / statistics.median(bare):.2f}x"
    )


if __name__ == "__main__":
    main()
