"""Run the real Claude Code and Codex CLIs offline against the loopback model stubs.

The clients are npm packages installed by ``scripts/test`` into ``.venv/agents`` (an ignored
folder); :func:`skip_reason` says why a client cannot run here, so a test skips with that reason.
Each run gets its own HOME (Claude Code keeps its state and transcripts under ``$HOME/.claude``,
Codex under ``$CODEX_HOME``, which here is ``$HOME/.codex``) and never sees the caller's
credentials: the environment is rebuilt from a few neutral variables.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.agents.anthropic_stub import AnthropicStub
from tests.agents.openai_stub import OpenAIStub

ROOT = Path(__file__).resolve().parents[2]
AGENTS_DIR = Path(os.environ.get("MEMORY_SUBSTRATE_AGENTS_DIR") or ROOT / ".venv" / "agents")
CLAUDE_VERSION = "2.1.328"
CODEX_VERSION = "0.169.0"
INSTALL_HINT = (
    f"npm install --prefix {AGENTS_DIR} @anthropic-ai/claude-code@{CLAUDE_VERSION} "
    f"@openai/codex@{CODEX_VERSION} (scripts/test does this when npm is present)"
)

# Tools a scripted Claude Code session may use without a permission prompt (-p mode denies others).
CLAUDE_TOOLS = ("Bash", "Read", "Glob", "Grep", "Agent", "Edit", "Write")
# The neutral part of the caller's environment a client inherits.
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "SYSTEMROOT", "TZ")


def binary(client: str) -> Path:
    name = {"claude-code": "claude", "codex": "codex"}[client]
    return AGENTS_DIR / "node_modules" / ".bin" / name


def skip_reason(client: str) -> str | None:
    """Why ``client`` ("claude-code" | "codex") cannot run here, or None when it can."""
    exe = binary(client)
    if not exe.exists():
        return f"{client} is not installed at {exe}: {INSTALL_HINT}"
    try:
        out = subprocess.run(
            [str(exe), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            env=_base_env(Path(os.environ.get("TMPDIR") or "/tmp")),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{client} at {exe} does not start: {exc}"
    if out.returncode != 0:
        return f"{client} at {exe} does not start: {out.stderr.strip()[:300]}"
    return None


def require(client: str) -> Path:
    """The client's executable, or skip the calling test with the reason (printed, not silent)."""
    import pytest

    reason = skip_reason(client)
    if reason:
        print(f"SKIP: {reason}")
        pytest.skip(reason)
    return binary(client)


@dataclass
class CompletedRun:
    """One finished client run."""

    client: str
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    home: Path
    session_id: str | None
    transcript: Path | None
    result: str | None = None  # the final assistant text the client printed
    events: list[dict[str, Any]] = field(default_factory=list)  # parsed JSON output lines

    def check(self) -> CompletedRun:
        assert self.returncode == 0, (
            f"{self.client} exited {self.returncode}\n{self.stdout[-3000:]}\n{self.stderr[-3000:]}"
        )
        return self


def _base_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env["HOME"] = str(home)
    env.update(extra or {})
    return env


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


