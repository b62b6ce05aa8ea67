"""Codex rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. ``session_meta`` gives the session's metadata;
``response_item`` lines are the conversation as the model saw it: user and assistant messages,
function and custom tool calls and their outputs, reasoning. Kept: the user's own prompts (not
the environment context or instructions Codex adds as user messages), assistant text, each tool
call as one line and its output bounded. Never kept: developer messages (instructions, and the
context hooks add, ours included), reasoning. ``event_msg`` and other line types repeat or
annotate the same items and are skipped. A rollout of a subagent marks all its turns sidechain.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from memory_substrate.hooks.transcripts.common import (
    Chunk,
    SessionMeta,
    TranscriptReader,
    Turn,
    as_object,
    as_text,
    clean_text,
    git_branch,
    one_line,
    own_tool,
    read_transcript,
    relative,
    result_turn,
    tool_turn,
)

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject

PARSER = "codex-rollout.v1"
CLIENT = "codex"

_IGNORED = frozenset({"event_msg", "turn_context", "world_state", "token_usage_record", "compacted"})
# User messages Codex writes itself (context and instructions), recognised by their opening.
_WRAPPERS = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<skill>",
    "<subagent_notification>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<apps_instructions>",
)
_SHELL_TOOLS = frozenset({"exec_command", "shell", "shell_command", "local_shell", "container.exec"})
_EXIT = re.compile(r"^(?:Process exited with code|Exit code:)\s*(-?\d+)", re.MULTILINE)
_HEADER = re.compile(
    r"^(?:Chunk ID|Wall time|Process exited with code|Process running with session ID|"
    r"Original token count|Exit code|Total output lines)\b.*$"
)
_READERS = frozenset({"cat", "head", "tail", "nl", "sed", "bat", "less", "more"})
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)


def read_codex(path: Path, start: int = 0) -> Chunk:
    """The turns of ``path`` from byte ``start`` to its last complete line, with the session's metadata."""
    return read_transcript(path, start, _Reader, PARSER)


_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")


class _Reader(TranscriptReader):
    def __init__(self, path: Path, start: int) -> None:
        super().__init__(SessionMeta(CLIENT), path, start)
        self.sidechain = False
        self.calls: dict[str, tuple[str, str]] = {}  # call_id -> (tool, command)

    def take(self, line: JsonObject) -> bool:
        kind, payload = line.get("type"), line.get("payload")
        if kind == "response_item" and isinstance(payload, dict):
            self.item(payload, as_text(line.get("timestamp")))
        return kind in ("response_item", "session_meta") or kind in _IGNORED

    def _call_of(self, call_id: str) -> tuple[str, str]:
        if call_id not in self.calls:
            self.look_back(self._note_call)  # the call may have been made just before this chunk
        return self.calls.get(call_id, ("", ""))

    def _note_call(self, line: JsonObject) -> None:
        payload = line.get("payload")
        if (
            line.get("type") == "response_item"
            and isinstance(payload, dict)
            and payload.get("type") in _CALLS
        ):
            self.calls[str(payload.get("call_id") or payload.get("id") or "")] = _call(payload, self.meta.cwd)

    def note_meta(self, line: JsonObject) -> None:
        payload = line.get("payload")
        if not isinstance(payload, dict):
            return
        meta = self.meta
        if line.get("type") == "session_meta":
            git = as_object(payload.get("git"))
            # A subagent's rollout names the parent's session as session_id and its own thread as id.
            for attr, value in (
                ("session_id", payload.get("session_id") or payload.get("id")),
                ("cwd", payload.get("cwd")),
                ("client_version", payload.get("cli_version")),
                ("started_at", payload.get("timestamp") or line.get("timestamp")),
            ):
                if getattr(meta, attr) is None and isinstance(value, str) and value:
                    setattr(meta, attr, value)
            if meta.git_branch is None:
                meta.git_branch = git_branch(git.get("branch"))
            source = payload.get("source")
            if (isinstance(source, dict) and "subagent" in source) or payload.get(
                "thread_source"
            ) == "subagent":
                self.sidechain = True
                own_id = payload.get("id")
                if meta.agent_id is None and isinstance(own_id, str):
                    meta.agent_id = own_id
        elif (
            meta.first_prompt is None
            and line.get("type") == "response_item"
            and payload.get("type") == "message"
            and payload.get("role") == "user"
        ):
            meta.first_prompt = _prompt(payload) or None

    def item(self, item: JsonObject, ts: str | None) -> None:
        kind, side = item.get("type"), self.sidechain
        if kind == "message":
            role = item.get("role")
            if role == "user":
                text = _prompt(item)
                if text:
                    self.turns.append(Turn("user", text, None, ts, side, {"kind": "prompt"}))
            elif role == "assistant":
                content = item.get("content")
                text = clean_text(
                    "".join(
                        str(c.get("text") or "")
                        for c in (content if isinstance(content, list) else [])
                        if isinstance(c, dict) and c.get("type") in ("output_text", "text")
                    )
                )
                if text:
                    self.turns.append(Turn("assistant", text, CLIENT, ts, side, {"kind": "text"}))
            # developer and system messages: instructions and hook context, never captured
        elif kind in _CALLS:
            tool, target = _call(item, self.meta.cwd)
            self.calls[str(item.get("call_id") or item.get("id") or "")] = (tool, target)
            self.turns.append(tool_turn(tool, target, ts, CLIENT, side))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            tool, command = self._call_of(str(item.get("call_id") or ""))
            turn = self._result(tool, command, item.get("output"), ts)
            if turn is not None:
                self.turns.append(turn)
        # reasoning (and item types this parser does not know) are never captured

    def _result(self, tool: str, command: str, output: object, ts: str | None) -> Turn | None:
        extra = {"tool": tool} if tool else {}
        side = self.sidechain
        if own_tool(tool):
            return Turn(
                "assistant",
                "[result] (memory-substrate output, not captured again)",
                CLIENT,
                ts,
                side,
                {"kind": "tool_result", **extra},
            )
        text, code, success = _output(output)
        error = (code is not None and code != 0) or success is False
        if not error and tool in _SHELL_TOOLS:
            read = _read_target(command)
            if read:
                lines = len(text.splitlines())
                return Turn(
                    "assistant",
                    f"[result] read {relative(read, self.meta.cwd)} ({lines} lines)",
                    CLIENT,
                    ts,
                    side,
                    {"kind": "tool_result", **extra},
                )
        if error and code is not None:
            text = f"exit {code}\n{text}"
        return result_turn(text, error, ts, CLIENT, side, extra)


