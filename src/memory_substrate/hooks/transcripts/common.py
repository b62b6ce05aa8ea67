"""What every transcript parser shares: the turn and chunk types, text cleaning, bounding, reading.

Imported on a hook's cold path, so it uses the standard library only.

A parser maps each transcript line to at most one :class:`Turn`, from that line alone (a tool
result that needs its call is the one exception, and only a chunk boundary between the two
changes it). Reading a file in pieces, ``[0, k)`` then ``[k, end)``, therefore gives the same
turns as reading it whole, which lets a hook capture a session incrementally and a backfill of
the whole file recognise what was already captured.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_substrate.hooks.transcripts.conversation_input import ConversationInput, ConversationMessage
    from memory_substrate.json_types import JsonObject

# Every context our own hooks print is wrapped in these markers, so that capture never stores it
# again (memory must not echo itself).
INJECTED_OPEN = "<memory-substrate-context>"
INJECTED_CLOSE = "</memory-substrate-context>"

# Spans a client or a hook adds to text that the user or the model did not write, and the spans
# a user marks private: none is ever captured.
_SPAN_TAGS = ("memory-substrate-context", "system-reminder", "user-prompt-submit-hook", "private")
_SPANS = [re.compile(rf"<{tag}>.*?(?:</{tag}>[ \t]*|\Z)", re.DOTALL) for tag in _SPAN_TAGS]
_BLANK_RUNS = re.compile(r"\n{3,}")

RESULT_HEAD = 600  # characters kept from the start of a long tool result
RESULT_TAIL = 400  # and from its end
ERROR_HEAD = 800  # an error keeps more: its message and its last lines both matter
ERROR_TAIL = 1200
COMMAND_MAX = 300  # a tool line's command or target
TEXT_MAX = 100_000  # one prompt or reply; the conversation schema's own cap is higher
HEAD_BYTES = 1 << 20  # how far into a file the session's metadata is looked for
LOOKBACK_BYTES = 1 << 18  # how far before an offset a tool result's call is looked for


@dataclass(frozen=True)
class Turn:
    """One captured step of a session: a prompt, a reply, a tool call, or a tool's result."""

    role: str  # "user" | "assistant"
    content: str
    name: str | None = None  # the client for assistant turns ("claude-code", "codex"); None for user
    timestamp: str | None = None  # ISO 8601, as the client wrote it
    sidechain: bool = False  # written by a subagent, not the main conversation
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass
class SessionMeta:
    client: str  # "claude-code" | "codex"
    session_id: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    client_version: str | None = None
    started_at: str | None = None
    first_prompt: str | None = None  # the session's first user prompt (for a stable title)
    agent_id: str | None = None  # set when the transcript is a subagent's (its own thread)

    def complete(self) -> bool:
        return None not in (
            self.session_id,
            self.cwd,
            self.client_version,
            self.started_at,
            self.first_prompt,
        )


@dataclass
class Chunk:
    turns: list[Turn]
    meta: SessionMeta
    end_offset: int  # byte offset just after the last complete line read
    parser: str  # e.g. "claude-code-jsonl.v1"
    skipped: int = 0  # lines not understood (corrupt JSON, unknown types) and passed over


def clean_text(text: str) -> str:
    """``text`` without injected context, system reminders or hook spans, trimmed."""
    if "<" in text:
        for span in _SPANS:
            text = span.sub("", text)
        text = _BLANK_RUNS.sub("\n\n", text)
    text = text.strip()
    return text if len(text) <= TEXT_MAX else text[:TEXT_MAX] + " …"


def bound(text: str, head: int = RESULT_HEAD, tail: int = RESULT_TAIL) -> str:
    """``text`` whole when short, else its head and tail around a note of what was left out."""
    if len(text) <= head + tail + 40:
        return text
    omitted = len(text) - head - tail
    return f"{text[:head].rstrip()}\n… [{omitted} characters omitted] …\n{text[len(text) - tail :].lstrip()}"


