"""Import the transcripts a client already keeps: ``memory-substrate backfill claude-code|codex [PATH]``.

Claude Code keeps a session's transcript for 30 days (``~/.claude/projects/<project>/<session>.jsonl``,
its subagents' beside it); Codex keeps rollouts under ``$CODEX_HOME/sessions/YYYY/MM/DD/``. Each
transcript goes to the namespace of its own project (the working directory it records), as the
hooks would have captured it, oldest first. The same cursors as the hooks' are used and kept, so
a second run reads nothing that did not change, a transcript that grew appends only its new
turns, and a capture the hooks make later continues where the backfill stopped.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from memory_substrate.hooks.capture import Captured, IngestTarget, capture, codex_home
from memory_substrate.hooks.config import HookConfig

Progress = Callable[[int, int, str], None]


def default_path(client: str, environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if client == "claude-code":
        base = (
            Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
            if env.get("CLAUDE_CONFIG_DIR")
            else Path.home() / ".claude"
        )
        return base / "projects"
    return codex_home(dict(env)) / "sessions"


def transcripts(client: str, path: Path) -> list[Path]:
    """The transcripts under ``path`` (or ``path`` itself), oldest first."""
    if path.is_file():
        return [path]
    pattern = "*.jsonl" if client == "claude-code" else "rollout-*.jsonl"
    found = [p for p in path.rglob(pattern) if p.is_file()]
    return sorted(found, key=lambda p: (_mtime(p), str(p)))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class BackfillReport(TypedDict):
    """A backfill's summary as the command prints it: ``Summary``'s fields, its rates when it took time."""

    transcripts: int
    sessions: int
    stored: int
    appended: int
    unchanged: int
    turns: int
    added: int
    skipped: int
    errors: int
    seconds: float
    namespaces: dict[str, int]
    failures: list[dict[str, str]]  # the first 20: path and error
    sessions_per_s: NotRequired[float]
    turns_per_s: NotRequired[float]


@dataclass
class Summary:
    transcripts: int = 0
    sessions: int = 0  # transcripts with turns, in memory now (stored, appended or already there)
    stored: int = 0  # new episodes
    appended: int = 0  # episodes that grew
    unchanged: int = 0  # not read again: as at the last capture
    turns: int = 0  # turns read from transcripts that were read
    added: int = 0  # messages the store did not have
    skipped: int = 0  # excluded projects, empty transcripts, no working directory
    errors: int = 0
    seconds: float = 0.0
    namespaces: dict[str, int] = field(default_factory=dict)  # namespace -> sessions
    failures: list[dict[str, str]] = field(default_factory=list)

    def add(self, done: Captured) -> None:
        if done.status in ("stored", "appended", "noop", "unchanged"):
            self.sessions += 1
            if done.namespace:
                self.namespaces[done.namespace] = self.namespaces.get(done.namespace, 0) + 1
        if done.status == "stored":
            self.stored += 1
        elif done.status == "appended":
            self.appended += 1
        elif done.status == "unchanged":
            self.unchanged += 1
        elif done.status in ("excluded", "empty", "skipped"):
            self.skipped += 1
        if done.status != "unchanged":
            self.turns += done.turns
        self.added += done.added

    def as_dict(self) -> BackfillReport:
        out: BackfillReport = {
            "transcripts": self.transcripts,
            "sessions": self.sessions,
            "stored": self.stored,
            "appended": self.appended,
            "unchanged": self.unchanged,
            "turns": self.turns,
            "added": self.added,
            "skipped": self.skipped,
            "errors": self.errors,
            "seconds": round(self.seconds, 2),
            "namespaces": self.namespaces,
            "failures": self.failures[:20],
        }
        if self.seconds > 0:
            out["sessions_per_s"] = round(self.sessions / self.seconds, 2)
            out["turns_per_s"] = round(self.turns / self.seconds, 1)
        return out


def backfill(
    client: str,
    paths: list[Path],
    config: HookConfig,
    memory: Callable[[str], IngestTarget],
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> Summary:
    summary = Summary(transcripts=len(paths))
    started = time.perf_counter()
    for i, path in enumerate(paths):
        try:
            summary.add(capture(client, path, config, memory, force=force))
        except Exception as exc:  # one unreadable transcript does not stop the others
            summary.errors += 1
            from memory_substrate.hooks.failopen import scrubbed

            message = scrubbed(str(getattr(exc, "message", None) or exc))
            summary.failures.append({"path": str(path), "error": f"{type(exc).__name__}: {message}"[:500]})
        if progress is not None:
            progress(i + 1, len(paths), path.name)
    summary.seconds = time.perf_counter() - started
    return summary
