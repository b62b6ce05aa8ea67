"""The ``memory-substrate`` command: serve MCP, call any tool mode, inspect the store."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memory_substrate.cli.common import EXIT_ERROR, emit_outcome
from memory_substrate.cli.common import emit as _emit
from memory_substrate.cli.common import fail as _fail
from memory_substrate.cli.common import load_json as _load_json
from memory_substrate.cli.common import open_memory as _memory
from memory_substrate.cli.common import settings_of as _settings
from memory_substrate.cli.global_options import accept_after_subcommands, checked
from memory_substrate.cli.lazy import LazyGroup
from memory_substrate.cli.modes import ToolCommand
from memory_substrate.errors import MemorySubstrateError
from memory_substrate.json_types import JsonObject
from memory_substrate.process import (
    STOP_HINT,
    exit_status,
    favour_short_calls,
    serving,
    stop_handlers,
    stop_requested,
)
from memory_substrate.version import __version__

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from memory_substrate.app import Memory
    from memory_substrate.cli.output_types import Progress, ProgressLine, ProgressOption, SemanticStatus
    from memory_substrate.settings import Settings


class _Group(LazyGroup):
    """Every failure ends as one line on stderr and exit 2 (usage) or 1 (runtime), never a traceback.

    Commands map ``MemorySubstrateError`` themselves; this net catches what escapes them (an OS
    error, a bug). ``MEMORY_SUBSTRATE_DEBUG=1`` lets the traceback through for bug reports.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        client = _hook_client(args[0] if args else kwargs.get("args"))
        if client is None:
            return self._main(*args, **kwargs)
        # Before numpy loads, if it does: OpenBLAS starts a thread per core at import, tens of
        # milliseconds of a cold hook, for products the embedders run on one thread anyway.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        # A hook never fails its client (exit 2 blocks the prompt): an environment or a command line
        # the group refuses, before the hook runs, ends as exit 0 and one line in the hooks' log.
        try:
            return self._main(*args, **kwargs)
        except SystemExit as exc:
            if exc.code in (0, None):
                raise
            _hook_log(
                client, f"exit {exc.code} before the hook ran: {getattr(exc, 'line', '') or 'see stderr'}"
            )
            sys.exit(0)

    def _main(self, *args: Any, **kwargs: Any) -> Any:
        # Usage errors as one line too (click prints usage, a hint and the error on three).
        kwargs["standalone_mode"] = False
        try:
            # Ctrl-C and SIGTERM stop any command within a deadline (memory_substrate.process).
            with stop_handlers():
                rv = super().main(*args, **kwargs)
            if isinstance(rv, int) and not isinstance(rv, bool) and rv != 0:
                sys.exit(rv)  # ctx.exit(n) returns n when not standalone: keep it the exit status
            return rv
        except click.exceptions.ClickException as exc:
            usage_ctx = getattr(exc, "ctx", None)
            where = f" (see {usage_ctx.command_path} --help)" if usage_ctx is not None else ""
            line = f"error [memory_usage_error]: {exc.format_message()}{where}"
            click.echo(line, err=True)
            exit_with = SystemExit(exc.exit_code)
            exit_with.line = line  # type: ignore[attr-defined]  # for the hooks' log
            raise exit_with from None
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            sys.exit(EXIT_ERROR)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
            raise
        except MemorySubstrateError as exc:
            _fail(exc)
        except KeyboardInterrupt:
            status = exit_status() if stop_requested() else 130
            if status:
                click.echo("interrupted", err=True)
            sys.exit(status)
        except Exception as exc:
            if os.environ.get("MEMORY_SUBSTRATE_DEBUG"):
                raise
            if isinstance(exc, OSError):
                where = f" ({exc.filename})" if exc.filename else ""
                click.echo(f"error [memory_storage_error]: {exc.strerror or exc}{where}", err=True)
            else:
                click.echo(
                    f"error [memory_internal_error]: {type(exc).__name__}: {exc} "
                    "(rerun with MEMORY_SUBSTRATE_DEBUG=1 for the traceback)",
                    err=True,
                )
            sys.exit(EXIT_ERROR)


