"""Set-up for Codex: our hooks in a hooks.json, our MCP server in config.toml, and Codex's trust.

Where (Codex 0.169; ``$CODEX_HOME`` defaults to ``~/.codex``):

- hooks: ``<project>/.codex/hooks.json`` (project; Codex loads it only in a project it trusts) or
  ``$CODEX_HOME/hooks.json`` (user), in the event → matcher group → handler shape;
- the server: ``[mcp_servers.<name>]`` in ``$CODEX_HOME/config.toml``;
- trust: Codex runs a hook only once trusted, and skips an untrusted one without a word. After
  writing the hooks, the set-up asks Codex's own app-server for them (``hooks/list``) and has it
  record the ``currentHash`` it reports (``config/batchWrite``), then checks that Codex lists each
  as trusted. When that cannot be done, the report says the one step left to the user.

Codex runs a hook's ``command`` through ``$SHELL -lc`` or ``cmd.exe /C`` (it has no exec form),
so the command is the script's absolute path quoted for the platform's shell and plain words.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memory_substrate.hooks import hook_entries, setup_plan, toml_tables
from memory_substrate.hooks.config_files import FileEdit, JsonDocument, read_text
from memory_substrate.hooks.entry_types import CodexServerTable, CommandHandler
from memory_substrate.hooks.nested import get_in
from memory_substrate.hooks.setup_plan import PLUGIN_NAME, Report, Request

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject


def codex_home(req: Request) -> Path:
    return req.folder("CODEX_HOME", ".codex")


def hooks_file(req: Request, scope: str | None = None) -> Path:
    if (scope or req.scope) == "user":
        return codex_home(req) / "hooks.json"
    assert req.project is not None
    return req.project / ".codex" / "hooks.json"


def config_file(req: Request) -> Path:
    return codex_home(req) / "config.toml"


def command(req: Request) -> str:
    return hook_entries.shell_command(req.hook_argv)


def handler(req: Request, event: str) -> CommandHandler:
    return {"type": "command", "command": command(req), "timeout": hook_entries.TIMEOUTS[event]}


def server_table(req: Request) -> CodexServerTable:
    exe, *args = req.server_argv
    return {"command": exe, "args": args}


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _camel(event: str) -> str:
    return event[0].lower() + event[1:]


def trust_keys(path: Path, table: object, client: str) -> list[str]:
    """The keys Codex files our handlers' trust under: ``<hooks.json>:<event>:<group>:<handler>``
    (as ``hooks/list`` reports them), for the file's path as written and as resolved."""
    keys: list[str] = []
    if not isinstance(table, dict):
        return keys
    spellings = {str(path), os.path.realpath(path)}
    for event, groups in table.items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, entry in enumerate(inner if isinstance(inner, list) else []):
                if hook_entries.is_ours(entry, client):
                    keys += [f"{p}:{_snake(event)}:{g}:{h}" for p in sorted(spellings)]
    return keys


def plan(req: Request) -> Report:
    report = setup_plan.new_report(req)
    if req.plugin:
        # The plugin brings its hooks and server; what is ours to change is Codex's trust of them.
        if req.remove:
            report.edits.append(_plugin_trust_drop(req))
        return report
    path = hooks_file(req)
    keys = trust_keys(path, JsonDocument.load(path).data.get("hooks"), req.client) if req.remove else []
    report.edits.append(setup_plan.hooks_edit(req, path, lambda event: handler(req, event), command(req)))
    report.edits.append(_config_edit(req, keys))
    if not req.remove:
        if req.scope == "project":
            setup_plan.warn_twice(req, report, hooks_file(req, "user"), "--user")
        plugins = _table(toml_tables.parse(read_text(config_file(req)), str(config_file(req))).get("plugins"))
        if any(
            k.startswith(f"{PLUGIN_NAME}@") and isinstance(v, dict) and v.get("enabled", True)
            for k, v in plugins.items()
        ):
            report.notes.append(
                f"the {PLUGIN_NAME} plugin is enabled too, so each event would run twice; "
                f"keep one (codex plugin remove {PLUGIN_NAME}@{PLUGIN_NAME}, or setup --remove)"
            )
    return report


