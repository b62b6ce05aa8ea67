"""The hooks' own small files under ``<root>/hooks/``: what each session was already given, and
how far each transcript has been captured.

- ``sessions/<client>-<hash>.json``: ``{"session_id", "injected": [ids], "updated_at"}``, the
  memory ids (``src:...#seg-N`` turns, knowledge ids) this session's context already holds, so
  that no prompt is handed them again. Reset when the client compacts or clears the session.
- ``cursors/<hash>.json``: ``{"path", "offset", "size", "mtime_ns", "source_id", "turns",
  "parser", "namespace", "session_id"}`` for each transcript: the byte offset after the last
  complete line captured and the episode it went to. A transcript that has not grown since is
  not read again. Losing a cursor costs one re-read: the next capture sends the whole
  transcript again and the store appends nothing it already has.

Each file is written whole to a temporary name and renamed over the old one, so a reader never
sees half a file; an unreadable file counts as absent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject


SESSIONS = "sessions"
CURSORS = "cursors"
MAX_INJECTED = 5000  # ids kept per session (a session given more starts forgetting the oldest)
SESSION_TTL_S = 14 * 86400  # session files untouched this long are removed


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _read(path: Path) -> JsonObject | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(path: Path, data: Mapping[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False)
    os.replace(tmp, path)


def _now() -> str:
    return datetime.now(UTC).isoformat()


# --- what a session was given -------------------------------------------------------------------
def session_file(state_dir: Path, client: str, session_id: str) -> Path:
    return state_dir / SESSIONS / f"{client}-{_key(session_id)}.json"


def injected(state_dir: Path, client: str, session_id: str) -> set[str]:
    data = _read(session_file(state_dir, client, session_id)) or {}
    ids = data.get("injected")
    return {str(i) for i in ids} if isinstance(ids, list) else set()


def add_injected(state_dir: Path, client: str, session_id: str, ids: list[str]) -> None:
    path = session_file(state_dir, client, session_id)
    data = _read(path) or {}
    old = data.get("injected")
    kept = list(dict.fromkeys([*(map(str, old) if isinstance(old, list) else ()), *ids]))[-MAX_INJECTED:]
    _write(path, {"session_id": session_id, "injected": kept, "updated_at": _now()})


def forget_session(state_dir: Path, client: str, session_id: str) -> None:
    with contextlib.suppress(OSError):
        session_file(state_dir, client, session_id).unlink()


def prune_sessions(state_dir: Path, *, now: float | None = None) -> None:
    """Remove session files untouched for ``SESSION_TTL_S`` (their sessions are long over)."""
    cutoff = (time.time() if now is None else now) - SESSION_TTL_S
    try:
        entries = list(os.scandir(state_dir / SESSIONS))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_file() and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            continue


# --- how far a transcript was captured ----------------------------------------------------------
@dataclass
class Cursor:
    path: str
    offset: int = 0
    size: int = 0
    mtime_ns: int = 0
    source_id: str | None = None
    turns: int = 0
    parser: str | None = None
    namespace: str | None = None
    session_id: str | None = None

    def unchanged(self, stat: os.stat_result) -> bool:
        """The transcript is as it was at the last capture (same size and modification time)."""
        return self.size == stat.st_size and self.mtime_ns == stat.st_mtime_ns and self.offset > 0


def cursor_file(state_dir: Path, transcript: Path) -> Path:
    return state_dir / CURSORS / f"{_key(os.path.normcase(str(transcript)))}.json"


def load_cursor(state_dir: Path, transcript: Path) -> Cursor | None:
    data = _read(cursor_file(state_dir, transcript))
    if data is None or data.get("path") != str(transcript):
        return None
    offset, size, mtime_ns, turns = (data.get(k, 0) for k in ("offset", "size", "mtime_ns", "turns"))
    names = [data.get(k) for k in ("source_id", "parser", "namespace", "session_id")]
    if not (
        isinstance(offset, int)
        and isinstance(size, int)
        and isinstance(mtime_ns, int)
        and isinstance(turns, int)
    ) or any(n is not None and not isinstance(n, str) for n in names):
        return None  # not a file save_cursor wrote: the transcript is read again (captures are idempotent)
    source_id, parser, namespace, session_id = (n if isinstance(n, str) else None for n in names)
    return Cursor(str(transcript), offset, size, mtime_ns, source_id, turns, parser, namespace, session_id)


def save_cursor(state_dir: Path, cursor: Cursor) -> None:
    _write(cursor_file(state_dir, Path(cursor.path)), {**asdict(cursor), "updated_at": _now()})
