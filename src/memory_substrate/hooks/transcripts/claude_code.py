"""Claude Code session transcripts (``~/.claude/projects/<dir>/<session>.jsonl``).

Each line is one JSON object with a ``type``. Kept: ``user`` lines (the prompts, and the tool
results Claude Code sends back) and ``assistant`` lines (text and tool calls; Claude Code writes
one line per content block). Everything else (attachments, hook runs, API request records,
queue and cost bookkeeping, summaries, lines of types this parser does not know) is skipped.
Subagents write their own files under ``<session>/subagents/`` with ``isSidechain`` set on
every line (older versions wrote such lines into the main file); their turns are marked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from memory_substrate.hooks.transcripts.common import (
    Chunk,
    SessionMeta,
    TranscriptReader,
    Turn,
    as_object,
    as_text,
    bound,
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

PARSER = "claude-code-jsonl.v1"
CLIENT = "claude-code"

# Line types this parser knows and passes over on purpose (not counted as skipped).
_IGNORED = frozenset(
    {
        "attachment",
        "system",
        "summary",
        "queue-operation",
        "file-history-snapshot",
        "progress",
        "last-prompt",
        "atis-latch",
        "api-request-shape",
        "api-request-blob",
        "api-request",
        "tools-used",
        "cost-state",
        "custom-title",
        "agent-name",
        "tag",
        "pr-link",
        "mode",
    }
)
# A user line's text that the client wrote, not the user.
_NOT_PROMPTS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<task-notification>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "Caveat: The messages below",
)
_PATH_KEYS = ("file_path", "notebook_path", "path")


def subagent_transcripts(path: Path) -> list[Path]:
    """The transcripts of the subagents a session ran (``<session>/subagents/agent-*.jsonl``)."""
    folder = path.with_suffix("") / "subagents"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def read_claude_code(path: Path, start: int = 0) -> Chunk:
    """The turns of ``path`` from byte ``start`` to its last complete line, with the session's metadata."""
    return read_transcript(path, start, _Reader, PARSER)


def _note_meta(meta: SessionMeta, line: JsonObject) -> None:
    for attr, key in (
        ("session_id", "sessionId"),
        ("cwd", "cwd"),
        ("client_version", "version"),
        ("started_at", "timestamp"),
    ):
        value = line.get(key)
        if getattr(meta, attr) is None and isinstance(value, str) and value:
            setattr(meta, attr, value)
    if meta.git_branch is None:
        meta.git_branch = git_branch(line.get("gitBranch"))
    if meta.first_prompt is None and line.get("type") == "user":
        prompt = _prompt(line)
        if prompt:
            meta.first_prompt = prompt
            # A file that opens with a subagent's prompt is that subagent's transcript.
            agent = line.get("agentId")
            if line.get("isSidechain") and isinstance(agent, str):
                meta.agent_id = agent


def _prompt(line: JsonObject) -> str:
    """The user's own text of a user line ("" when it holds none)."""
    if line.get("isMeta") or line.get("isCompactSummary") or line.get("isVisibleInTranscriptOnly"):
        return ""
    content = as_object(line.get("message")).get("content")
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    else:
        return ""
    texts = []
    for part in parts:
        if not isinstance(part, str):
            continue
        stripped = part.lstrip()
        if stripped.startswith("<command-name>"):
            part = _slash_command(stripped)
        elif stripped.startswith(_NOT_PROMPTS):
            continue
        text = clean_text(part)
        if text:
            texts.append(text)
    return "\n\n".join(texts)


def _slash_command(text: str) -> str:
    """``<command-name>/x</command-name>…<command-args>y</command-args>`` as the user typed it: ``/x y``."""

    def between(tag: str) -> str:
        open_, close = f"<{tag}>", f"</{tag}>"
        i = text.find(open_)
        j = text.find(close, i + len(open_))
        return text[i + len(open_) : j].strip() if i >= 0 and j >= 0 else ""

    return f"{between('command-name')} {between('command-args')}".strip()


