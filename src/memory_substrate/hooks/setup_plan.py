"""What a set-up is asked to do and what it reports, shared by the Claude Code and Codex set-ups."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

from memory_substrate.errors import ConflictError, NotAvailableError, ValidationError
from memory_substrate.hooks import hook_entries
from memory_substrate.hooks.config_files import Action, FileEdit, JsonDocument
from memory_substrate.hooks.entry_types import HookHandler
from memory_substrate.hooks.hook_entries import runs_ours

Client = Literal["claude-code", "codex"]
Scope = Literal["project", "user"]
CLIENT_NAMES = {"claude-code": "Claude Code", "codex": "Codex"}


@dataclass(frozen=True)
class Request:
    """One ``setup`` run: which client, where, and the command lines our entries run."""

    client: Client
    scope: Scope
    project: Path | None  # the project folder (scope "project")
    remove: bool
    script: Path  # the installed ``memory-substrate`` script, absolute
    global_args: tuple[str, ...] = ()  # --root given to setup, passed on
    server_name: str = "memory-substrate"
    plugin: bool = False  # the hooks are the installed plugin's: only Codex's trust is asked for
    # A running ``serve``'s address: Claude Code then posts its context events there itself
    # (``http`` hooks, mcp/client_hooks_route.py); captures stay with the hook command.
    serve_url: str | None = None
    home: Path = field(default_factory=Path.home)
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    def folder(self, variable: str, default: str) -> Path:
        """The folder the environment variable names (``CODEX_HOME``), else ``~/<default>``."""
        custom = self.env.get(variable)
        return Path(custom).expanduser() if custom else self.home / default

    @property
    def hook_argv(self) -> list[str]:
        return [str(self.script), "hook", self.client, *self.global_args]

    @property
    def server_argv(self) -> list[str]:
        return [str(self.script), "serve", "--project", *self.global_args]


class FileChange(TypedDict):
    path: str
    action: Action
    what: str


class ReportView(TypedDict):
    """A set-up's report as ``setup`` prints it."""

    client: Client
    scope: Scope
    where: str
    remove: bool
    changed: bool
    ok: bool  # nothing is left for the user to do
    files: list[FileChange]
    done: list[str]
    notes: list[str]
    steps: list[str]


@dataclass
class Report:
    """What a set-up changed (or would), what it checked, and what is left for the user to do."""

    client: Client
    scope: Scope
    where: str
    remove: bool
    edits: list[FileEdit] = field(default_factory=list)
    done: list[str] = field(default_factory=list)  # steps taken besides file edits (Codex's trust)
    notes: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)  # what the user must still do; empty when set up

    @property
    def changed(self) -> bool:
        return bool(self.done) or any(e.action != "unchanged" for e in self.edits)

    def to_dict(self) -> ReportView:
        return {
            "client": self.client,
            "scope": self.scope,
            "where": self.where,
            "remove": self.remove,
            "changed": self.changed,
            "ok": not self.steps,
            "files": [{"path": str(e.path), "action": e.action, "what": e.what} for e in self.edits],
            "done": self.done,
            "notes": self.notes,
            "steps": self.steps,
        }


PLUGIN_NAME = "memory-substrate"  # the name of our Claude Code and Codex plugins (plugins/)


def new_report(req: Request) -> Report:
    where = "all projects" if req.scope == "user" else f"project {req.project}"
    if req.plugin:
        where = f"the {PLUGIN_NAME} plugin"
    return Report(req.client, req.scope, where, req.remove)


def hooks_edit(req: Request, path: Path, handler: Callable[[str], HookHandler], command: str) -> FileEdit:
    """The edit of the JSON file at ``path`` whose ``hooks`` object holds our handlers (Claude
    Code's settings, Codex's hooks.json): ours merged in, or taken out with ``req.remove``."""
    doc = JsonDocument.load(path)
    shown = display(path, req.home)
    if req.remove:
        table, events = hook_entries.remove(doc.data.get("hooks"), req.client)
        data = dict(doc.data)
        if events and table:
            data["hooks"] = table
        elif events:
            data.pop("hooks", None)
        return doc.edit(
            data,
            f"hooks {', '.join(events) or 'none of ours'} removed from {shown}",
            prune_folder=req.scope == "project",
        )
    wanted = {event: handler(event) for event in hook_entries.EVENTS}
    table, events = hook_entries.merge(doc.data.get("hooks"), wanted, req.client)
    data = {**doc.data, "hooks": table} if events else doc.data
    return doc.edit(data, f"hooks {', '.join(hook_entries.EVENTS)} in {shown} run {command}")


def warn_twice(req: Request, report: Report, other: Path, flag: str) -> None:
    """A note when ``other`` (the same client's hooks file at the other scope) holds ours too."""
    try:
        doc = JsonDocument.load(other)
    except ValidationError:
        return
    if hook_entries.has_ours(doc.data.get("hooks"), req.client):
        report.notes.append(
            f"{display(other, req.home)} has memory-substrate hooks too, so each event would run "
            f"twice; keep one: memory-substrate setup {req.client} {flag} --remove"
        )


def installed_script() -> Path:
    """The ``memory-substrate`` console script of this installation, absolute: the one beside the
    running Python (a virtual environment's, pipx's or uv's tool environment), else the one on PATH."""
    names = ("memory-substrate.exe", "memory-substrate") if sys.platform == "win32" else ("memory-substrate",)
    here = Path(sys.executable).parent
    for name in names:
        if (here / name).is_file():
            return (here / name).absolute()
    found = shutil.which("memory-substrate")
    if found:
        return Path(found).absolute()
    raise NotAvailableError(
        "cannot find the installed memory-substrate script (not beside "
        f"{sys.executable}, not on PATH); install the package (pip install memory-substrate "
        "or uv tool install memory-substrate), then run setup again"
    )


def ephemeral_note(script: Path) -> str | None:
    """A warning when ``script`` lives in a cache a tool may empty (``uvx`` runs from one)."""
    text = str(script).replace("\\", "/").lower()
    if "/uv/archive-v" in text or "/.cache/uv/" in text or "/uv/cache/" in text:
        return (
            f"{script} is in uv's cache, which uv may clean: install the package for good "
            "(uv tool install memory-substrate) and run setup again, or the hooks stop working"
        )
    return None


def is_our_server(entry: object) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args")
    words = [str(a) for a in args] if isinstance(args, list) else []
    return runs_ours([entry["command"], *words], "serve")


def check_server_name(existing: object, name: str, where: Path) -> None:
    """A server of that name that is not ours is the user's: never overwritten."""
    if existing is not None and not is_our_server(existing):
        raise ConflictError(
            f"{where} already has an MCP server named {name!r} that is not memory-substrate's; "
            "nothing was changed. Pick another name with --server-name NAME.",
            details={"path": str(where), "server": name},
        )


def display(path: Path, home: Path) -> str:
    """``path`` with the home folder shown as ``~``."""
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)
