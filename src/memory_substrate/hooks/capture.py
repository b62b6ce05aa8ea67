"""Capture a session transcript into the project's memory: the session is the thread.

Each capture reads the transcript from its start and ingests it as one conversation with the
session as ``thread_id``. The store keeps one episode per thread: a capture whose first messages
are the episode's appends only the messages beyond them, and an unchanged one is a noop
(ingest/repeats.py). The parsers map each line to its turn from that line alone
(transcripts/common.py), so the turns of a transcript read up to any complete line are a prefix of
its turns read later: captures stay idempotent with or without the cursor. The cursor
(``state.Cursor``) only saves work: a transcript whose size and modification time are those of
the last capture is not read again, and nothing but ``os.stat`` runs for it.

Secrets and ``<private>`` spans never reach the store: conversation capture redacts every
message before anything is hashed or stored (redaction.py). What our own hooks injected is
dropped by the parsers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memory_substrate.hooks.config import HookConfig
from memory_substrate.hooks.state import Cursor, load_cursor, save_cursor

if TYPE_CHECKING:
    from memory_substrate.hooks.transcripts.common import Chunk
    from memory_substrate.json_types import JsonObject

CLIENTS = ("claude-code", "codex")


class IngestTarget(Protocol):
    """What a capture writes with: a namespace's ``Memory``, or the warm path's proxy (hooks/warm.py)."""

    def ingest(self, mode: str, input_data: JsonObject, options: JsonObject | None = None) -> JsonObject: ...


@dataclass
class Captured:
    """What one transcript's capture did."""

    path: str
    status: str  # unchanged, empty, excluded, stored, appended, noop, missing, skipped
    namespace: str | None = None
    source_id: str | None = None
    turns: int = 0  # turns in the transcript
    added: int = 0  # messages the store took that it did not have
    reason: str | None = None


def reader(client: str) -> Callable[[Path, int], Chunk]:
    if client == "claude-code":
        from memory_substrate.hooks.transcripts.claude_code import read_claude_code

        return read_claude_code
    if client == "codex":
        from memory_substrate.hooks.transcripts.codex import read_codex

        return read_codex
    raise ValueError(f"unknown client {client!r}: use one of {', '.join(CLIENTS)}")


def capture(
    client: str,
    transcript: Path,
    config: HookConfig,
    memory: Callable[[str], IngestTarget],
    *,
    cwd: str | None = None,
    force: bool = False,
) -> Captured:
    """Capture ``transcript`` into the namespace of its project; ``memory(namespace)`` gives the
    ``Memory`` to write with (opened only when there is something to write)."""
    path = Path(transcript)
    try:
        stat = path.stat()
    except OSError as exc:
        return Captured(str(path), "missing", reason=exc.strerror or str(exc))
    cursor = load_cursor(config.state_dir, path)
    if cursor is not None and cursor.unchanged(stat) and not force:
        return Captured(str(path), "unchanged", cursor.namespace, cursor.source_id, cursor.turns)
    chunk = reader(client)(path, 0)
    where = chunk.meta.cwd or cwd
    new = Cursor(
        str(path),
        chunk.end_offset,
        stat.st_size,
        stat.st_mtime_ns,
        parser=chunk.parser,
        session_id=chunk.meta.session_id,
        turns=len(chunk.turns),
    )
    if where is None:
        return Captured(
            str(path), "skipped", turns=len(chunk.turns), reason="the transcript names no working directory"
        )
    from memory_substrate.hooks.project import excluded, project_namespace

    if excluded(where, config):
        save_cursor(config.state_dir, new)
        return Captured(str(path), "excluded", turns=len(chunk.turns))
    namespace = project_namespace(where, config)
    new.namespace = namespace
    if not chunk.turns:
        save_cursor(config.state_dir, new)
        return Captured(str(path), "empty", namespace)
    from memory_substrate.hooks.transcripts.common import to_conversation

    result = memory(namespace).ingest(
        "conversation", dict(to_conversation(chunk)), {"detail": "compact", "max_items": 1}
    )
    source_id, appended, segments = (
        result.get("source_id"),
        result.get("appended_messages"),
        result.get("segment_count"),
    )
    new.source_id = source_id if isinstance(source_id, str) else None  # a conversation's is always one
    if result.get("status") == "noop":
        status, added = "noop", 0
    elif isinstance(appended, int):  # a count, or absent when the episode is new
        status, added = "appended", appended
    else:
        status, added = "stored", segments if isinstance(segments, int) and segments else len(chunk.turns)
    save_cursor(config.state_dir, new)
    done = Captured(str(path), status, namespace, new.source_id, len(chunk.turns), added)
    if status == "stored" and cursor is not None and cursor.source_id and cursor.source_id != new.source_id:
        # The earlier capture's turns are not a prefix of these (a parser of another version read
        # it): the session is now a second episode. Said, so that it is found and not repeated.
        done.reason = (
            f"earlier turns changed (parser {cursor.parser} -> {chunk.parser}); stored as a new episode"
        )
    return done


def transcripts_of(client: str, transcript: Path) -> list[Path]:
    """A session's transcript and those of the subagents it ran (each one its own thread)."""
    paths = [transcript]
    if client == "claude-code":
        from memory_substrate.hooks.transcripts.claude_code import subagent_transcripts

        paths += subagent_transcripts(transcript)
    return paths


def codex_home(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else Path.home() / ".codex"


def find_codex_rollout(session_id: str, environ: dict[str, str] | None = None) -> Path | None:
    """A Codex session's rollout when the event names none: ``sessions/Y/M/D/rollout-*-<id>.jsonl``,
    newest day first."""
    root = codex_home(environ) / "sessions"
    if not session_id or not root.is_dir():
        return None
    days = sorted(
        (
            d
            for y in root.iterdir()
            if y.is_dir()
            for m in y.iterdir()
            if m.is_dir()
            for d in m.iterdir()
            if d.is_dir()
        ),
        reverse=True,
    )
    for day in days:
        found = sorted(day.glob(f"rollout-*{session_id}.jsonl"))
        if found:
            return found[-1]
    return None