_GLOBAL_VALUED = ("--root", "--namespace", "--database-url", "--embedder")


def _hook_client(argv: Iterable[object] | None) -> str | None:
    """The client of a ``hook`` command line (``[global options] hook CLIENT ...``), '' when it
    names none; None when the command is not ``hook``."""
    words = list(sys.argv[1:] if argv is None else argv)
    i = 0
    while i < len(words):
        word = str(words[i])
        if word in _GLOBAL_VALUED:
            i += 2
            continue
        if word.startswith("-"):  # --root=R, or an option the group will refuse
            i += 1
            continue
        if word != "hook":
            return None
        rest = [str(w) for w in words[i + 1 :] if not str(w).startswith("-")]
        return rest[0] if rest else ""
    return None


def _hook_log(client: str, message: str) -> None:
    try:
        from memory_substrate.hooks.failopen import HookLog
        from memory_substrate.hooks.run import _root

        HookLog(_root({}), client or "-").write(message)
    except Exception:  # the log is best effort: the exit status is what the client acts on
        pass


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    type=click.Path(path_type=Path),
    default=None,
    envvar="MEMORY_SUBSTRATE_ROOT",
    help="Directory of the embedded store (default ~/memory-substrate).",
)
@click.option(
    "--namespace",
    default=None,
    envvar="MEMORY_SUBSTRATE_NAMESPACE",
    help="Namespace to work in (default 'default').",
)
@click.option(
    "--database-url",
    default=None,
    envvar="MEMORY_SUBSTRATE_DATABASE_URL",
    help="A postgresql:// URL: use PostgreSQL instead of the embedded SQLite file.",
)
@click.option(
    "--embedder",
    default=None,
    envvar="MEMORY_SUBSTRATE_EMBEDDER",
    help="Embedding provider: use-gated (default), static-multilingual, static, none, or another registered one.",
)
# The version from version.py, not the package metadata: importing importlib.metadata costs more
# than the rest of `--version` (tests/cli/test_startup.py checks the two agree).
@click.version_option(version=__version__)
@click.pass_context
def main(
    ctx: click.Context,
    root: Path | None,
    namespace: str | None,
    database_url: str | None,
    embedder: str | None,
) -> None:
    """Durable, graph-based long-term memory for AI agents, served over MCP."""
    # Also accepted after the command's name (cli/global_options.py), checked the same way.
    if ctx.invoked_subcommand == "hook":
        # The hooks take their namespace from the project and their root as hooks/run.py reads it:
        # a global value they do not use, or cannot use, must not stop them.
        try:
            root = checked("root", root)
        except click.BadParameter:
            root = None
        ctx.obj = {"root": root, "namespace": None, "database_url": database_url, "embedder": embedder}
        return
    ctx.obj = {
        "root": checked("root", root),
        "namespace": checked("namespace", namespace),
        "database_url": database_url,
        "embedder": embedder,
    }


