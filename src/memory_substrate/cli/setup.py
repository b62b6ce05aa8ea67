"""``memory-substrate setup claude-code|codex``: our hooks and MCP server in a client's own config.

It merges with what is there (the user's other hooks, servers and settings stay as they are), a
second run changes nothing and says so, and ``--remove`` takes out exactly what it added. What
goes where is in memory_substrate/hooks/setup_claude.py and setup_codex.py, and in docs/setup.md.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memory_substrate.cli.common import EXIT_ERROR

if TYPE_CHECKING:
    from memory_substrate.hooks.setup_plan import Report

_VERBS = {"create": "created", "update": "updated", "delete": "deleted", "unchanged": "unchanged"}
_DRY = {
    "create": "would create",
    "update": "would update",
    "delete": "would delete",
    "unchanged": "unchanged",
}


@click.command(name="setup")
@click.argument("client", type=click.Choice(["claude-code", "codex"]))
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The project to set up (default: the git root of the current folder, else the folder).",
)
@click.option(
    "--user",
    "user_scope",
    is_flag=True,
    help="Set up for every project of this user instead of one (the client's user-level config).",
)
@click.option(
    "--plugin",
    "plugin",
    is_flag=True,
    help="Codex: have Codex trust the hooks of the installed memory-substrate plugin (writes no hooks or "
    "server of its own). Claude Code runs a plugin's hooks without such a step.",
)
@click.option(
    "--remove", is_flag=True, help="Take out exactly what setup added (hooks, MCP server, Codex's trust)."
)
@click.option("--dry-run", is_flag=True, help="Print what would change and change nothing.")
@click.option(
    "--server-name",
    default="memory-substrate",
    show_default=True,
    help="Name of the MCP server entry (its tools show as mcp__NAME__memory_query, ...).",
)
@click.option(
    "--codex-bin",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The codex executable that trusts the hooks (default: codex on PATH).",
)
@click.option(
    "--serve-url",
    default=None,
    help="Claude Code: have Claude Code post each prompt (UserPromptSubmit) straight to this running "
    "`serve --transport http` (e.g. http://127.0.0.1:8765) instead of starting the hook command for "
    "it; its token comes from MEMORY_SUBSTRATE_HOOK_TOKEN.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def setup(
    ctx: click.Context,
    client: str,
    directory: Path | None,
    user_scope: bool,
    plugin: bool,
    remove: bool,
    dry_run: bool,
    server_name: str,
    codex_bin: Path | None,
    serve_url: str | None,
    as_json: bool,
) -> None:
    """Write memory-substrate's hooks and MCP server into Claude Code's or Codex's config.

    Every session is then captured and each prompt handed its context (docs/hooks.md). Hook
    commands are the absolute path of this installation's memory-substrate. For Codex, setup
    also has Codex trust the hooks through its own app-server, or says the one step left.
    Exits 1 when a step is left to the user.
    """
    from memory_substrate.hooks import config_files, setup_claude, setup_codex
    from memory_substrate.hooks.project import project_root
    from memory_substrate.hooks.setup_plan import Request, ephemeral_note, installed_script

    if directory is not None and user_scope:
        raise click.UsageError("--dir and --user are exclusive: a set-up is for one project or for every one")
    if plugin and (directory is not None or user_scope):
        raise click.UsageError(
            "--plugin is on its own: the plugin's hooks are wherever the client installed it"
        )
    if serve_url is not None and client != "claude-code":
        raise click.UsageError("--serve-url is for Claude Code: Codex runs only command hooks")
    if serve_url is not None and not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", serve_url):
        raise click.BadParameter("an http(s) URL such as http://127.0.0.1:8765", param_hint="--serve-url")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", server_name):
        raise click.BadParameter("letters, digits, '-' and '_' only", param_hint="--server-name")
    obj = ctx.obj or {}
    global_args: list[str] = []
    if obj.get("root") is not None:
        global_args += ["--root", str(Path(obj["root"]).expanduser().absolute())]
    script = installed_script()
    req = Request(
        client=client,  # type: ignore[arg-type]
        scope="user" if user_scope or plugin else "project",
        project=None if user_scope or plugin else project_root(directory or Path.cwd()),
        remove=remove,
        script=script,
        global_args=tuple(global_args),
        server_name=server_name,
        plugin=plugin,
        serve_url=serve_url,
    )
    module = setup_claude if client == "claude-code" else setup_codex
    report = module.plan(req)
    if not remove:
        note = ephemeral_note(script)
        if note:
            report.notes.insert(0, note)
        if obj.get("namespace"):
            report.notes.append(
                "--namespace is not written into the hooks: each project gets its own namespace "
                "(for one namespace everywhere set MEMORY_SUBSTRATE_HOOK_NAMESPACE; docs/hooks.md)"
            )
    if not dry_run:
        config_files.apply(report.edits)
        if client == "codex" and not remove:
            setup_codex.secure_trust(req, report, setup_codex.find_codex(codex_bin))
    elif client == "codex" and not remove:
        report.notes.append("a dry run does not ask Codex to trust the hooks")
    if as_json:
        click.echo(json.dumps({**report.to_dict(), "dry_run": dry_run}, indent=2, ensure_ascii=False))
    else:
        _print(report, dry_run)
    if report.steps:
        sys.exit(EXIT_ERROR)


def _print(report: Report, dry_run: bool) -> None:
    from memory_substrate.hooks.setup_plan import CLIENT_NAMES

    verbs = _DRY if dry_run else _VERBS
    click.echo(f"{CLIENT_NAMES[report.client]}, {report.where}:")
    for edit in report.edits:
        click.echo(f"  {verbs[edit.action]:<13} {edit.what}")
    for done in report.done:
        click.echo(f"  {'done':<13} {done}")
    for note in report.notes:
        click.echo(f"  {'note':<13} {note}")
    if not report.changed:
        click.echo(
            "Nothing to remove: setup had added nothing here."
            if report.remove
            else "Nothing to change: already set up."
        )
    elif dry_run:
        click.echo("Dry run: nothing was changed.")
    elif report.remove:
        click.echo("Removed: what setup had added is gone; everything else is as it was.")
    elif not report.steps:
        click.echo(
            f"Set up: {CLIENT_NAMES[report.client]}'s next session is captured and handed its context."
        )
    for step in report.steps:
        click.echo(f"ACTION NEEDED: {step}")
