"""tools/list size per toolset: what an agent pays in context before its first call.

    .venv/bin/python bench/toolset_bench.py

Lists the tools of ``build_server(memory, toolset)`` through the SDK's in-process client and
prints, per toolset, the number of tools and the characters of the ``tools/list`` result as
JSON: compact (as sent on the wire) and with default separators (a looser upper bound).
Target (issue 11): ``--toolset all`` <= 16,000 characters (about 4k tokens). Exits 1 if missed.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET = 16_000


async def measure(toolset: str) -> tuple[int, int, int]:
    from mcp import Client

    from memory_substrate import Memory, Settings
    from memory_substrate.mcp.server import build_server

    with Memory(Settings(root=tempfile.mkdtemp(prefix="toolset-bench-"), embedder="none")) as memory:
        async with Client(build_server(memory, toolset)) as client:
            result = await client.list_tools()
    wire = result.model_dump_json(by_alias=True, exclude_none=True)
    loose = json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))
    return len(result.tools), len(wire), len(loose)


def main() -> None:
    sizes = {}
    for toolset in ("substrate", "graph", "all"):
        n, wire, loose = anyio.run(measure, toolset)
        sizes[toolset] = wire
        print(f"{toolset:10s} {n:3d} tools  tools/list {wire:6d} chars on the wire ({loose:6d} with spaces)")
    verdict = "met" if sizes["all"] <= TARGET else "MISSED"
    print(f"target: --toolset all <= {TARGET} chars: {verdict} ({sizes['all']})")
    sys.exit(0 if sizes["all"] <= TARGET else 1)


if __name__ == "__main__":
    main()
