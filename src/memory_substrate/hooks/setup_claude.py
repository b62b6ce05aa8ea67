"""Set-up for Claude Code: our hooks in its settings, our MCP server in its server list.

Where (Claude Code 2.1 reads these; ``$CLAUDE_CONFIG_DIR`` replaces ``~/.claude`` and then holds
``.claude.json`` too):

- project: hooks in ``<project>/.claude/settings.local.json``, the project's personal settings
  file (our commands are absolute paths of this machine, so they stay out of the shared
  ``settings.json``); the server in ``~/.claude.json`` under ``projects[<git root>]``, Claude
  Code's "local" scope, private to this user and project. A server in the project's
  ``.mcp.json`` would wait for an interactive approval that project settings cannot give.
- user: hooks in ``~/.claude/settings.json``, the server in ``~/.claude.json``'s ``mcpServers``.

Hooks are written in exec form (``command`` is the executable, ``args`` its arguments): Claude
Code spawns it without a shell, so no shell's quoting or syntax is involved on any platform.
With ``--serve-url`` UserPromptSubmit is an ``http`` hook instead: Claude Code posts it to the
running server, with no process started per prompt.
Nothing else in these files is touched: not CLAUDE.md, not auto memory, not other hooks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memory_substrate.errors import ValidationError
from memory_substrate.hooks import hook_entries
from memory_substrate.hooks.config_files import FileEdit, JsonDocument
from memory_substrate.hooks.entry_types import ClaudeServerEntry, HookHandler
from memory_substrate.hooks.nested import drop_in, get_in, set_in
from memory_substrate.hooks.setup_plan import (
    PLUGIN_NAME,
    Report,
    Request,
    check_server_name,
    display,
    hooks_edit,
    is_our_server,
    new_report,
    warn_twice,
)

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject


def config_dir(req: Request) -> Path:
    return req.folder("CLAUDE_CONFIG_DIR", ".claude")


def global_file(req: Request) -> Path:
    return config_dir(req) / ".claude.json" if req.env.get("CLAUDE_CONFIG_DIR") else req.home / ".claude.json"


def settings_file(req: Request, scope: str | None = None) -> Path:
    if (scope or req.scope) == "user":
        return config_dir(req) / "settings.json"
    assert req.project is not None
    return req.project / ".claude" / "settings.local.json"


def handler(req: Request, event: str) -> HookHandler:
    if req.serve_url and event in hook_entries.HTTP_EVENTS:
        return hook_entries.http_handler(req.serve_url, req.client, event)
    exe, *args = req.hook_argv
    return {"type": "command", "command": exe, "args": args, "timeout": hook_entries.TIMEOUTS[event]}


def server_entry(req: Request) -> ClaudeServerEntry:
    exe, *args = req.server_argv
    return {"type": "stdio", "command": exe, "args": args, "env": {}}


def server_path(req: Request) -> list[str]:
    if req.scope == "user":
        return ["mcpServers", req.server_name]
    assert req.project is not None
    return ["projects", str(req.project), "mcpServers", req.server_name]


def plan(req: Request) -> Report:
    report = new_report(req)
    if req.plugin:
        report.notes.append(
            "Claude Code runs the hooks of an installed plugin without a trust step: nothing to do"
        )
        return report
    report.edits.append(
        hooks_edit(
            req,
            settings_file(req),
            lambda event: handler(req, event),
            hook_entries.shell_command(req.hook_argv),
        )
    )
    report.edits.append(_server_edit(req))
    if req.serve_url and not req.remove:
        report.notes.append(
            f"{' and '.join(hook_entries.HTTP_EVENTS)} is posted by Claude Code itself to "
            f"{hook_entries.event_url(req.serve_url, req.client)}: keep `memory-substrate serve --transport "
            f"http` running with this store, and export {hook_entries.TOKEN_VARIABLE} (a token of the "
            "project's namespace, `memory-substrate token create`) where Claude Code starts; while "
            "the server is down those prompts get no memory (captures keep working)"
        )
    if not req.remove:
        if req.scope == "project":
            warn_twice(req, report, settings_file(req, "user"), "--user")
        plugins = _user_settings(req).get("enabledPlugins")
        if isinstance(plugins, dict) and any(
            k.startswith(f"{PLUGIN_NAME}@") and v for k, v in plugins.items()
        ):
            report.notes.append(
                f"the {PLUGIN_NAME} plugin is enabled too, so each event would run twice; "
                f"keep one (claude plugin disable {PLUGIN_NAME}, or setup --remove)"
            )
    return report


def _user_settings(req: Request) -> JsonObject:
    try:
        return JsonDocument.load(settings_file(req, "user")).data
    except ValidationError:  # reported when that file is the one being set up
        return {}


def _server_edit(req: Request) -> FileEdit:
    path = global_file(req)
    doc = JsonDocument.load(path)
    key = server_path(req)
    existing = get_in(doc.data, key)
    scope = "all projects" if req.scope == "user" else f"project {req.project}"
    if req.remove:
        data = drop_in(doc.data, key) if is_our_server(existing) else doc.data
        return doc.edit(
            data, f"MCP server {req.server_name!r} ({scope}) removed from {display(path, req.home)}"
        )
    check_server_name(existing, req.server_name, path)
    data = set_in(doc.data, key, server_entry(req)) if existing != server_entry(req) else doc.data
    return doc.edit(
        data,
        f"MCP server {req.server_name!r} for {scope} in {display(path, req.home)} runs "
        f"{hook_entries.shell_command(req.server_argv)}",
    )
