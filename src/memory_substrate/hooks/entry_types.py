"""The entries a set-up writes into a client's own files: hook handlers and MCP server entries."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class CommandHandler(TypedDict):
    """A hook that runs our command: Claude Code's exec form (``command`` the executable,
    ``args`` its arguments), or Codex's one shell command line (no ``args``)."""

    type: str  # "command"
    command: str
    args: NotRequired[list[str]]
    timeout: int  # seconds


class HttpHandler(TypedDict):
    """A hook Claude Code posts itself to a running ``serve``, its token read from the environment."""

    type: str  # "http"
    url: str
    headers: dict[str, str]
    allowedEnvVars: list[str]
    timeout: int


HookHandler = CommandHandler | HttpHandler


class ClaudeServerEntry(TypedDict):
    """Our MCP server in Claude Code's ``mcpServers``."""

    type: str  # "stdio"
    command: str
    args: list[str]
    env: dict[str, str]


class CodexServerTable(TypedDict):
    """Our MCP server as Codex's ``[mcp_servers.<name>]`` table."""

    command: str
    args: list[str]