def _table(value: object) -> JsonObject:
    """A table of Codex's config.toml, ``{}`` when it is absent (a key parsed from TOML is a string)."""
    return value if isinstance(value, dict) else {}


def _config_edit(req: Request, trust_to_drop: list[str]) -> FileEdit:
    path = config_file(req)
    text = read_text(path)
    config = toml_tables.parse(text, str(path))
    table_path: tuple[str, ...] = ("mcp_servers", req.server_name)
    existing = get_in(config, list(table_path))
    shown = setup_plan.display(path, req.home)
    if req.remove:
        doomed: list[tuple[str, ...]] = [table_path] if setup_plan.is_our_server(existing) else []
        doomed += [("hooks", "state", k) for k in trust_to_drop]
        after = toml_tables.drop(text, doomed, str(path))
        what = f"MCP server {req.server_name!r} and the trust of our hooks removed from {shown}"
        return FileEdit(path, text, after, what)
    setup_plan.check_server_name(existing, req.server_name, path)
    wanted = server_table(req)
    after = text if existing == wanted else toml_tables.put(text, table_path, wanted, str(path))
    return FileEdit(
        path,
        text,
        after,
        f"MCP server {req.server_name!r} in {shown} runs {hook_entries.shell_command(req.server_argv)}",
    )


def _plugin_trust_drop(req: Request) -> FileEdit:
    path = config_file(req)
    text = read_text(path)
    state = _table(get_in(toml_tables.parse(text, str(path)), ["hooks", "state"]))
    doomed: list[tuple[str, ...]] = [("hooks", "state", k) for k in state if k.startswith(f"{PLUGIN_NAME}@")]
    after = toml_tables.drop(text, doomed, str(path))
    return FileEdit(
        path,
        text,
        after,
        f"Codex's trust of the {PLUGIN_NAME} plugin's hooks removed from "
        f"{setup_plan.display(path, req.home)}",
    )


def find_codex(explicit: Path | None) -> Path | None:
    if explicit is not None:
        return explicit
    found = shutil.which("codex")
    return Path(found) if found else None


def rerun(req: Request) -> str:
    where = "--plugin" if req.plugin else "--user" if req.scope == "user" else f"--dir {req.project}"
    return f"memory-substrate setup codex {where}"


def secure_trust(req: Request, report: Report, codex: Path | None) -> None:
    """Have Codex trust the hooks just written (see the module's docstring); the report gets what
    was done, or the one step left to the user."""
    from memory_substrate.hooks.codex_app_server import AppServer, AppServerError, list_hooks, trust

    manual = "or start codex, type /hooks and trust the memory-substrate hooks"
    blocked = _cannot_ask(req, codex, manual)
    if blocked is not None or codex is None:
        report.steps.append(blocked or "")
        return
    ours = os.path.normcase(os.path.realpath(hooks_file(req)))
    wanted = {_camel(e) for e in hook_entries.EVENTS}
    cwd = req.project or codex_home(req)
    try:
        with AppServer(codex, env=req.env) as server:
            found = _our_hooks(req, list_hooks(server, cwd), ours, wanted)
            if not found:
                report.steps.append(_not_listed_step(req, manual))
                return
            pending = _untrusted(found)
            trust(server, pending)
            after = _our_hooks(req, list_hooks(server, cwd), ours, wanted)
    except AppServerError as exc:
        report.steps.append(
            f"Codex could not be asked to trust the hooks ({exc}): run `{rerun(req)}` again, {manual}"
        )
        return
    _report_trusted(req, report, after, wanted, pending, manual)


