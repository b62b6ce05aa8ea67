"""One scripted session through a real client, and what the client recorded of it.

Claude Code runs with ``--output-format stream-json --include-hook-events`` (each hook's
``hook_started`` / ``hook_response`` with its stdout and exit code) and ``--debug-file``, whose
lines ``Hooks: EVENT [COMMAND] finished with status N (MS ms)`` are the client's own timing of
every command hook; its transcript's ``hook_success`` attachments and ``stop_hook_summary``
records carry ``durationMs`` for some events too, and are kept beside. Codex records no hook
run or duration (neither the rollout nor its logs), so a Codex session has none.

The scripted model is the loopback stub of tests/agents: a ``Learn`` session runs its shell
commands through the client's real tool (Bash / exec_command) and then says what it found; a
``Use`` session answers at once when the facts it needs reached its first request, else it
looks them up again first.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sessions_scenarios import Learn, Project, Session, Use

from tests.agents import anthropic_stub as an
from tests.agents import openai_stub as oa
from tests.agents.clients import run_claude, run_codex
from tests.agents.stub_server import all_text

OPEN = "<memory-substrate-context>"
CLOSE = "</memory-substrate-context>"
_DEBUG_HOOK = re.compile(
    r"Hooks: (?P<event>[A-Za-z]+)(?::[\w-]+)? \[(?P<command>.*?)\] finished with status "
    r"(?P<status>-?\d+) \((?P<ms>\d+)ms\)"
)
_GIT = ["-c", "user.name=dev", "-c", "user.email=dev@example.com", "-c", "commit.gpgsign=false"]


def make_repo(path: Path, project: Project) -> Path:
    """The project as a git repository with its files committed and its ``origin`` remote."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in project.files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    for cmd in (
        ["init", "-q", "-b", "main"],
        ["remote", "add", "origin", project.origin],
        ["add", "-A"],
        [*_GIT, "commit", "-qm", f"{project.name}: initial import"],
    ):
        subprocess.run(["git", *cmd], cwd=path, check=True, capture_output=True)
    return path


@dataclass
class HookRun:
    event: str
    ms: float | None  # the client's duration, None where it recorded none
    status: int | None
    source: str  # where the figure comes from: "debug-log", "transcript"
    output: str = ""  # what the hook printed (stream-json hook_response)


@dataclass
class SessionRun:
    """A finished session: what the model received, what the client recorded."""

    client: str
    returncode: int
    seconds: float
    session_id: str | None
    transcript: Path | None
    requests: list[dict[str, Any]]  # the model requests' bodies, in order
    hooks: list[HookRun] = field(default_factory=list)  # the debug log's timings (Claude Code)
    recorded: list[HookRun] = field(default_factory=list)  # durations the transcript holds
    outputs: dict[str, str] = field(default_factory=dict)  # event -> additionalContext it printed
    stderr: str = ""

    def first_text(self) -> str:
        return request_text(self.requests[0]) if self.requests else ""

    def all_text(self) -> str:
        return "\n".join(request_text(b) for b in self.requests)


def request_text(body: dict[str, Any]) -> str:
    keys = ("system", "messages", "instructions", "input")
    return all_text({k: body.get(k) for k in keys})


def injected_spans(text: str) -> list[str]:
    return re.findall(re.escape(OPEN) + r"(.*?)" + re.escape(CLOSE), text, re.S)


def reached(text: str, phrases: tuple[str, ...]) -> bool:
    low = text.lower()
    return all(p.lower() in low for p in phrases)


# --- the scripted model -------------------------------------------------------------------------
def claude_script(session: Session, prompt: str, needed: tuple[str, ...]) -> list[Any]:
    if isinstance(session, Learn):
        return [[an.bash(cmd, "Look")] for cmd in session.tools] + [an.text(session.says)]
    return _use_script(session, prompt, needed, lambda cmd: [an.bash(cmd, "Look it up")], an.text)


def codex_script(session: Session, prompt: str, needed: tuple[str, ...]) -> list[Any]:
    if isinstance(session, Learn):
        return [[oa.exec_command(cmd)] for cmd in session.tools] + [oa.say(session.says)]
    return _use_script(session, prompt, needed, lambda cmd: [oa.exec_command(cmd)], oa.say)


def _use_script(
    session: Use, prompt: str, needed: tuple[str, ...], tool: Callable[[str], Any], say: Callable[[str], Any]
) -> list[Any]:
    """Answer at once when every needed phrase is in the first request (the prompt aside), else
    look the facts up first. A per-session stub, so replies left unasked are simply dropped."""
    if not session.lookup:
        return [say(session.answer)]

    def first(body: dict[str, Any]) -> Any:
        if needed and reached(request_text(body).replace(prompt, ""), needed):
            return say(session.answer)
        return tool(session.lookup[0])

    return [first, *(tool(cmd) for cmd in session.lookup[1:]), say(session.answer)]