@main.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="MCP transport. stdio serves one client in --namespace. http serves many clients at "
    "http://HOST:PORT/mcp; each request needs 'Authorization: Bearer TOKEN', and the token "
    "(made with `memory-substrate token create --namespace NS`) decides the namespace.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="HTTP bind address. Keep loopback unless a TLS proxy sits in front.",
)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535), help="HTTP port.")
@click.option(
    "--toolset",
    type=click.Choice(["substrate", "graph", "all"]),
    default="substrate",
    show_default=True,
    envvar="MEMORY_SUBSTRATE_TOOLSETS",
    help="Tools to serve: spec 001 (substrate), spec 002 (graph) or both.",
)
@click.option(
    "--inspector",
    is_flag=True,
    help="With --transport http: also serve the web inspector at /inspect/ (same tokens).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="A name clients may reach this server by (a Host header) besides its bound address, e.g. "
    "mem.example.com or mem.example.com:443; repeatable. Other Host headers get 421 (docs/security.md).",
)
@click.option(
    "--allow-path",
    "allow_paths",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory that path-taking modes (file, markdown, repo, pdf) may read; repeatable. Over http "
    "nothing is readable without it; over stdio it restricts reads to these directories.",
)
@click.option(
    "--project",
    "project_namespace",
    is_flag=True,
    help="With stdio: serve the namespace of the project holding the current directory, the one "
    "the hooks capture into (docs/hooks.md), unless --namespace names one. `setup` registers this.",
)
@click.pass_context
def serve(
    ctx: click.Context,
    transport: str,
    host: str,
    port: int,
    toolset: str,
    inspector: bool,
    allowed_hosts: tuple[str, ...],
    allow_paths: tuple[Path, ...],
    project_namespace: bool,
) -> None:
    """Run the MCP server (stdio by default).

    Over http, requests without a valid bearer token get 401 before reaching any tool; tokens are
    stored as sha256 only, so keep the value `token create` prints. See docs/postgres.md.
    When an extraction model is configured (MEMORY_SUBSTRATE_LLM_*), the server drains the
    extraction queue in the background.
    """
    from memory_substrate.graph.background import start_background_extraction
    from memory_substrate.heap import freeze_long_lived
    from memory_substrate.mcp.server import build_server

    if project_namespace and transport == "http":
        raise click.UsageError("--project is for stdio: over http each token decides its namespace")
    if project_namespace and not ctx.obj.get("namespace"):
        _use_project_namespace(ctx)
    memory = _serving_memory(ctx, transport, host, allow_paths)
    store = memory.store  # its location is a file path or a URL with the password redacted
    describe = (
        f"store={store.backend}:{store.location} namespace={memory.runtime.namespace} toolset={toolset}"
    )
    server = build_server(memory, toolset) if transport != "http" else None
    # What this process lives with, out of the collector's full passes (memory_substrate.heap),
    # before any background thread holds anything of its own.
    freeze_long_lived()
    favour_short_calls()  # a read beside slow calls waits less for the GIL (memory_substrate.process)
    start_background_extraction(memory.runtime)
    if server is None:
        from memory_substrate.mcp.http import serve_http

        # Frozen once more when its app is built (the extraction loop waits before its first drain).
        # The start-up line comes once the port is held: a busy one is a single error line instead.
        serve_http(
            memory,
            host=host,
            port=port,
            toolset=toolset,
            inspector=inspector,
            freeze_heap=True,
            describe=describe,
            allowed_hosts=allowed_hosts,
        )
        return
    _serve_stdio(memory, server, describe)


def _use_project_namespace(ctx: click.Context) -> None:
    """Serve the namespace of the project holding the current directory, as the hooks do."""
    from memory_substrate.errors import ValidationError
    from memory_substrate.hooks.config import ConfigError, load
    from memory_substrate.hooks.project import project_namespace as namespace_of

    try:
        ctx.obj = {**ctx.obj, "namespace": namespace_of(Path.cwd(), load(ctx.obj.get("root")))}
    except ConfigError as exc:
        raise ValidationError(f"the hooks' config: {exc}") from None


def _serving_memory(ctx: click.Context, transport: str, host: str, allow_paths: tuple[Path, ...]) -> Memory:
    """The ``Memory`` to serve, its settings given the readable directories; over http, a public
    bind with no token is refused before anything starts."""
    from memory_substrate.app import Memory

    settings = _settings(ctx)
    if transport == "http" or allow_paths:
        # Over http callers are not the machine's user: no filesystem unless allowed (docs/security.md).
        settings = settings.model_copy(update={"allow_paths": [*(settings.allow_paths or []), *allow_paths]})
    memory = Memory(settings)
    if transport == "http":
        from memory_substrate.mcp.http import public_bind_check

        try:  # a public bind with no token refuses before anything is printed: one line, exit 2
            public_bind_check(memory.store, host)
        except MemorySubstrateError:
            memory.close()
            raise
    return memory


def _serve_stdio(memory: Memory, server: MCPServer, describe: str) -> None:
    """Serve over stdio until end of input or Ctrl-C, then close the store."""
    serving()
    click.echo(
        f"memory-substrate serve: transport=stdio {describe} ({STOP_HINT}; Ctrl-D, end of input, too)",
        err=True,
    )
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass  # asked to stop: the store is closed below
    finally:
        memory.close()


