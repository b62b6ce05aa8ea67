"""What the hook tests share: running ``memory-substrate hook CLIENT`` as a client does (the
installed console script, the event JSON on stdin, a temporary HOME and store root), writing
transcripts in Claude Code's JSONL shape, and reading back what the store holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers import entry_point

_KEEP = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "TZ")
OPEN = "<memory-substrate-context>"
CLOSE = "</memory-substrate-context>"


class Hooks:
    """One user's machine: a HOME, a store root, and the hook command run against them."""

    def __init__(self, tmp: Path, **env: str) -> None:
        self.home = tmp / "home"
        self.root = tmp / "store"
        self.home.mkdir(parents=True, exist_ok=True)
        self.env = {k: os.environ[k] for k in _KEEP if k in os.environ}
        # A deadline no loaded test machine reaches: the tests that check deadlines set their own.
        self.env.update(
            HOME=str(self.home),
            MEMORY_SUBSTRATE_ROOT=str(self.root),
            MEMORY_SUBSTRATE_HOOK_TIMEOUT_S="120",
            **env,
        )
        self.seconds: list[float] = []

    def run(
        self,
        event: dict[str, Any],
        *,
        client: str = "claude-code",
        env: dict[str, str] | None = None,
        raw: bytes | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        exe = entry_point()
        cmd = [exe] if exe else [sys.executable, "-m", "memory_substrate.cli.main"]
        data = raw if raw is not None else json.dumps(event).encode()
        started = time.perf_counter()
        proc = subprocess.run(
            [*cmd, "hook", client],
            input=data.decode("utf-8", "replace"),
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**self.env, **(env or {})},
        )
        self.seconds.append(time.perf_counter() - started)
        # Whatever happened, the client is never blocked: exit 0, always.
        assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def backfill(self, client: str, *args: str, expect: int = 0) -> dict[str, Any]:
        exe = entry_point()
        cmd = [exe] if exe else [sys.executable, "-m", "memory_substrate.cli.main"]
        proc = subprocess.run(
            [*cmd, "backfill", client, *args, "--progress", "none"],
            capture_output=True,
            text=True,
            timeout=300,
            env=self.env,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == expect, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return dict(json.loads(proc.stdout))

    def log(self) -> str:
        path = self.root / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


def context(proc: subprocess.CompletedProcess[str], event: str) -> str | None:
    """The additionalContext a hook printed (checked to be the clients' JSON shape), or None."""
    if not proc.stdout.strip():
        return None
    answer = json.loads(proc.stdout)
    assert set(answer) == {"hookSpecificOutput"}, answer
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == event
    text = out["additionalContext"]
    assert text.startswith(OPEN + "\n") and text.endswith("\n" + CLOSE), text
    return str(text)


class Transcript:
    """A Claude Code session transcript (``~/.claude/projects/<project>/<session>.jsonl``)."""

    def __init__(self, path: Path, session_id: str, cwd: Path) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.n = 0
        self.hour = sum(session_id.encode()) % 24  # sessions of one test happen at different times
        path.parent.mkdir(parents=True, exist_ok=True)

    def _line(self, kind: str, message: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        return {
            "type": kind,
            "sessionId": self.session_id,
            "cwd": str(self.cwd),
            "gitBranch": "main",
            "version": "2.1.328",
            "uuid": f"{self.session_id}-{self.n}",
            "timestamp": f"2026-11-{1 + self.n // 60:02d}T{self.hour:02d}:{self.n % 60:02d}:00.000Z",
            "message": message,
        }

    def add(self, *turns: tuple[str, str]) -> Transcript:
        with self.path.open("a", encoding="utf-8") as fh:
            for role, text in turns:
                if role == "user":
                    line = self._line("user", {"role": "user", "content": text})
                else:
                    line = self._line(
                        "assistant",
                        {
                            "id": f"msg-{self.n}",
                            "role": "assistant",
                            "content": [{"type": "text", "text": text}],
                        },
                    )
                fh.write(json.dumps(line) + "\n")
        return self

    def tool(self, name: str, command: str, result: str) -> Transcript:
        """A tool call of the assistant's and its result, as Claude Code writes them."""
        call_id = f"toolu-{self.session_id}-{self.n}"
        call = self._line(
            "assistant",
            {
                "id": f"msg-{self.n}",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": {"command": command}}],
            },
        )
        done = self._line(
            "user",
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}]},
        )
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(call) + "\n" + json.dumps(done) + "\n")
        return self

    def event(self, name: str, **fields: Any) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.path),
            "cwd": str(self.cwd),
            "hook_event_name": name,
            "permission_mode": "default",
            **fields,
        }


def project(tmp: Path, name: str) -> Path:
    """A git repository (a ``.git`` folder is all the hooks look for)."""
    folder = tmp / name
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def opened(root: Path, namespace: str) -> Iterator[Any]:
    from memory_substrate.app import Memory
    from memory_substrate.settings import Settings

    mem = Memory(Settings(root=root, namespace=namespace, embedder="none"))
    try:
        yield mem
    finally:
        mem.close()


def episodes(root: Path, namespace: str) -> list[tuple[str, int]]:
    """(title, segment count) of each conversation in the namespace."""
    with opened(root, namespace) as mem, mem.runtime.read() as session:
        sources = session.list_objects(object_types=["source"], kinds=["conversation"], limit=1000)
        return sorted((s.title, int(s.metadata.get("segment_count") or 0)) for s in sources)


def texts(root: Path, namespace: str) -> str:
    """Every stored turn of the namespace, one a line."""
    with opened(root, namespace) as mem, mem.runtime.read() as session:
        sources = session.list_objects(object_types=["source"], kinds=["conversation"], limit=1000)
        return "\n".join(seg.text for s in sources for seg in session.get_segments(s.id))