def _prompt(item: JsonObject) -> str:
    """The user's own text of a user message, without what Codex adds as user messages."""
    content = item.get("content")
    if not isinstance(content, list):
        return ""
    passthrough = item.get("internal_chat_message_metadata_passthrough")
    kinds = passthrough.get("content_item_kinds") if isinstance(passthrough, dict) else None
    texts = []
    for i, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in ("input_text", "text"):
            continue
        text = str(part.get("text") or "")
        if isinstance(kinds, list) and i < len(kinds):
            if kinds[i] != "user.text":
                continue
        elif text.lstrip().startswith(_WRAPPERS):
            continue
        text = clean_text(text)
        if text:
            texts.append(text)
    return "\n\n".join(texts)


def _arguments(item: JsonObject) -> JsonObject:
    raw = item.get("arguments")
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _command(value: object) -> str:
    """A shell command given as a string, or as argv (``["bash", "-lc", "cmd"]`` gives ``cmd``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if (
            len(value) >= 3
            and value[-2] in ("-lc", "-c")
            and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
        ):
            return str(value[-1])
        return shlex.join(value)
    return ""


def _patch_files(body: str, cwd: str | None) -> str:
    return ", ".join(f"{op.lower()} {relative(path.strip(), cwd)}" for op, path in _PATCH_FILE.findall(body))


def _call(item: JsonObject, cwd: str | None) -> tuple[str, str]:
    """(tool, target) of a call item: the command for shell tools, the files for a patch."""
    kind = item.get("type")
    if kind == "local_shell_call":
        action = as_object(item.get("action"))
        return "local_shell", _command(action.get("command"))
    if kind == "web_search_call":
        action = as_object(item.get("action"))
        return "web_search", str(action.get("query") or "")
    name = str(item.get("name") or "tool")
    if kind == "custom_tool_call":
        body = str(item.get("input") or "")
        return name, _patch_files(body, cwd) or one_line(body)
    args = _arguments(item)
    if name in _SHELL_TOOLS:
        command = _command(args.get("cmd") or args.get("command"))
        if "*** Begin Patch" in command:
            return "apply_patch", _patch_files(command, cwd) or one_line(command)
        return name, command
    if name == "apply_patch":
        return name, _patch_files(str(args.get("input") or ""), cwd)
    for key in ("path", "file_path", "query", "url", "message", "target", "targets", "chars"):
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = ", ".join(value)
        if isinstance(value, str) and value:
            return name, value
    return name, one_line(json.dumps(args, ensure_ascii=False)) if args else ""


def _output(output: object) -> tuple[str, int | None, bool | None]:
    """(text, exit code, success) of a call's output, in the shapes Codex has written."""
    success: bool | None = None
    if isinstance(output, dict):
        success = output.get("success") if isinstance(output.get("success"), bool) else None
        output = output.get("content") if "content" in output else output.get("output")
    if isinstance(output, list):
        output = "\n".join(str(p.get("text") or "") for p in output if isinstance(p, dict))
    text = output if isinstance(output, str) else ""
    if text.startswith("{") and '"output"' in text:
        try:
            wrapped = json.loads(text)
        except ValueError:
            wrapped = None
        if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
            md = as_object(wrapped.get("metadata"))
            code = md.get("exit_code")
            return wrapped["output"], code if isinstance(code, int) else None, success
    code = None
    # Unified exec prefixes its output with header lines and "Output:", at times more than once.
    while True:
        head, sep, body = text.partition("Output:\n")
        lines = [h for h in head.splitlines() if h.strip()]
        if not sep or (head and not head.endswith("\n")) or not all(_HEADER.match(h) for h in lines):
            break
        for h in lines:
            found = _EXIT.match(h)
            if found and code is None:
                code = int(found.group(1))
        text = body
    return text, code, success


def _read_target(command: str) -> str:
    """The file a simple read command (``cat f``, ``sed -n '1,80p' f``, ``head -n 20 f``) prints, else ""."""
    if not command or any(ch in command for ch in "|;&><`$\n"):
        return ""
    try:
        argv = shlex.split(command)
    except ValueError:
        return ""
    if not argv or argv[0] not in _READERS:
        return ""
    if argv[0] == "sed" and "-n" not in argv:
        return ""
    files = [
        a
        for a in argv[1:]
        if not a.startswith("-") and not a.isdigit() and not (argv[0] == "sed" and a.endswith("p"))
    ]
    return files[0] if len(files) == 1 else ""