def _tool_command(tool: str, method: str, what: str) -> None:
    @main.command(name=tool, cls=ToolCommand, tool=tool, what=what)
    @click.argument("mode")
    @click.argument("input_data", required=False)
    @click.option("--options", "options_json", default=None, help="Options as JSON (or @file, @- for stdin).")
    @click.option("--table", is_flag=True, help="Print items as a table instead of JSON.")
    @click.option(
        "--progress",
        "progress_kind",
        type=click.Choice(["auto", "json", "none"]),
        default="auto",
        help="Progress of long runs on stderr: a bar on a terminal (auto), JSON lines (json), or none.",
    )
    @click.pass_context
    def command(
        ctx: click.Context,
        mode: str,
        input_data: str | None,
        options_json: str | None,
        table: bool,
        progress_kind: str,
    ) -> None:
        try:
            data = _load_json(input_data or "{}", "input_data")
            options = _load_json(options_json, "options")
            memory = _memory(ctx)
            kwargs: ProgressOption = {}
            long_running = (method == "ingest" and mode in ("repo", "pdf")) or (
                method == "maintain" and mode in ("reindex", "extract")
            )
            if long_running and progress_kind == "json":
                kwargs["progress"] = _progress_lines
            elif long_running and progress_kind == "auto" and sys.stderr.isatty():
                kwargs["progress"] = _progress_bar()
            result = getattr(memory, method)(mode, data, options, **kwargs)
        except MemorySubstrateError as exc:
            _fail(exc)
            return
        emit_outcome(result, table)


def _progress_bar() -> Progress:
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    progress = Progress(console=console, transient=True)
    task = progress.add_task("ingest", total=None)
    progress.start()

    def update(done: int, total: int, path: str) -> None:
        kind, _, rest = path.partition(":")
        description = path[-40:]
        if kind == "extract":  # one line per finished episode stays above the bar
            description = f"extract {done}/{total}"
            if ":" in rest:
                episode_id, _, outcome = rest.rpartition(":")
                progress.console.print(
                    f"extract {done}/{total} {episode_id}: {outcome}", highlight=False, markup=False
                )
        progress.update(task, completed=done, total=total, description=description)
        if done >= total:
            progress.stop()

    return update


def _progress_lines(done: int, total: int, phase: str) -> None:
    """``--progress json``: one JSON object a line on stderr per step."""
    line: ProgressLine = {"done": done, "total": total, "phase": phase}
    kind, _, rest = phase.partition(":")
    if kind == "extract" and ":" in rest:
        line["episode_id"], _, line["outcome"] = rest.rpartition(":")
    click.echo(json.dumps(line), err=True)


_tool_command("ingest", "ingest", "Capture evidence as a source with addressable segments.")
_tool_command("query", "query", "Read memory: search, task context, pages, neighbours, recent items, graph.")
_tool_command(
    "remember",
    "remember",
    "Governed write of durable memory, or a lifecycle change (promote, supersede, contest, batch).",
)
_tool_command(
    "maintain",
    "maintain",
    "Inspect and maintain the store. Modes that change state plan only (a dry run) unless "
    "--options '{\"apply\": true}'.",
)


@main.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """Where the store is, its schema version and object counts. Creates nothing: a root with no
    store yet is an error (exit 1), and so is an unknown embedder (exit 2)."""
    from contextlib import closing

    from memory_substrate.app import Memory
    from memory_substrate.embed.registry import require_known
    from memory_substrate.storage.factory import open_store

    try:
        settings = _settings(ctx)
        require_known(settings.embedder)
        with closing(open_store(settings, create=False)) as store:
            _emit(Memory(settings, store=store).status())
    except MemorySubstrateError as exc:
        _fail(exc)