# -- Claude Code ---------------------------------------------------------------------------------
def claude_transcript(home: Path, session_id: str) -> Path | None:
    found = sorted((home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    return found[0] if found else None


def run_claude(
    project_dir: Path,
    home: Path,
    stub: AnthropicStub,
    prompt: str,
    settings: dict[str, Any] | None = None,
    *,
    resume: str | None = None,
    continue_session: bool = False,
    session_id: str | None = None,
    tools: tuple[str, ...] = CLAUDE_TOOLS,
    env: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
    timeout: float = 180,
) -> CompletedRun:
    """``claude -p PROMPT`` in ``project_dir`` against ``stub``.

    ``settings`` (when given) is written to the project's ``.claude/settings.json``, where a
    project's hooks live. ``resume`` continues that session id; ``continue_session`` the most
    recent one of this directory; otherwise a new session with ``session_id`` (or a fresh UUID).
    """
    exe = require("claude-code")
    home.mkdir(parents=True, exist_ok=True)
    if settings is not None:
        _write_json(project_dir / ".claude" / "settings.json", settings)
    cmd = [str(exe), "-p", prompt, "--output-format", "json", f"--allowedTools={','.join(tools)}"]
    if resume:
        cmd += ["--resume", resume]
        sid: str | None = resume
    elif continue_session:
        cmd += ["--continue"]
        sid = None
    else:
        sid = session_id or str(uuid.uuid4())
        cmd += ["--session-id", sid]
    cmd += list(extra_args)
    run_env = _base_env(
        home,
        {
            "ANTHROPIC_BASE_URL": stub.url,
            "ANTHROPIC_API_KEY": "sk-ant-stub",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            **(env or {}),
        },
    )
    started = time.perf_counter()
    proc = subprocess.run(
        cmd,
        cwd=project_dir,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    took = time.perf_counter() - started
    events: list[dict[str, Any]] = []
    result = None
    try:
        out = json.loads(proc.stdout)
        events = out if isinstance(out, list) else [out]
    except ValueError:
        pass
    for ev in events:
        if isinstance(ev, dict) and ev.get("type") == "result":
            result = ev.get("result")
            sid = ev.get("session_id") or sid
    return CompletedRun(
        "claude-code",
        proc.returncode,
        proc.stdout,
        proc.stderr,
        took,
        home,
        sid,
        claude_transcript(home, sid) if sid else None,
        result,
        events,
    )


# -- Codex ---------------------------------------------------------------------------------------
def codex_home(home: Path) -> Path:
    return home / ".codex"


def codex_transcript(home: Path, session_id: str) -> Path | None:
    found = sorted((codex_home(home) / "sessions").glob(f"*/*/*/rollout-*{session_id}.jsonl"))
    return found[0] if found else None


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def run_codex(
    project_dir: Path,
    home: Path,
    stub: OpenAIStub,
    prompt: str,
    hooks: dict[str, Any] | None = None,
    *,
    resume: str | None = None,
    bypass_hook_trust: bool = True,
    config: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
    timeout: float = 180,
) -> CompletedRun:
    """``codex exec PROMPT`` in ``project_dir`` against ``stub``, CODEX_HOME = ``home/.codex``.

    The stub is configured as a model provider through ``-c`` overrides, so a ``config.toml``
    that ``setup`` wrote is left as it is. ``hooks`` (when given) is written to
    ``$CODEX_HOME/hooks.json``. Commands run without a sandbox or approvals (``exec`` cannot ask).
    ``bypass_hook_trust`` passes ``--dangerously-bypass-hook-trust``; turn it off to check that
    the hooks a setup trusted run on their own. ``resume`` continues that session id.
    """
    exe = require("codex")
    chome = codex_home(home)
    chome.mkdir(parents=True, exist_ok=True)
    if hooks is not None:
        _write_json(chome / "hooks.json", hooks)
    overrides = {
        "model": stub.model,
        "model_provider": "stub",
        "model_providers.stub": {
            "name": "stub",
            "base_url": stub.base_url,
            "wire_api": "responses",
            "env_key": "STUB_API_KEY",
        },
        **(config or {}),
    }
    opts = ["--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    if bypass_hook_trust:
        opts.append("--dangerously-bypass-hook-trust")
    for key, value in overrides.items():
        opts += ["-c", f"{key}={_toml(value)}"]
    opts += list(extra_args)
    cmd = [str(exe), "exec", "resume", *opts, resume, prompt] if resume else [str(exe), "exec", *opts, prompt]
    run_env = _base_env(home, {"CODEX_HOME": str(chome), "STUB_API_KEY": "sk-stub", **(env or {})})
    started = time.perf_counter()
    proc = subprocess.run(
        cmd,
        cwd=project_dir,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    took = time.perf_counter() - started
    events = []
    for line in proc.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    sid = resume
    result = None
    for ev in events:
        if ev.get("type") == "thread.started":
            sid = ev.get("thread_id") or sid
        item = ev.get("item") or {}
        if ev.get("type") == "item.completed" and item.get("type") == "agent_message":
            result = item.get("text")
    return CompletedRun(
        "codex",
        proc.returncode,
        proc.stdout,
        proc.stderr,
        took,
        home,
        sid,
        codex_transcript(home, sid) if sid else None,
        result,
        events,
    )