def one_line(text: str, limit: int = COMMAND_MAX) -> str:
    """A command or target on one line, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def relative(path: str, cwd: str | None) -> str:
    """``path`` relative to the session's directory when it lies inside it."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def tool_turn(
    tool: str,
    target: str,
    timestamp: str | None,
    name: str,
    sidechain: bool,
    extra: dict[str, str] | None = None,
) -> Turn:
    line = f"[tool {tool}] {one_line(target)}".rstrip()
    return Turn(
        "assistant", line, name, timestamp, sidechain, {"kind": "tool_call", "tool": tool, **(extra or {})}
    )


def result_turn(
    text: str,
    error: bool,
    timestamp: str | None,
    name: str,
    sidechain: bool,
    extra: dict[str, str] | None = None,
) -> Turn | None:
    """A tool's result, bounded; errors keep more of their text. None when there is nothing to say."""
    body = clean_text(text)
    if error:
        body = bound(body, ERROR_HEAD, ERROR_TAIL) or "(no output)"
        return Turn(
            "assistant",
            f"[error] {body}",
            name,
            timestamp,
            sidechain,
            {"kind": "tool_error", **(extra or {})},
        )
    if not body:
        return None
    return Turn(
        "assistant",
        f"[result] {bound(body)}",
        name,
        timestamp,
        sidechain,
        {"kind": "tool_result", **(extra or {})},
    )


OWN_TOOL_PREFIXES = ("mcp__memory-substrate__", "mcp__memory_substrate__", "mcp__plugin_memory-substrate")
# The server may be registered under any name (``claude mcp add memory ...``, a plugin's own), so a
# call is ours by its tool name too: the last part of ``mcp__SERVER__TOOL`` (or ``SERVER.TOOL``).
OWN_TOOL_NAMES = frozenset({"memory_ingest", "memory_query", "memory_remember", "memory_maintain"})


def own_tool(name: str) -> bool:
    """A call of our own MCP server: its results are memory already, never captured again."""
    return name.startswith(OWN_TOOL_PREFIXES) or name.rsplit("__", 1)[-1].rsplit(".", 1)[-1] in OWN_TOOL_NAMES


def complete_lines(path: Path, start: int = 0) -> Iterator[tuple[bytes, int]]:
    """Each complete line from byte ``start`` with the offset just after it; a partial last line
    (still being written) is not yielded. A ``start`` past the end (the file was replaced by a
    shorter one) reads from the beginning."""
    with path.open("rb") as fh:
        size = fh.seek(0, 2)
        if start > size:
            start = 0
        fh.seek(start)
        offset = start
        pending = b""
        while True:
            block = fh.read(1 << 20)
            if not block:
                return
            pending += block
            lines = pending.split(b"\n")
            pending = lines.pop()
            for raw in lines:
                offset += len(raw) + 1
                yield raw, offset


def head_lines(path: Path, limit: int = HEAD_BYTES) -> Iterator[bytes]:
    """The complete lines of the file's first ``limit`` bytes (for metadata when reading from an offset)."""
    with path.open("rb") as fh:
        data = fh.read(limit)
    lines = data.split(b"\n")
    if len(data) == limit:
        lines.pop()  # cut mid-line
    yield from lines


def lines_before(path: Path, start: int, limit: int = LOOKBACK_BYTES) -> list[JsonObject]:
    """The JSON lines in the ``limit`` bytes before ``start`` (a chunk's first results may answer
    calls made just before it)."""
    if start <= 0:
        return []
    begin = max(0, start - limit)
    with path.open("rb") as fh:
        fh.seek(begin)
        data = fh.read(start - begin)
    raws = data.split(b"\n")
    if begin > 0:
        raws = raws[1:]  # cut mid-line
    return [line for line in map(parse_line, raws) if line is not None]


def as_object(value: object) -> JsonObject:
    """A line's field read as a JSON object: ``{}`` when it is absent or of another type."""
    return value if isinstance(value, dict) else {}


def as_text(value: object) -> str | None:
    """A line's field read as a string (a timestamp, an id): None when it is absent or not one."""
    return value if isinstance(value, str) else None