@main.command()
@click.pass_context
def doctor(ctx: click.Context) -> None:
    """Check the installation: store, schema, embedder (loads the model once).

    Prints a report whose "ok" is false, and exits 1, when something is wrong (an unknown or
    unavailable embedder, a store that cannot be opened, stored rows whose JSON reads cannot use);
    "problems" says what. Creates nothing.
    """
    from contextlib import closing

    from memory_substrate.app import Memory
    from memory_substrate.derived.mirrored_store import mirrored
    from memory_substrate.embed.registry import DISABLED_NAMES, require_known
    from memory_substrate.errors import NotFoundError
    from memory_substrate.runtime import Runtime
    from memory_substrate.storage.factory import open_store

    settings = _settings(ctx)
    problems: list[str] = []
    report: JsonObject = {"namespace": settings.namespace}
    semantic: Mapping[str, object]
    try:
        require_known(settings.embedder)
    except MemorySubstrateError as exc:
        problems.append(exc.message)
    try:
        with closing(mirrored(open_store(settings, create=False), settings)) as store:
            runtime = Runtime(store, settings.namespace, settings)
            memory = Memory(settings, store=store, runtime=runtime)
            report.update(memory.status())
            semantic = runtime.semantic_status()
            # Derived indexes (Kùzu, LanceDB, FalkorDB) that are unbuilt, failing or behind.
            derived = memory.maintain("structure", {}, {}).get("derived_backends") or {}
            if derived:
                report["derived_backends"] = derived
                problems.extend(derived.get("problems") or [])
            # Rows an older release stored with NaN or Infinity, which break the searches touching them.
            from memory_substrate.maintain.repair import stored_json_health

            if (stored := stored_json_health(runtime)) is not None:
                report["stored_json"] = stored
                problems.append(stored["problem"])
    except NotFoundError as exc:
        # Not a fault: a fresh install has no store until the first write.
        report["storage"] = {"location": exc.details.get("location"), "exists": False}
        semantic = _semantic_without_store(settings)
    except MemorySubstrateError as exc:
        problems.append(f"store: {exc.message}")
        semantic = _semantic_without_store(settings)
    from memory_substrate.ingest.pathpolicy import PathPolicy

    report["filesystem"] = {
        **PathPolicy.from_settings(settings).describe(),
        "http": "no filesystem access unless `serve --allow-path DIR` or MEMORY_SUBSTRATE_ALLOW_PATHS",
    }
    report["embedder"] = settings.embedder
    report["semantic_backend"] = semantic
    if not semantic["enabled"] and settings.embedder.strip().lower() not in DISABLED_NAMES and not problems:
        problems.append(f"embedder {settings.embedder!r} is unavailable: {semantic.get('reason')}")
    report["ok"] = not problems
    report["problems"] = problems
    _emit(report)
    if problems:
        sys.exit(EXIT_ERROR)


def _semantic_without_store(settings: Settings) -> SemanticStatus:
    from memory_substrate.runtime import _build_embedder

    embedder, error = _build_embedder(settings)
    if embedder is None:
        return {"enabled": False, "provider": settings.embedder, "reason": error or "disabled"}
    return {
        "enabled": True,
        "provider": settings.embedder,
        "model": embedder.name,
        "dimensions": embedder.dimensions,
    }