class _Reader(TranscriptReader):
    def __init__(self, path: Path, start: int) -> None:
        super().__init__(SessionMeta(CLIENT), path, start)
        self.tools: dict[str, str] = {}  # tool_use_id -> tool name

    def note_meta(self, line: JsonObject) -> None:
        _note_meta(self.meta, line)

    def take(self, line: JsonObject) -> bool:
        kind = line.get("type")
        if kind == "user":
            self.user(line)
        elif kind == "assistant":
            self.assistant(line)
        return kind in ("user", "assistant") or kind in _IGNORED

    def _tool(self, tool_use_id: str) -> str:
        if tool_use_id not in self.tools:
            self.look_back(self._note_calls)  # the call may have been made just before this chunk
        return self.tools.get(tool_use_id, "")

    def _note_calls(self, line: JsonObject) -> None:
        if line.get("type") != "assistant":
            return
        content = as_object(line.get("message")).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                self.tools[str(block.get("id"))] = str(block.get("name") or "tool")

    def _extra(self, line: JsonObject) -> dict[str, str]:
        agent = line.get("agentId")
        return {"agent_id": agent} if line.get("isSidechain") and isinstance(agent, str) else {}

    def user(self, line: JsonObject) -> None:
        ts, side = as_text(line.get("timestamp")), bool(line.get("isSidechain"))
        prompt = _prompt(line)
        if prompt:
            self.turns.append(Turn("user", prompt, None, ts, side, {"kind": "prompt", **self._extra(line)}))
        content = as_object(line.get("message")).get("content")
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                turn = self._result(block, line.get("toolUseResult"), ts, side, self._extra(line))
                if turn is not None:
                    self.turns.append(turn)

    def _result(
        self, block: JsonObject, structured: object, ts: str | None, side: bool, extra: dict[str, str]
    ) -> Turn | None:
        tool = self._tool(str(block.get("tool_use_id")))
        if tool:
            extra = {**extra, "tool": tool}
        error = bool(block.get("is_error"))
        if own_tool(tool):
            return Turn(
                "assistant",
                "[result] (memory-substrate output, not captured again)",
                CLIENT,
                ts,
                side,
                {"kind": "tool_result", **extra},
            )
        if isinstance(structured, dict) and not error:
            summary = self._structured(structured)
            if summary:
                return Turn(
                    "assistant", f"[result] {summary}", CLIENT, ts, side, {"kind": "tool_result", **extra}
                )
        return result_turn(_block_text(block.get("content")), error, ts, CLIENT, side, extra)

    def _structured(self, result: JsonObject) -> str:
        """A file read, edit or subagent report said in one line (the file itself is not captured)."""
        cwd = self.meta.cwd
        file = result.get("file")
        if isinstance(file, dict) and isinstance(file.get("filePath"), str):
            where = relative(file["filePath"], cwd)
            first, count, total = file.get("startLine"), file.get("numLines"), file.get("totalLines")
            if isinstance(first, int) and isinstance(count, int) and isinstance(total, int) and count:
                return f"read {where} (lines {first}-{first + count - 1} of {total})"
            return f"read {where}"
        file_path = result.get("filePath")
        if isinstance(file_path, str):
            where = relative(file_path, cwd)
            kind = result.get("type")
            verb = {"create": "created", "update": "wrote"}.get(
                kind if isinstance(kind, str) else "", "edited"
            )
            return f"{verb} {where}"
        if isinstance(result.get("agentId"), str) and isinstance(result.get("content"), list):
            report = clean_text(_block_text(result.get("content")))
            return f"subagent {result.get('agentType') or 'agent'}: {bound(report)}" if report else ""
        return ""

    def assistant(self, line: JsonObject) -> None:
        if line.get("isApiErrorMessage"):
            return
        message = as_object(line.get("message"))
        if message.get("model") == "<synthetic>":
            return
        ts, side, extra = as_text(line.get("timestamp")), bool(line.get("isSidechain")), self._extra(line)
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text = clean_text(str(block.get("text") or ""))
                if text:
                    self.turns.append(Turn("assistant", text, CLIENT, ts, side, {"kind": "text", **extra}))
            elif kind in ("tool_use", "server_tool_use"):
                name = str(block.get("name") or "tool")
                self.tools[str(block.get("id"))] = name
                inp = block.get("input")
                self.turns.append(
                    tool_turn(
                        name,
                        _target(name, inp if isinstance(inp, dict) else {}, self.meta.cwd),
                        ts,
                        CLIENT,
                        side,
                        extra,
                    )
                )
            # thinking and redacted_thinking blocks are never captured


def _block_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text":
                parts.append(str(b.get("text") or ""))
            elif isinstance(b, dict) and b.get("type") == "image":
                parts.append("[image]")
        return "\n".join(parts)
    return ""


def _target(name: str, inp: JsonObject, cwd: str | None) -> str:
    """What a tool call acts on, for its one compact line: the command, the path, the pattern."""

    def s(key: str) -> str:
        value = inp.get(key)
        return value if isinstance(value, str) else ""

    if name == "Bash":
        return s("command")
    if name in ("Agent", "Task"):
        return f"{s('subagent_type') or 'agent'}: {s('description') or s('prompt')}"
    if name == "Grep":
        return f"{s('pattern')} in {relative(s('path'), cwd)}" if s("path") else s("pattern")
    if name == "TodoWrite":
        todos = inp.get("todos")
        return f"{len(todos)} items" if isinstance(todos, list) else ""
    for key in _PATH_KEYS:
        if s(key):
            return relative(s(key), cwd)
    for key in ("command", "pattern", "url", "query", "skill", "description", "prompt", "name"):
        if s(key):
            return s(key)
    return one_line(json.dumps(inp, ensure_ascii=False)) if inp else ""