def git_branch(value: object) -> str | None:
    """A branch name, or None: clients write "HEAD" when the directory is on no branch (or in no repository)."""
    return value if isinstance(value, str) and value and value != "HEAD" else None


def parse_line(raw: bytes) -> JsonObject | None:
    """One JSON object, or None for a blank, corrupt or non-object line."""
    if not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


class TranscriptReader:
    """One client's way of reading lines; :func:`read_transcript` drives it over a file."""

    def __init__(self, meta: SessionMeta, path: Path, start: int) -> None:
        self.meta = meta
        self.turns: list[Turn] = []
        self._before: tuple[Path, int] | None = (path, start) if start > 0 else None

    def note_meta(self, line: JsonObject) -> None:
        """Take what ``line`` says about the session (also called on the file's head)."""

    def take(self, line: JsonObject) -> bool:
        """Add ``line``'s turns; False when its type is unknown to this parser."""
        raise NotImplementedError

    def look_back(self, visit: Callable[[JsonObject], None]) -> None:
        """Show ``visit`` the lines just before the chunk, once (for a result whose call came before it)."""
        if self._before is not None:
            for line in lines_before(*self._before):
                visit(line)
            self._before = None


def read_transcript(
    path: Path, start: int, reader: Callable[[Path, int], TranscriptReader], parser: str
) -> Chunk:
    """Drive a reader over ``path`` from byte ``start`` (0 when past the end) to its last complete line."""
    path = Path(path)
    if start > path.stat().st_size:
        start = 0
    lines = reader(path, start)
    if start > 0:
        for raw in head_lines(path):
            line = parse_line(raw)
            if line is not None:
                lines.note_meta(line)
                if lines.meta.complete():
                    break
    end, skipped = start, 0
    for raw, offset in complete_lines(path, start):
        end = offset
        line = parse_line(raw)
        if line is None:
            skipped += bool(raw.strip())
            continue
        lines.note_meta(line)
        skipped += not lines.take(line)
    return Chunk(lines.turns, lines.meta, end, parser, skipped)


def _title(meta: SessionMeta, turns: list[Turn]) -> str:
    prompt = meta.first_prompt or next((t.content for t in turns if t.role == "user"), "")
    words = prompt.split()
    head = " ".join(words[:8]) + (" …" if len(words) > 8 else "")
    what = "subagent" if meta.agent_id else "session"
    return (f"{meta.client} {what} {head}".strip())[:500]


def thread_id(meta: SessionMeta) -> str:
    """The conversation thread of a transcript: the session, or a subagent of it (its own thread,
    since its turns do not extend the main conversation's)."""
    base = f"{meta.client}:{meta.session_id or 'unknown'}"
    return (f"{base}:{meta.agent_id}" if meta.agent_id else base)[:200]


def to_conversation(chunk: Chunk) -> ConversationInput:
    """The ``memory_ingest`` conversation input for ``chunk``: the session is the thread.

    Each turn is one message (role, content, name, created_at, metadata); the first message also
    carries the session's metadata. A chunk without turns gives no messages: nothing to ingest.
    """
    meta = chunk.meta
    session = {
        k: v
        for k, v in (
            ("session_id", meta.session_id),
            ("agent_id", meta.agent_id),
            ("cwd", meta.cwd),
            ("git_branch", meta.git_branch),
            ("client_version", meta.client_version),
            ("started_at", meta.started_at),
            ("parser", chunk.parser),
        )
        if v
    }
    messages: list[ConversationMessage] = []
    for turn in chunk.turns:
        md: JsonObject = dict(turn.metadata)
        if turn.sidechain:
            md["sidechain"] = True
        if not messages:
            md["session"] = session
        msg: ConversationMessage = {"role": turn.role, "content": turn.content, "metadata": md}
        if turn.name:
            msg["name"] = turn.name
        if turn.timestamp:
            msg["created_at"] = turn.timestamp
        messages.append(msg)
    data: ConversationInput = {
        "thread_id": thread_id(meta),
        "title": _title(meta, chunk.turns),
        "messages": messages,
    }
    if meta.cwd:
        data["origin"] = {"host": meta.client, "project": meta.cwd[:500]}
    return data
