"""What the end-to-end tests share: a developer machine (its own HOME and store), projects that
are real git repositories, ``memory-substrate setup`` run as a user runs it, sessions of the real
clients against the scripted loopback model, and what the store and the transcripts hold after.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agents import anthropic_stub as an
from tests.agents import openai_stub as oa
from tests.agents.clients import CompletedRun, binary, run_claude, run_codex
from tests.agents.stub_server import all_text
from tests.helpers import entry_point

OPEN = "<memory-substrate-context>"
CLOSE = "</memory-substrate-context>"
INJECTED_HEADER = "Memory of this project from earlier sessions"
FAKE_KEY = "sk-proj-T3stOnlyK3yV9xWq2Lm8Np4Rz6Yb1Hc5Jd7Fg0Ks"
_KEEP = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "TZ")
_GIT = ["-c", "user.name=dev", "-c", "user.email=dev@example.com", "-c", "commit.gpgsign=false"]


def cli() -> list[str]:
    exe = entry_point()
    return [exe] if exe else [sys.executable, "-m", "memory_substrate.cli.main"]


def request_text(body: dict[str, Any]) -> str:
    return all_text({k: body.get(k) for k in ("system", "messages", "instructions", "input")})


def spans(text: str) -> list[str]:
    return re.findall(re.escape(OPEN) + r"(.*?)" + re.escape(CLOSE), text, re.S)


@dataclass
class Session:
    """A finished client run and every model request its stub received."""

    run: CompletedRun
    requests: list[dict[str, Any]]

    @property
    def first(self) -> str:
        return request_text(self.requests[0])

    @property
    def everything(self) -> str:
        return "\n".join(request_text(b) for b in self.requests)


class Machine:
    """One developer's machine: a HOME the clients keep their state in, and a store root."""

    def __init__(self, base: Path, root: Path | None = None) -> None:
        self.home = base / "home"
        self.root = root or base / "store"
        self.home.mkdir(parents=True, exist_ok=True)
        self.codex_home = self.home / ".codex"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: os.environ[k] for k in _KEEP if k in os.environ}
        env.update(HOME=str(self.home), MEMORY_SUBSTRATE_ROOT=str(self.root), CODEX_HOME=str(self.codex_home))
        env.update(extra)
        return env

    def project(self, name: str, files: dict[str, str], origin: str | None = None) -> Path:
        path = self.home / "src" / name
        path.mkdir(parents=True)
        for rel, text in files.items():
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_text(text)
        steps = [["init", "-q", "-b", "main"], ["add", "-A"], [*_GIT, "commit", "-qm", "initial"]]
        if origin:
            steps.insert(1, ["remote", "add", "origin", origin])
        for step in steps:
            subprocess.run(["git", *step], cwd=path, check=True, capture_output=True)
        return path

    def cli(
        self, *args: str, cwd: Path | None = None, expect: int | None = 0
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [*cli(), *args],
            cwd=cwd or self.home,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        if expect is not None:
            assert proc.returncode == expect, f"{args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def setup_claude(self, project: Path) -> None:
        out = self.cli("setup", "claude-code", "--dir", str(project), cwd=project).stdout
        assert (project / ".claude" / "settings.local.json").is_file(), out

    def setup_codex(self) -> str:
        self.codex_home.mkdir(parents=True, exist_ok=True)
        return self.cli("setup", "codex", "--user", "--codex-bin", str(binary("codex"))).stdout

    def claude(
        self, project: Path, prompt: str, script: list[Any], env: dict[str, str] | None = None
    ) -> Session:
        with an.AnthropicStub(script) as stub:
            run = run_claude(project, self.home, stub, prompt, env=env)
            return Session(run, stub.model_requests)

    def codex(
        self, project: Path, prompt: str, script: list[Any], env: dict[str, str] | None = None
    ) -> Session:
        with oa.OpenAIStub(script) as stub:
            run = run_codex(project, self.home, stub, prompt, bypass_hook_trust=False, env=env)
            return Session(run, stub.model_requests)


def namespace_of(project: Path) -> str:
    from memory_substrate.hooks.project import project_namespace

    return str(project_namespace(str(project)))


def episodes(root: Path, namespace: str) -> dict[str, list[str]]:
    """thread id -> the texts of its turns, for every conversation episode of ``namespace``."""
    from memory_substrate import Memory, Settings
    from memory_substrate.hooks.inject import segment_count

    if not (root / "memory.sqlite3").is_file():
        return {}
    out: dict[str, list[str]] = {}
    with Memory(Settings(root=root, namespace=namespace, embedder="none")) as mem, mem.runtime.read() as read:
        for src in read.list_objects(
            object_types=["source"], kinds=["conversation"], statuses=["active"], limit=1000
        ):
            count = segment_count(src)
            thread = str(src.payload.get("thread_id"))
            assert thread not in out, f"two episodes for {thread}"
            out[thread] = [s.text for s in read.get_segments(src.id, offset=0, limit=max(count, 1))]
    return out


def hook_records(transcript: Path) -> dict[str, list[dict[str, Any]]]:
    """What Claude Code recorded of our hooks' runs in a transcript: ``hook_success`` attachments
    (with ``durationMs`` and ``exitCode``) and the ``stop_hook_summary`` records."""
    found: dict[str, list[dict[str, Any]]] = {"success": [], "stop": []}
    for line in transcript.read_text().splitlines():
        rec = json.loads(line)
        att = rec.get("attachment") or {}
        if (
            rec.get("type") == "attachment"
            and att.get("type") == "hook_success"
            and "memory-substrate" in str(att.get("command"))
        ):
            found["success"].append(att)
        if rec.get("type") == "system" and rec.get("subtype") == "stop_hook_summary":
            found["stop"].append(rec)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``memory-substrate serve --transport http`` on a store, until stopped."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = root.parent / f"serve-{self.port}.log"
        root.mkdir(parents=True, exist_ok=True)
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [*cli(), "--root", str(root), "serve", "--transport", "http", "--port", str(self.port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()[-2000:]
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"serve did not listen within 60 s\n{self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
