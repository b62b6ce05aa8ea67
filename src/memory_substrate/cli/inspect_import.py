"""CLI commands ``inspect`` (the web inspector) and ``import-from`` (other memory tools' formats)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memory_substrate.cli.common import fail, open_memory
from memory_substrate.errors import MemorySubstrateError

if TYPE_CHECKING:
    from memory_substrate.app import Memory
    from memory_substrate.importers.common import Progress
    from memory_substrate.importers.result_types import ExportCounts, ImportResult


def _progress(description: str) -> tuple[Progress | None, Callable[[], None]]:
    """A rich progress bar on stderr when it is a terminal; (callback, stop) or (None, no-op)."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(description, total=None)
    bar.start()

    def update(done: int, total: int, label: str) -> None:
        bar.update(task, completed=done, total=total, description=f"{description}: {label[-40:]}")

    return update, bar.stop


@click.command(name="inspect")
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address (loopback by default).")
@click.option(
    "--port",
    default=8766,
    show_default=True,
    type=click.IntRange(1, 65535),
    help="HTTP port (the HTTP transport's default is 8765, so both can run at once).",
)
@click.option(
    "--require-token",
    is_flag=True,
    help="Ask for an HTTP-transport bearer token (sign-in form or Authorization header) and show only its namespace.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="A name clients may reach this server by (a Host header) besides its bound address, e.g. "
    "mem.example.com or mem.example.com:443; repeatable. Other Host headers get 421 (docs/security.md).",
)
@click.pass_context
def inspect_command(
    ctx: click.Context, host: str, port: int, require_token: bool, allowed_hosts: tuple[str, ...]
) -> None:
    """Serve the read-only web inspector for this store (every namespace, or the token's)."""
    from memory_substrate.errors import ValidationError
    from memory_substrate.hosts import is_loopback
    from memory_substrate.inspector import serve_inspector
    from memory_substrate.mcp.http import public_bind_check

    if not is_loopback(host) and not require_token:
        fail(
            ValidationError(
                f"inspect on the non-loopback address {host!r} needs --require-token: without it "
                "every namespace is shown to anyone who can reach this port (docs/security.md)"
            )
        )
        return
    try:
        memory = open_memory(ctx)
        try:
            line = public_bind_check(memory.store, host, "inspect")
        except MemorySubstrateError:
            memory.close()
            raise
        if line:
            click.echo(line, err=True)
        serve_inspector(
            memory,
            host=host,
            port=port,
            require_token=require_token,
            freeze_heap=True,
            allowed_hosts=allowed_hosts,
        )
    except MemorySubstrateError as exc:
        fail(exc)


@click.group(name="import-from")
def import_from() -> None:
    """Import memory from another tool; every write is a governed patch (memory_source: imported)."""


@import_from.command(name="mcp-memory")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--scope", default="scope:imported", show_default=True, help="Scope of the imported memory.")
@click.pass_context
def import_mcp(ctx: click.Context, file: Path, scope: str) -> None:
    """Import the reference MCP memory server's JSON Lines FILE (entities, observations, relations)."""
    from memory_substrate.importers.mcp_memory import import_mcp_memory

    _run(ctx, lambda mem, progress: import_mcp_memory(mem, file, scope=scope, progress=progress), file.name)


@import_from.command(name="markdown")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--scope", default="scope:imported", show_default=True, help="Scope of the imported memory.")
@click.pass_context
def import_md(ctx: click.Context, directory: Path, scope: str) -> None:
    """Import a folder of Markdown notes (Obsidian, basic-memory): notes, [[links]] and #tags."""
    from memory_substrate.importers.markdown_notes import import_markdown

    _run(
        ctx,
        lambda mem, progress: import_markdown(mem, directory, scope=scope, progress=progress),
        directory.name,
    )


def _run(ctx: click.Context, job: Callable[[Memory, Progress | None], ImportResult], label: str) -> None:
    update, stop = _progress(f"importing {label}")
    try:
        with open_memory(ctx) as mem:
            result = job(mem, update)
    except MemorySubstrateError as exc:
        stop()
        fail(exc)
        return
    stop()
    click.echo(json.dumps(result, indent=2, ensure_ascii=False))


def export_mcp_memory_to(memory: Memory, output: Path | None) -> ExportCounts:
    """``export --format mcp-memory``: the namespace as the reference MCP memory server's file."""
    from memory_substrate.importers.mcp_memory import export_mcp_memory

    if output is None:
        return export_mcp_memory(memory, sys.stdout)
    with output.open("w", encoding="utf-8") as fh:
        return export_mcp_memory(memory, fh)
