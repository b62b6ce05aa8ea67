"""Test helpers: call tools through the official SDK client and decode results."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import CallToolResult, TextContent, TextResourceContents


def entry_point() -> str:
    """The ``memory-substrate`` console script installed beside the Python running the tests (its
    virtual environment's), or "" when there is none. Not ``shutil.which``: a PATH without the
    environment's bin directory can name another installation's script (a pyenv shim)."""
    exe = Path(sys.executable).with_name("memory-substrate")
    return str(exe) if exe.exists() else ""


def tool_error(text: str) -> dict[str, Any]:
    """A tool error's text, which must be exactly one JSON document {code, message, details}."""
    error = json.loads(text)
    assert isinstance(error, dict) and set(error) == {"code", "message", "details"}, text
    assert isinstance(error["code"], str) and error["code"].startswith("memory_"), text
    assert isinstance(error["message"], str) and isinstance(error["details"], dict), text
    assert "pydantic.dev" not in text and "Error executing tool" not in text, text
    return error


def text_of(block: object) -> str:
    """The text of one MCP content block (the SDK types a block as a union of kinds)."""
    assert isinstance(block, (TextContent, TextResourceContents)), block
    return block.text


def tool_result(result: object) -> CallToolResult:
    """A low-level server's ``call_tool`` answer, which here is always a ``CallToolResult``."""
    assert isinstance(result, CallToolResult), result
    return result


class ToolFailed(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text
        self.error: dict[str, Any] = tool_error(text)

    @property
    def code(self) -> str | None:
        return self.error.get("code")


async def call(
    client: Client, tool: str, mode: str, input_data: dict[str, Any], options: dict[str, Any] | None = None
) -> dict[str, Any]:
    args: dict[str, Any] = {"mode": mode, "input_data": input_data}
    if options is not None:
        args["options"] = options
    result = await client.call_tool(tool, {"args": args})
    if result.is_error:
        raise ToolFailed(result.content[0].text)  # type: ignore[union-attr]
    assert result.structured_content is not None
    content: dict[str, Any] = result.structured_content
    return content


def conversation(texts: list[str], title: str = "Chat", names: list[str] | None = None) -> dict[str, Any]:
    return {
        "title": title,
        "messages": [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": t,
                "name": (names or ["alice", "bob"])[i % len(names or ["alice", "bob"])],
                "created_at": f"2026-04-28T00:0{i % 10}:00+00:00",
                "metadata": {"turn": i},
            }
            for i, t in enumerate(texts)
        ],
        "origin": {"host": "codex", "project": "memory-substrate"},
    }


def knowledge(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": "fact",
        "title": "Repo uses Python",
        "summary": "Primary language is Python.",
        "reason": "The detected language changes future repository work.",
        "memory_source": "user_declared",
        "scope_refs": ["scope:project"],
    }
    data.update(overrides)
    return data


def short(full_id: str) -> str:
    """The form a context package shows a generated id in when no other object of its type in
    the namespace ends with the same 6 digits (ids.py): ``src:`` + the last 6 hex digits."""
    prefix, rest = full_id.split(":", 1)
    return f"{prefix}:{rest[-6:]}"


def xml_episodes(root: Any) -> list[tuple[str, str, list[str]]]:
    """The episodes of an XML context package: (episode id, its ``##`` header line, its turn lines
    with their continuation lines joined), read from the ``<episodes>`` element of ``root``."""
    block = root.find("episodes")
    lines = (block.text or "").strip("\n").split("\n") if block is not None else []
    joined: list[str] = []
    for line in lines:
        if line.startswith(" ") and joined:
            joined[-1] += "\n" + line[1:]
        else:
            joined.append(line)
    return episode_groups(joined)


def json_episodes(body: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """The same for a JSON package's ``memory_context`` (one list entry per header or turn)."""
    return episode_groups([line.replace("\n ", "\n") for line in body.get("episodes", [])])


def episode_groups(lines: list[str]) -> list[tuple[str, str, list[str]]]:
    out: list[tuple[str, str, list[str]]] = []
    for line in lines:
        if line.startswith("## "):
            out.append((line.split()[1], line, []))
        elif out:
            out[-1][2].append(line)
    return out
