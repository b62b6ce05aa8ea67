"""Record memory_query answers through the MCP server, byte for byte, to prove a refactor changes
nothing on the wire.

    python scripts/wire_record.py OUT.jsonl          # the installed tree
    PYTHONPATH=/path/to/other/src python scripts/wire_record.py OTHER.jsonl
    cmp OUT.jsonl OTHER.jsonl

It builds each agent-bench project memory (bench/data/agent/*.json) with fixed ids, then asks,
for every task, mode ``context`` (compact XML and JSON, with items, full) and ``search`` (object
and segment units, compact and full), and ``recent``, ``page``, ``expand`` and ``graph`` on what
the searches name. Every ``memory_ingest`` / ``memory_remember`` / ``memory_query`` call the
builder makes is recorded too, then the read-only and dry-run ``memory_maintain`` modes, the
graph modes and a few rejected inputs (the error envelope). Each answer is written as the text the client received. Timestamps, latency
figures, temporary paths and random conversation uris vary from run to run, so they are replaced
by placeholders; nothing else is. The store's dates are relative to the clock, so a compact
search page cut at its token budget can hold one item more or less in two runs of the same tree
(2 of 2,017 answers in one check): compare two runs of the old tree to see that noise.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import Client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from agent_bench import Builder  # noqa: E402

from memory_substrate import Memory, Settings  # noqa: E402
from memory_substrate.graph import deferred  # noqa: E402
from memory_substrate.mcp.server import build_server  # noqa: E402
from memory_substrate.util import fix_ids  # noqa: E402

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)?")
LATENCY = re.compile(r'("(?:latency_ms|took_ms|elapsed_ms|[a-z_]+_ms)":\s*)(\{[^{}]*\}|[0-9.]+)')


# A conversation ingested without a thread id gets a random uri, and its fingerprint hashes it.
CONVERSATION_URI = re.compile(r"conversation:[0-9a-f]{32}")
FINGERPRINT = re.compile(r'"fingerprint":"[0-9a-f]+"')


def normalise(text: str, tmp: str) -> str:
    text = CONVERSATION_URI.sub("conversation:<uuid>", text.replace(tmp, "<tmp>"))
    text = FINGERPRINT.sub('"fingerprint":"<sha256>"', text)
    return LATENCY.sub(r"\1<ms>", TIMESTAMP.sub("<time>", text))


def calls_for(task: str) -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
    return [
        ("context", {"task": task}, {"budget_tokens": 1500}),
        ("context", {"task": task}, {"budget_tokens": 1500, "format": "json"}),
        ("context", {"task": task}, {"budget_tokens": 800, "include_items": True}),
        ("context", {"task": task}, {"detail": "full"}),
        ("search", {"query": task}, None),
        ("search", {"query": task}, {"result_unit": "segment"}),
        ("search", {"query": task}, {"detail": "full", "max_items": 5}),
        ("search", {"query": task}, {"detail": "full", "max_items": 200}),  # agent_bench's baseline
    ]


async def answer(
    client: Client, tmp: str, mode: str, data: dict[str, Any], options: dict[str, Any] | None
) -> str:
    args: dict[str, Any] = {"mode": mode, "input_data": data}
    if options is not None:
        args["options"] = options
    result = await client.call_tool("memory_query", {"args": args})
    return normalise("\n".join(getattr(block, "text", "") for block in result.content), tmp)


class RecordingClient:
    """The SDK client, recording the text of every tool answer the builder receives."""

    def __init__(self, client: Client, tmp: str, out: list[str], stem: str) -> None:
        self.client, self.tmp, self.out, self.stem = client, tmp, out, stem

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        result = await self.client.call_tool(name, arguments)
        text = normalise("\n".join(getattr(block, "text", "") for block in result.content), self.tmp)
        self.out.append(json.dumps({"file": self.stem, "tool": name, "args": arguments, "text": text}))
        return result


MAINTAIN_CALLS: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    ("structure", {}, None),
    ("audit", {}, None),
    ("audit", {}, {"detail": "full", "max_items": 20}),
    ("report", {}, None),
    ("report", {}, {"detail": "full"}),
    ("promote_candidates", {}, None),
    ("merge_duplicates", {}, None),
    ("resolve_duplicates", {}, None),
    ("decay_stale", {}, None),
    ("expire", {}, None),
    ("cycle", {}, None),
    ("repair", {}, None),
    ("embed", {}, None),
    ("merge_entities", {}, None),
    ("report", {"unknown": 1}, None),
    ("nonexistent", {}, None),
]
QUERY_EXTRA: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = [
    ("entities", {}, None),
    ("facts", {}, None),
    ("recent", {}, {"detail": "full"}),
    ("search", {"query": ""}, None),
    ("page", {"id": "missing-id"}, None),
]


async def call_text(
    client: Client, tmp: str, tool: str, mode: str, data: dict[str, Any], options: Any
) -> str:
    args: dict[str, Any] = {"mode": mode, "input_data": data}
    if options is not None:
        args["options"] = options
    result = await client.call_tool(tool, {"args": args})
    return normalise("\n".join(getattr(block, "text", "") for block in result.content), tmp)


async def record_others(client: Client, tmp: str, out: list[str], stem: str) -> None:
    for tool, calls in (("memory_maintain", MAINTAIN_CALLS), ("memory_query", QUERY_EXTRA)):
        for mode, data, options in calls:
            text = await call_text(client, tmp, tool, mode, data, options)
            out.append(json.dumps({"file": stem, "tool": tool, "mode": mode, "args": data, "text": text}))


async def record_file(path: Path, out: list[str]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="wire-") as tmp:
        mem = Memory(Settings(root=Path(tmp) / "store", embedder="static"), namespace=f"wire-{path.stem}")
        fix_ids(mem.namespace)
        try:
            async with Client(build_server(mem)) as client:
                recording: Any = RecordingClient(client, tmp, out, path.stem)
                builder = Builder(recording, data, Path(tmp) / "files")
                # The store's times are relative to the builder's clock and land in the indexed
                # text ("[2026-10-11 02:44] ..."): start them at midnight so that two runs on one
                # day index the same words.
                builder.now = builder.now.replace(hour=0, minute=0, second=0, microsecond=0)
                await builder.run()
                deferred.drain_all(mem.runtime)  # every vector made: answers do not race the worker
                ids: list[str] = []
                for task in data["tasks"]:
                    for mode, args, options in calls_for(task["task"]):
                        text = await answer(client, tmp, mode, args, options)
                        out.append(
                            json.dumps(
                                {
                                    "file": path.stem,
                                    "mode": mode,
                                    "args": args,
                                    "options": options,
                                    "text": text,
                                }
                            )
                        )
                        if mode == "search" and options is None:
                            ids.extend(re.findall(r'"id":\s*"([^"]+)"', text)[:2])
                out.append(
                    json.dumps(
                        {
                            "file": path.stem,
                            "mode": "recent",
                            "text": await answer(client, tmp, "recent", {}, None),
                        }
                    )
                )
                for object_id in list(dict.fromkeys(ids))[:20]:
                    for mode in ("page", "expand", "graph"):
                        text = await answer(client, tmp, mode, {"id": object_id}, None)
                        out.append(
                            json.dumps({"file": path.stem, "mode": mode, "id": object_id, "text": text})
                        )
                await record_others(client, tmp, out, path.stem)
        finally:
            fix_ids(None)
            mem.close()


async def main(target: Path) -> None:
    out: list[str] = []
    for path in sorted((REPO / "bench" / "data" / "agent").glob("*.json")):
        await record_file(path, out)
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"{len(out)} answers -> {target}")


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") != "0":  # ties between equal scores fall the same way every run
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    asyncio.run(main(Path(sys.argv[1])))
