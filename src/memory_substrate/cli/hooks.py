"""``memory-substrate hook claude-code|codex`` (every hook event, the event on stdin) and
``memory-substrate backfill claude-code|codex [PATH]``.

Loaded only when one of them runs (cli/lazy.py), and importing only click at module level: a
hook runs on every prompt, and each event imports what it needs inside ``memory_substrate.hooks``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from memory_substrate.hooks.backfill import Progress

CLIENTS = ("claude-code", "codex")


@click.command(name="hook", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("client")
@click.pass_context
def hook(ctx: click.Context, client: str) -> None:
    """Run one hook event of CLIENT (claude-code or codex); the event's JSON arrives on stdin.

    SessionStart and UserPromptSubmit print the project's memory for the session or the prompt
    (or nothing); Stop, PreCompact and SessionEnd capture what the transcript gained. Always
    exits 0, printing nothing on any failure, which goes to <root>/logs/hooks.log (docs/hooks.md).
    """
    from memory_substrate.hooks.run import run

    run(client, dict(ctx.find_root().obj or {}))


@click.command(name="backfill")
@click.argument("client", type=click.Choice(CLIENTS))
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option(
    "--force",
    is_flag=True,
    help="Read every transcript again, even those unchanged since they were captured.",
)
@click.option(
    "--progress",
    "progress_kind",
    type=click.Choice(["auto", "json", "none"]),
    default="auto",
    help="Progress on stderr: a bar on a terminal (auto), JSON lines (json), or none.",
)
@click.pass_context
def backfill(ctx: click.Context, client: str, path: Path | None, force: bool, progress_kind: str) -> None:
    """Import the CLIENT's existing transcripts into memory, each into its project's namespace.

    PATH defaults to ~/.claude/projects (claude-code) or $CODEX_HOME/sessions, else ~/.codex/sessions
    (codex); a single transcript file works too. Idempotent: a second run adds nothing, and a
    transcript that grew appends only its new turns. Ends with a JSON summary (sessions, turns,
    skipped, errors, seconds); exits 1 when a transcript could not be imported.
    """
    from memory_substrate.cli.common import emit, fail
    from memory_substrate.errors import MemorySubstrateError, ValidationError
    from memory_substrate.hooks.backfill import backfill as run_backfill
    from memory_substrate.hooks.backfill import default_path, transcripts
    from memory_substrate.hooks.config import ConfigError, load
    from memory_substrate.hooks.events import Stores
    from memory_substrate.hooks.store_settings import store_overrides

    obj = dict(ctx.find_root().obj or {})
    try:
        config = load(obj.get("root"))
    except ConfigError as exc:
        fail(ValidationError(str(exc)))
        return
    where = (path or default_path(client)).expanduser()
    if not where.exists():
        fail(ValidationError(f"no transcripts at {where}: give the folder (or file) as PATH"))
        return
    found = transcripts(client, where)
    stores = Stores(config, store_overrides(obj), hook=False)
    try:
        summary = run_backfill(
            client, found, config, stores.memory, force=force, progress=_progress(progress_kind)
        )
    except MemorySubstrateError as exc:
        fail(exc)
        return
    finally:
        stores.close()
    emit({"client": client, "path": str(where), **summary.as_dict()})
    if summary.errors:
        sys.exit(1)


def _progress(kind: str) -> Progress | None:
    if kind == "json" or (kind == "auto" and sys.stderr.isatty()):
        from memory_substrate.cli.main import _progress_bar, _progress_lines

        return _progress_lines if kind == "json" else _progress_bar()
    return None