def _untrusted(found: list[JsonObject]) -> dict[str, str]:
    """Hook key -> current hash of the hooks Codex does not trust yet (``hooks/list`` gives both as strings)."""
    pending: dict[str, str] = {}
    for h in found:
        key, digest = h.get("key"), h.get("currentHash")
        if (
            h.get("trustStatus") != "trusted"
            and isinstance(key, str)
            and key
            and isinstance(digest, str)
            and digest
        ):
            pending[key] = digest
    return pending


def _cannot_ask(req: Request, codex: Path | None, manual: str) -> str | None:
    """The step left to the user when Codex cannot be asked to trust the hooks at all: its hooks
    are turned off, or it is not installed. ``None`` when it can be asked."""
    features = _table(toml_tables.parse(read_text(config_file(req)), str(config_file(req))).get("features"))
    if features.get("hooks") is False or features.get("codex_hooks") is False:
        return (
            f"Codex's hooks are turned off in {setup_plan.display(config_file(req), req.home)} "
            "([features] hooks = false); turn them on for memory-substrate's hooks to run"
        )
    if codex is None:
        return (
            "Codex is not installed here (no codex on PATH), so it could not be asked to trust the "
            f"hooks, and Codex skips an untrusted hook: once it is installed, run `{rerun(req)}` "
            f"again ({manual})"
        )
    return None


def _our_hooks(req: Request, listed: list[JsonObject], ours: str, wanted: set[str]) -> list[JsonObject]:
    """The hooks Codex lists that are memory-substrate's: the plugin's, or those of our hooks file
    that run our command."""
    if req.plugin:
        return [
            h
            for h in listed
            if str(h.get("pluginId") or "").split("@")[0] == PLUGIN_NAME and h.get("eventName") in wanted
        ]
    return [
        h
        for h in listed
        if h.get("command") == command(req)
        and h.get("eventName") in wanted
        and os.path.normcase(os.path.realpath(str(h.get("sourcePath", "")))) == ours
    ]


def _not_listed_step(req: Request, manual: str) -> str:
    """The step left to the user when Codex does not list our hooks at all."""
    if req.plugin:
        return (
            f"the {PLUGIN_NAME} plugin is not installed and enabled in Codex: "
            f"codex plugin add {PLUGIN_NAME}@{PLUGIN_NAME}, then run `{rerun(req)}` again"
        )
    if req.scope == "project":
        return (
            f"Codex does not trust the project {req.project} yet, so it ignores its "
            f".codex/hooks.json: start codex there once and trust the folder, then run "
            f"`{rerun(req)}` again (or set up for every project with --user)"
        )
    return (
        f"Codex does not list the hooks in {setup_plan.display(hooks_file(req), req.home)}; "
        f"run `{rerun(req)}` again, {manual}"
    )


def _report_trusted(
    req: Request,
    report: Report,
    after: list[JsonObject],
    wanted: set[str],
    pending: Mapping[str, str],
    manual: str,
) -> None:
    """What Codex trusts once asked: the hooks still untrusted, or those newly trusted and any
    turned off."""
    untrusted = sorted(str(h.get("eventName", "?")) for h in after if h.get("trustStatus") != "trusted")
    if untrusted or len(after) < len(wanted):
        report.steps.append(
            f"Codex still does not trust the hooks {', '.join(untrusted) or '(some missing)'}: {manual}"
        )
        return
    if pending:
        report.done.append(
            f"Codex now trusts {len(pending)} new or changed hook(s) (asked through codex app-server; "
            f"recorded in {setup_plan.display(config_file(req), req.home)})"
        )
    disabled = sorted(str(h.get("eventName", "?")) for h in after if h.get("enabled") is False)
    if disabled:
        report.notes.append(
            f"hooks {', '.join(disabled)} are turned off in Codex's /hooks; turn them on there"
        )
    report.notes.append(f"Codex trusts all {len(after)} memory-substrate hooks")
