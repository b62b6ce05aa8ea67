"""Our hook handlers in a client's hooks table, the event → matcher group → handler shape that
Claude Code's settings and Codex's hooks.json share.

A handler is ours when it runs ``memory-substrate hook <client>`` in any spelling (an absolute
path, ``uvx memory-substrate``, an older install's path), or posts to a ``serve``'s
``/hooks/<client>/event``: a set-up replaces it in place, so a
moved installation or a changed timeout updates the entry instead of adding a second one, and a
removal takes out exactly those handlers and the groups, events and table left empty by it.
"""

from __future__ import annotations

import copy
import ntpath
import posixpath
import shlex
import subprocess
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from memory_substrate.hooks.entry_types import HookHandler, HttpHandler

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject

# Every event our hook command handles, in the order they are written. SubagentStop captures a
# subagent's transcript as soon as it ends; the others are in docs/hooks.md.
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "SessionEnd")

# The client's deadline for each event (seconds): it kills a hook that runs longer. The hook
# command keeps its own deadline under these and fails open. Codex clamps SessionEnd to 3 s, and
# Claude Code waits for SessionEnd hooks only briefly while exiting, so that one stays short.
TIMEOUTS = {
    "SessionStart": 15,
    "UserPromptSubmit": 10,
    "Stop": 30,
    "SubagentStop": 30,
    "PreCompact": 30,
    "SessionEnd": 3,
}

SCRIPT_NAMES = ("memory-substrate", "memory-substrate.exe")


def script_name(token: str) -> str:
    return ntpath.basename(posixpath.basename(token)).lower()


def _tokens(handler: Mapping[str, object]) -> list[str]:
    command = handler.get("command")
    if not isinstance(command, str):
        return []
    args = handler.get("args")
    if isinstance(args, list):
        return [command, *(str(a) for a in args)]
    try:
        return shlex.split(command, posix=sys.platform != "win32")
    except ValueError:
        return command.split()


def runs_ours(tokens: list[str], *tail: str) -> bool:
    """Whether a command line runs our script with ``tail`` right after it (e.g. "hook", "codex")."""
    for i, token in enumerate(tokens):
        if script_name(token.strip("\"'")) in SCRIPT_NAMES:
            return [t.strip("\"'") for t in tokens[i + 1 : i + 1 + len(tail)]] == list(tail)
    return False


# The events a client may post itself to a running ``serve`` (Claude Code's ``http`` hook type;
# Claude Code 2.1 skips an http hook on SessionStart, so that one stays a command), the path it
# posts them to, and the variable its token header is filled from.
HTTP_EVENTS = ("UserPromptSubmit",)
TOKEN_VARIABLE = "MEMORY_SUBSTRATE_HOOK_TOKEN"


def event_url(serve_url: str, client: str) -> str:
    return f"{serve_url.rstrip('/')}/hooks/{client}/event"


def http_handler(serve_url: str, client: str, event: str) -> HttpHandler:
    return {
        "type": "http",
        "url": event_url(serve_url, client),
        "headers": {"Authorization": f"Bearer ${{{TOKEN_VARIABLE}}}"},
        "allowedEnvVars": [TOKEN_VARIABLE],
        "timeout": TIMEOUTS[event],
    }


def is_ours(handler: object, client: str) -> bool:
    if not isinstance(handler, dict):
        return False
    if handler.get("type") == "http":
        return str(handler.get("url", "")).rstrip("/").endswith(f"/hooks/{client}/event")
    return runs_ours(_tokens(handler), "hook", client)


def shell_command(argv: list[str]) -> str:
    """``argv`` as one command line for the platform's shell: Codex runs a hook's command through
    ``$SHELL -lc`` (POSIX) or ``cmd.exe /C`` (Windows), so a path with spaces is quoted for it."""
    if sys.platform == "win32":
        return subprocess.list2cmdline(argv)
    return " ".join(shlex.quote(a) for a in argv)


def merge(table: object, handlers: Mapping[str, HookHandler], client: str) -> tuple[JsonObject, list[str]]:
    """``table`` (a client's ``hooks`` object) with ``handlers`` (event → our handler) in it, and
    the events whose entry changed. The first of our handlers of an event is replaced in place;
    any further one (a duplicate) is dropped; an event without one gets a group of its own at the
    end, after the user's, so that their hooks keep their positions."""
    out: JsonObject = copy.deepcopy(table) if isinstance(table, dict) else {}
    changed: list[str] = []
    for event, wanted in handlers.items():
        groups = out.get(event)
        if not isinstance(groups, list):
            groups = []
        placed = False
        new_groups: list[object] = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list) or not any(is_ours(h, client) for h in inner):
                new_groups.append(group)
                continue
            kept: list[object] = []
            for handler in inner:
                if not is_ours(handler, client):
                    kept.append(handler)
                elif not placed:
                    kept.append(wanted)
                    placed = True
            if kept:
                new_groups.append({**group, "hooks": kept})
        if not placed:
            new_groups.append({"hooks": [wanted]})
        if new_groups != groups or event not in out:
            out[event] = new_groups
            changed.append(event)
    return out, changed


def remove(table: object, client: str) -> tuple[object, list[str]]:
    """``table`` without our handlers, and the events they were taken from. A group, an event or
    the table itself goes when our removal emptied it (one the user left empty stays)."""
    if not isinstance(table, dict):
        return table, []
    out: JsonObject = {}
    changed: list[str] = []
    for event, groups in table.items():
        if not isinstance(groups, list):
            out[event] = groups
            continue
        new_groups: list[object] = []
        touched = False
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(is_ours(h, client) for h in inner):
                touched = True
                kept = [h for h in inner if not is_ours(h, client)]
                if kept:
                    new_groups.append({**group, "hooks": kept})
            else:
                new_groups.append(group)
        if touched:
            changed.append(event)
            if new_groups:
                out[event] = new_groups
        else:
            out[event] = groups
    return out, changed


def has_ours(table: object, client: str) -> bool:
    return bool(remove(table, client)[1])
