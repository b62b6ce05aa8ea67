"""The ``memory-substrate`` command: serve MCP, call any tool mode, inspect the store."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from memory_substrate.errors import MemorySubstrateError, ValidationError

EXIT_VALIDATION = 2
EXIT_ERROR = 1


def _settings(ctx: click.Context) -> Any:
    from memory_substrate.settings import Settings

    overrides = {k: v for k, v in ctx.obj.items() if v is not None}
    return Settings(**overrides)


def _memory(ctx: click.Context) -> Any:
    from memory_substrate.app import Memory

    return Memory(_settings(ctx))


def _load_json(value: str | None, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    text = value
    if value.startswith("@"):
        text = sys.stdin.read() if value == "@-" else Path(value[1:]).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValidationError(f"{what} must be a JSON object")
    return data


def _emit(result: Any, table: bool = False) -> None:
    if table and isinstance(result, dict) and isinstance(result.get("items"), list):
        from rich.console import Console
        from rich.table import Table

        t = Table(show_lines=False)
        for col in ("id", "object_type", "kind", "status", "title"):
            t.add_column(col)
        for item in result["items"]:
            t.add_row(*(str(item.get(c, item.get("segment_id", ""))) for c in ("id", "object_type", "kind", "status", "title")))
        Console().print(t)
        return
    click.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))


def _fail(exc: MemorySubstrateError) -> None:
    click.echo(f"error [{exc.code}]: {exc.message}", err=True)
    sys.exit(EXIT_VALIDATION if isinstance(exc, ValidationError) else EXIT_ERROR)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--root", type=click.Path(path_type=Path), default=None, envvar="MEMORY_SUBSTRATE_ROOT",
              help="Directory of the embedded store (default ~/memory-substrate).")
@click.option("--namespace", default=None, envvar="MEMORY_SUBSTRATE_NAMESPACE", help="Namespace to work in (default 'default').")
@click.option("--database-url", default=None, envvar="MEMORY_SUBSTRATE_DATABASE_URL",
              help="postgresql://... to use PostgreSQL instead of the embedded SQLite file.")
@click.option("--embedder", default=None, envvar="MEMORY_SUBSTRATE_EMBEDDER", help="Embedding provider: static (default) or none.")
@click.version_option(package_name="memory-substrate")
@click.pass_context
def main(ctx: click.Context, root: Path | None, namespace: str | None, database_url: str | None, embedder: str | None) -> None:
    """Durable, graph-based long-term memory for AI agents, served over MCP."""
    ctx.obj = {"root": root, "namespace": namespace, "database_url": database_url, "embedder": embedder}


@main.command()
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True, help="MCP transport.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", default=8765, show_default=True, type=int, help="HTTP port.")
@click.pass_context
def serve(ctx: click.Context, transport: str, host: str, port: int) -> None:
    """Run the MCP server (stdio by default)."""
    from memory_substrate.mcp.server import build_server

    memory = _memory(ctx)
    if transport == "http":
        from memory_substrate.mcp.http import serve_http

        serve_http(memory, host=host, port=port)
        return
    server = build_server(memory)
    try:
        server.run("stdio")
    finally:
        memory.close()


def _tool_command(tool: str, method: str, help_text: str) -> None:
    @main.command(name=tool, help=help_text)
    @click.argument("mode")
    @click.argument("input_data", required=False)
    @click.option("--options", "options_json", default=None, help="Options as JSON (or @file, @- for stdin).")
    @click.option("--table", is_flag=True, help="Print items as a table instead of JSON.")
    @click.pass_context
    def command(ctx: click.Context, mode: str, input_data: str | None, options_json: str | None, table: bool) -> None:
        try:
            memory = _memory(ctx)
            data = _load_json(input_data or "{}", "input_data")
            options = _load_json(options_json, "options")
            kwargs: dict[str, Any] = {}
            long_running = (method == "ingest" and mode in ("repo", "pdf")) or (method == "maintain" and mode == "reindex")
            if long_running and sys.stderr.isatty():
                kwargs["progress"] = _progress_bar()
            result = getattr(memory, method)(mode, data, options, **kwargs)
        except MemorySubstrateError as exc:
            _fail(exc)
            return
        _emit(result, table)


def _progress_bar() -> Any:
    from rich.progress import Progress

    progress = Progress(transient=True)
    task = progress.add_task("ingest", total=None)
    progress.start()

    def update(done: int, total: int, path: str) -> None:
        progress.update(task, completed=done, total=total, description=path[-40:])
        if done >= total:
            progress.stop()

    return update


_tool_command("ingest", "ingest", "Capture evidence: MODE is repo|file|markdown|web|pdf|conversation; INPUT_DATA is JSON (or @file).")
_tool_command("query", "query", "Read memory: MODE is search|context|page|expand|recent|graph; INPUT_DATA is JSON (or @file).")
_tool_command("remember", "remember", "Governed write: MODE is knowledge|activity|work_item|promote|supersede|contest|batch.")
_tool_command("maintain", "maintain", "Maintenance: MODE is structure|audit|report|configure|reindex|repair|... (mutations need apply).")


@main.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """Where the store is, its schema version and object counts."""
    try:
        with _memory(ctx) as memory:
            _emit(memory.status())
    except MemorySubstrateError as exc:
        _fail(exc)


@main.command()
@click.pass_context
def doctor(ctx: click.Context) -> None:
    """Check the installation: store, schema, embedder (loads the model once)."""
    try:
        with _memory(ctx) as memory:
            report = memory.status()
            report["semantic_backend"] = memory.runtime.semantic_status()
            report["ok"] = True
            _emit(report)
    except MemorySubstrateError as exc:
        _fail(exc)


@main.group()
def token() -> None:
    """Manage bearer tokens for the HTTP transport (each token is bound to one namespace)."""


@token.command(name="create")
@click.option("--namespace", "token_namespace", required=True, help="The namespace the token may use.")
@click.option("--label", default="", help="A note to recognise the token by (who or what uses it).")
@click.pass_context
def token_create(ctx: click.Context, token_namespace: str, label: str) -> None:
    """Print a new random token; only its sha256 is stored, so keep the printed value."""
    from memory_substrate.mcp.http import create_token
    from memory_substrate.storage.factory import open_store

    try:
        store = open_store(_settings(ctx))
        try:
            click.echo(create_token(store, token_namespace, label))
        finally:
            store.close()
    except MemorySubstrateError as exc:
        _fail(exc)


@main.command(name="export")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the export to FILE (default: stdout).")
@click.option("--no-vectors", is_flag=True, help="Leave vectors out (reindex rebuilds them).")
@click.pass_context
def export_command(ctx: click.Context, output: Path | None, no_vectors: bool) -> None:
    """Export the namespace as JSON Lines (format: docs/postgres.md); a summary goes to stderr."""
    from memory_substrate.storage.factory import open_store
    from memory_substrate.transfer import export_namespace

    try:
        settings = _settings(ctx)
        store = open_store(settings)
        try:
            if output is None:
                summary = export_namespace(store, settings.namespace, sys.stdout, vectors=not no_vectors)
            else:
                with output.open("w", encoding="utf-8") as fh:
                    summary = export_namespace(store, settings.namespace, fh, vectors=not no_vectors)
        finally:
            store.close()
    except MemorySubstrateError as exc:
        _fail(exc)
        return
    click.echo(json.dumps(summary, ensure_ascii=False), err=True)


@main.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def import_command(ctx: click.Context, file: Path) -> None:
    """Import an export FILE into an empty namespace: --namespace if given, else the file's own."""
    from memory_substrate.storage.factory import open_store
    from memory_substrate.transfer import import_namespace

    try:
        store = open_store(_settings(ctx))
        try:
            with file.open(encoding="utf-8") as fh:
                result = import_namespace(store, fh, namespace=ctx.obj.get("namespace"))
        finally:
            store.close()
    except MemorySubstrateError as exc:
        _fail(exc)
        return
    _emit(result)


from memory_substrate.cli.namespaces import namespace  # noqa: E402  (own module, registered here)

main.add_command(namespace)

if __name__ == "__main__":  # pragma: no cover
    main()