# --- one session --------------------------------------------------------------------------------
def claude_session(
    project_dir: Path,
    home: Path,
    session: Session,
    needed: tuple[str, ...],
    env: dict[str, str],
    debug_file: Path,
    hook_command: str = "memory-substrate",
) -> SessionRun:
    with an.AnthropicStub(claude_script(session, session.prompt, needed)) as stub:
        run = run_claude(
            project_dir,
            home,
            stub,
            session.prompt,
            env=env,
            extra_args=(
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-hook-events",
                "--debug-file",
                str(debug_file),
            ),
        )
        requests = stub.model_requests
    out = SessionRun(
        "claude-code",
        run.returncode,
        run.duration_s,
        run.session_id,
        run.transcript,
        requests,
        stderr=run.stderr[-2000:],
    )
    out.outputs = _stream_outputs(run.stdout)
    out.hooks = debug_hook_runs(debug_file, hook_command)
    out.recorded = transcript_hook_runs(run.transcript, hook_command) if run.transcript else []
    return out


def codex_session(
    project_dir: Path, home: Path, session: Session, needed: tuple[str, ...], env: dict[str, str]
) -> SessionRun:
    with oa.OpenAIStub(codex_script(session, session.prompt, needed)) as stub:
        run = run_codex(project_dir, home, stub, session.prompt, bypass_hook_trust=False, env=env)
        requests = stub.model_requests
    out = SessionRun(
        "codex",
        run.returncode,
        run.duration_s,
        run.session_id,
        run.transcript,
        requests,
        stderr=run.stderr[-2000:],
    )
    # Codex reports no hook runs: what a hook handed over is read from the first request (its
    # developer messages), by the markers.
    if requests:
        spans = [m for m in oa.messages(requests[0], "developer") if m.startswith(OPEN)]
        if spans:
            out.outputs["SessionStart"] = spans[0]
        if len(spans) > 1:
            out.outputs["UserPromptSubmit"] = spans[1]
    return out


def _stream_outputs(stdout: str) -> dict[str, str]:
    """event -> the additionalContext our hook printed, from the stream's hook_response events."""
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("type") != "system" or ev.get("subtype") != "hook_response":
            continue
        printed = (ev.get("stdout") or "").strip()
        if not printed:
            continue
        try:
            context = json.loads(printed)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            continue
        found[str(ev.get("hook_event"))] = str(context)
    return found


_DEBUG_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z ")
_HTTP_POST = re.compile(r"Hooks: HTTP hook POST to (?P<url>\S+/hooks/[\w-]+/event)\b")
_HTTP_ANSWER = re.compile(r"Hooks: HTTP hook response status (?P<status>\d+)")


def debug_hook_runs(path: Path, command: str = "memory-substrate") -> list[HookRun]:
    """The hooks whose command holds ``command``, as the client's debug log timed them; and our
    ``http`` hooks (setup --serve-url), from the log's own times of the POST and of its answer.
    Setup writes an http hook for UserPromptSubmit only, so that is the event they are counted as."""
    if not path.exists():
        return []
    runs = []
    posted: datetime | None = None
    for line in path.read_text(errors="replace").splitlines():
        m = _DEBUG_HOOK.search(line)
        if m and command in m["command"]:
            runs.append(HookRun(m["event"], float(m["ms"]), int(m["status"]), "debug-log"))
            continue
        stamp = _DEBUG_TIME.match(line)
        if stamp is None:
            continue
        if _HTTP_POST.search(line):
            posted = datetime.fromisoformat(stamp[1])
        elif (answer := _HTTP_ANSWER.search(line)) and posted is not None:
            took = (datetime.fromisoformat(stamp[1]) - posted).total_seconds() * 1000
            runs.append(HookRun("UserPromptSubmit", round(took, 1), int(answer["status"]), "debug-log"))
            posted = None
    return runs


def transcript_hook_runs(path: Path, command: str = "memory-substrate") -> list[HookRun]:
    """The hook durations Claude Code wrote into the transcript itself."""
    runs = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        att = rec.get("attachment") or {}
        if (
            rec.get("type") == "attachment"
            and att.get("type") == "hook_success"
            and "durationMs" in att
            and command in str(att.get("command"))
        ):
            runs.append(
                HookRun(
                    str(att.get("hookEvent")), float(att["durationMs"]), att.get("exitCode"), "transcript"
                )
            )
        if rec.get("type") == "system" and rec.get("subtype") == "stop_hook_summary":
            for info in rec.get("hookInfos") or []:
                if command in str(info.get("command")) and "durationMs" in info:
                    runs.append(HookRun("Stop", float(info["durationMs"]), None, "transcript"))
    return runs