@main.command(name="export")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the export to FILE (default: stdout).",
)
@click.option("--no-vectors", is_flag=True, help="Leave vectors out (reindex rebuilds them).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "graph.v1", "mcp-memory"]),
    default="jsonl",
    show_default=True,
    help="jsonl: the full backup format; graph.v1: a markitect.memory.graph.v1 snapshot (docs/contracts.md); mcp-memory: the reference MCP memory server's file.",
)
@click.option(
    "--query", default=None, help="graph.v1 only: export just the objects a search for QUERY returns."
)
@click.option("--force", is_flag=True, help="Overwrite the --output file if it exists (refused without).")
@click.pass_context
def export_command(
    ctx: click.Context, output: Path | None, no_vectors: bool, fmt: str, query: str | None, force: bool
) -> None:
    """Export the namespace as JSON Lines (format: docs/postgres.md), a graph.v1 snapshot or an
    mcp-memory file (entities sharing a name are written as one: the reference server keys them by
    name); a summary goes to stderr. An existing --output file is kept unless --force."""
    from memory_substrate.errors import ValidationError
    from memory_substrate.runtime import Runtime
    from memory_substrate.storage.factory import open_store
    from memory_substrate.transfer import export_namespace

    if output is not None and output.is_file() and not force:
        _fail(
            ValidationError(f"{output} exists; pass --force to overwrite it", details={"path": str(output)})
        )
        return
    if fmt == "graph.v1" or query is not None:
        from memory_substrate.cli.contracts import export_graph

        export_graph(ctx, output, query, _settings, _fail)
        return
    try:
        if fmt == "mcp-memory":
            from memory_substrate.cli.inspect_import import export_mcp_memory_to

            with _memory(ctx) as memory:
                click.echo(json.dumps(export_mcp_memory_to(memory, output)), err=True)
            return
        settings = _settings(ctx)
        store = open_store(settings)
        try:
            runtime = Runtime(store, settings.namespace, settings)
            if output is None:
                summary = export_namespace(runtime, sys.stdout, vectors=not no_vectors)
            else:
                # Written beside the target and moved over it whole: an export that stops (a record
                # it refuses to write, a full disk) leaves no half file, and a --force target intact.
                partial = output.with_name(output.name + ".partial")
                try:
                    with partial.open("w", encoding="utf-8") as fh:
                        summary = export_namespace(runtime, fh, vectors=not no_vectors)
                    partial.replace(output)
                finally:
                    partial.unlink(missing_ok=True)
        finally:
            store.close()
    except MemorySubstrateError as exc:
        _fail(exc)
        return
    click.echo(json.dumps(summary, ensure_ascii=False), err=True)


@main.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--scope", "scopes", multiple=True, help="graph.v1 only: scope ref for nodes without one (repeatable)."
)
@click.option(
    "--reason", default=None, help="graph.v1 only: reason recorded on imported objects that carry none."
)
@click.pass_context
def import_command(ctx: click.Context, file: Path, scopes: tuple[str, ...], reason: str | None) -> None:
    """Import FILE: a JSON Lines export into an empty namespace (--namespace if given, else the file's own),
    or a graph.v1 snapshot (YAML or JSON) into the namespace through governed writes."""
    from memory_substrate.cli.contracts import import_graph, is_graph_snapshot
    from memory_substrate.runtime import Runtime
    from memory_substrate.storage.factory import open_store
    from memory_substrate.transfer import import_namespace

    try:
        graph = is_graph_snapshot(file)
    except MemorySubstrateError as exc:
        _fail(exc)
        return
    if graph:
        import_graph(ctx, file, scopes, reason, _memory, _emit, _fail)
        return
    try:
        settings = _settings(ctx)
        store = open_store(settings)
        try:
            with file.open(encoding="utf-8") as fh:
                result = import_namespace(
                    Runtime(store, settings.namespace, settings), fh, namespace=ctx.obj.get("namespace")
                )
        finally:
            store.close()
    except MemorySubstrateError as exc:
        _fail(exc)
        return
    _emit(result)


# lazily loaded commands: each module is imported only when its command runs or --help lists it
# (cli/lazy.py); one line per command, "module:attribute" of its click object.
main.lazy("modes", "memory_substrate.cli.modes:modes_command")
main.lazy("contracts", "memory_substrate.cli.contracts:contracts")
main.lazy("falkordb-server", "memory_substrate.cli.derived:falkordb_server")
main.lazy("graph", "memory_substrate.cli.derived:graph")
main.lazy("inspect", "memory_substrate.cli.inspect_import:inspect_command")
main.lazy("import-from", "memory_substrate.cli.inspect_import:import_from")
main.lazy("namespace", "memory_substrate.cli.namespaces:namespace")
main.lazy("token", "memory_substrate.cli.tokens:token")
main.lazy("setup", "memory_substrate.cli.setup:setup")
main.lazy("hook", "memory_substrate.cli.hooks:hook")
main.lazy("backfill", "memory_substrate.cli.hooks:backfill")
accept_after_subcommands(main)  # each command, lazy ones as they load, gets the global options

if __name__ == "__main__":  # pragma: no cover
    main()
