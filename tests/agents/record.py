"""Record real Claude Code and Codex transcripts for the parser tests.

    .venv/bin/python -m tests.agents.record [claude-code|codex ...]

Each scenario runs the real client against the scripted loopback stub in a small project (a
README, a failing test, a ``.env`` holding a fake key), with hooks that inject context wrapped in
our markers, and copies the transcripts into ``tests/data/transcripts/<client>/``. The temporary
folder is rewritten to ``/home/dev`` (the project is ``/home/dev/shop``) so that recordings do not
name a random path; everything else is as the client wrote it.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.agents import anthropic_stub as an
from tests.agents import openai_stub as oa
from tests.agents.clients import ROOT, CompletedRun, codex_home, run_claude, run_codex

OUT = ROOT / "tests" / "data" / "transcripts"
FAKE_KEY = "sk-proj-FAKEa1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
START_CONTEXT = (
    "<memory-substrate-context>\nEarlier sessions: the payments service is owned by Dana; "
    "discounts apply from 100 EUR.\n</memory-substrate-context>"
)
PROMPT_CONTEXT = (
    "<memory-substrate-context>\nRelevant: test_app.py checks the 100 EUR boundary."
    "\n</memory-substrate-context>"
)
SECOND_PROMPT = (
    "Also add a CHANGELOG entry. <private>the client is ACME Corp</private> "
    "For the record, the staging password: hunter2-staging"
)

README = "# shop\n\nA tiny shop. Orders of 100 EUR or more get a 10% discount.\n\nRun the tests with `python3 test_app.py`.\n"
APP = "def discount(total):\n    return total * 0.9 if total > 100 else total\n"
TEST = "from app import discount\n\nassert discount(100) == 90, f'discount(100) = {discount(100)}'\nprint('ok')\n"


def make_project(path: Path, git: bool = True) -> Path:
    """The scenarios' project: a README, a module with an off-by-one, its failing test, a .env."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "README.md").write_text(README)
    (path / "app.py").write_text(APP)
    (path / "test_app.py").write_text(TEST)
    (path / ".env").write_text(f"OPENAI_API_KEY={FAKE_KEY}\nDEBUG=1\n")
    (path / ".gitignore").write_text(".env\n")
    if git:
        git_env = ["-c", "user.name=dev", "-c", "user.email=dev@example.com"]
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
        subprocess.run(["git", "add", "-A"], cwd=path, check=True)
        subprocess.run(["git", *git_env, "commit", "-qm", "shop"], cwd=path, check=True)
    return path


def context_command(event: str, context: str) -> str:
    """A hook command printing ``context`` as the client's additionalContext for ``event``."""
    payload = json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})
    return f"printf %s {shlex.quote(payload)}"


def hooks_config() -> dict[str, Any]:
    """SessionStart and UserPromptSubmit inject marked context; Stop only reads its input."""

    def group(command: str) -> list[dict[str, Any]]:
        return [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}]

    return {
        "hooks": {
            "SessionStart": group(context_command("SessionStart", START_CONTEXT)),
            "UserPromptSubmit": group(context_command("UserPromptSubmit", PROMPT_CONTEXT)),
            "Stop": group("cat > /dev/null"),
        }
    }


# -- Claude Code ---------------------------------------------------------------------------------
SUBAGENT_PROMPT = "Find every caller of discount() in this project and report file:line."


def claude_script(project: Path) -> list[an.Reply]:
    app = str(project / "app.py")
    return [
        [
            an.Thinking("The user says a test fails. Start with the README, then the code and the test."),
            an.Text("Let me look at the README first."),
            an.bash("cat README.md", "Show the README"),
        ],
        [an.read(app)],
        [an.bash("python3 test_app.py", "Run the failing test")],
        [an.read(str(project / "docs" / "design.md"))],
        [an.bash("cat .env", "Show the environment file")],
        [an.bash("seq 1 1500", "Print a long output")],
        [an.agent(SUBAGENT_PROMPT, "Find discount callers")],
        [an.ToolUse("Edit", {"file_path": app, "old_string": "total > 100", "new_string": "total >= 100"})],
        [an.bash("python3 test_app.py && echo PASS", "Run the test again")],
        [
            an.Thinking("The boundary was exclusive; now it is inclusive and the test passes."),
            an.Text(
                "Fixed: `discount` used `total > 100`, so an order of exactly 100 EUR got no discount. "
                "It is now `total >= 100` and test_app.py passes."
            ),
        ],
    ]


def claude_second_script(project: Path) -> list[an.Reply]:
    return [
        [
            an.ToolUse(
                "Write",
                {
                    "file_path": str(project / "CHANGELOG.md"),
                    "content": "# Changelog\n\n- Orders of exactly 100 EUR now get the discount.\n",
                },
            )
        ],
        an.text("Added CHANGELOG.md with the fix."),
    ]


def claude_subagent_script() -> list[an.Reply]:
    return [
        [an.bash("grep -rn 'discount(' --include=*.py .", "Find callers")],
        an.text("discount() is defined in ./app.py:1 and called only from ./test_app.py:3."),
    ]


def record_claude(work: Path, out: Path) -> list[Path]:
    home = work / "home"
    project = make_project(home / "shop")
    with an.AnthropicStub(claude_script(project)) as stub:
        stub.subagent(SUBAGENT_PROMPT, claude_subagent_script())
        first = run_claude(
            project, home, stub, "The discount test fails. Find out why and fix it.", hooks_config()
        ).check()
        stub.add(*claude_second_script(project))
        run_claude(project, home, stub, SECOND_PROMPT, resume=first.session_id).check()
        assert stub.remaining == 0, f"{stub.remaining} scripted replies were not asked for"
    written = _copy_claude(first, "debug-session", out)

    plain = work / "plain"
    plain_home = plain / "home"
    bare = make_project(plain_home / "shop", git=False)
    with an.AnthropicStub([an.text("It is a tiny shop with a discount rule and one test.")]) as stub:
        plain_run = run_claude(bare, plain_home, stub, "What does this project do?").check()
    return written + _copy_claude(plain_run, "no-git", out)


def _copy_claude(run: CompletedRun, name: str, out: Path) -> list[Path]:
    assert run.transcript is not None, "no transcript was written"
    dest = out / "claude-code"
    shutil.rmtree(dest / name, ignore_errors=True)
    written = [_scrubbed(run.transcript, dest / f"{name}.jsonl", run.home)]
    for sub in sorted((run.transcript.with_suffix("") / "subagents").glob("*")):
        written.append(_scrubbed(sub, dest / name / "subagents" / sub.name, run.home))
    return written


# -- Codex ---------------------------------------------------------------------------------------
def codex_script() -> list[oa.Reply]:
    patch = (
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: app.py\n@@\n"
        "-    return total * 0.9 if total > 100 else total\n"
        "+    return total * 0.9 if total >= 100 else total\n*** End Patch\nEOF"
    )
    return [
        [
            oa.Reasoning("The user says a test fails. Start with the README, then the code and the test."),
            oa.Message("Let me look at the README first."),
            oa.exec_command("cat README.md"),
        ],
        [oa.exec_command("sed -n '1,40p' app.py")],
        [oa.exec_command("python3 test_app.py")],
        [oa.exec_command("cat docs/design.md")],
        [oa.exec_command("grep OPENAI .env")],
        [oa.exec_command("seq 1 1500")],
        [oa.exec_command(patch)],
        [oa.exec_command("python3 test_app.py && echo PASS")],
        [
            oa.Reasoning("The boundary was exclusive; now it is inclusive and the test passes."),
            oa.Message(
                "Fixed: `discount` used `total > 100`, so an order of exactly 100 EUR got no discount. "
                "It is now `total >= 100` and test_app.py passes."
            ),
        ],
    ]


def codex_second_script() -> list[oa.Reply]:
    return [
        [
            oa.exec_command(
                "printf '# Changelog\\n\\n- Orders of exactly 100 EUR now get the discount.\\n' > CHANGELOG.md"
            )
        ],
        oa.say("Added CHANGELOG.md with the fix."),
    ]


CODEX_SUBAGENT_TASK = "Find every caller of discount() and report file:line."


def _wait_for_spawned(body: dict[str, Any]) -> oa.Reply:
    """wait_agent on the agent that the previous spawn_agent call started (its id is in the output)."""
    spawned = json.loads(oa.function_outputs(body)[-1]["output"])
    return [
        oa.FunctionCall(
            "wait_agent", {"targets": [spawned["agent_id"]], "timeout_ms": 30000}, namespace="multi_agent_v1"
        )
    ]


def record_codex_subagent(home: Path, project: Path, out: Path) -> list[Path]:
    script: list[Any] = [
        [oa.FunctionCall("spawn_agent", {"message": CODEX_SUBAGENT_TASK}, namespace="multi_agent_v1")],
        _wait_for_spawned,
        oa.say("Only test_app.py calls discount(), at line 3."),
    ]
    with oa.OpenAIStub(script) as stub:
        stub.route(
            lambda body: (
                any(CODEX_SUBAGENT_TASK in m for m in oa.messages(body, "user"))
                and not any(m.startswith("Who calls") for m in oa.messages(body, "user"))
            ),
            [
                [oa.exec_command("grep -rn 'discount(' --include=*.py .")],
                oa.say("discount() is defined in ./app.py:1 and called only from ./test_app.py:3."),
            ],
        )
        run = run_codex(project, home, stub, "Who calls discount()? Ask a subagent.").check()
        assert stub.remaining == 0, f"{stub.remaining} scripted replies were not asked for"
    assert run.transcript is not None and run.session_id
    agent = [
        p
        for p in codex_home(home).glob("sessions/*/*/*/rollout-*.jsonl")
        if run.session_id in p.read_text().split("\n", 1)[0] and p != run.transcript
    ]
    assert len(agent) == 1, agent
    dest = out / "codex"
    return [
        _scrubbed(run.transcript, dest / "subagent-main.jsonl", home),
        _scrubbed(agent[0], dest / "subagent-agent.jsonl", home),
    ]


def record_codex(work: Path, out: Path) -> list[Path]:
    home = work / "home"
    project = make_project(home / "shop")
    with oa.OpenAIStub(codex_script()) as stub:
        first = run_codex(
            project, home, stub, "The discount test fails. Find out why and fix it.", hooks_config()
        ).check()
        stub.add(*codex_second_script())
        second = run_codex(project, home, stub, SECOND_PROMPT, resume=first.session_id).check()
        assert stub.remaining == 0, f"{stub.remaining} scripted replies were not asked for"
    dest = out / "codex"
    written = []
    for run, name in ((first, "debug-session"), (second, "debug-session-resumed")):
        assert run.transcript is not None, "no rollout was written"
        if run is second and first.transcript == second.transcript:
            continue  # the resumed turn was appended to the same rollout
        written.append(_scrubbed(run.transcript, dest / f"{name}.jsonl", run.home))
    sub_home = work / "sub" / "home"
    return written + record_codex_subagent(sub_home, make_project(sub_home / "shop"), out)


# -- shared --------------------------------------------------------------------------------------
def _scrubbed(src: Path, dest: Path, home: Path) -> Path:
    """Copy ``src`` to ``dest`` with the temporary home written as ``/home/dev`` (both as a path
    and in the dashed form Claude Code names project folders with)."""
    text = src.read_text()
    for old, new in ((str(home), "/home/dev"), (re.sub(r"[^A-Za-z0-9]", "-", str(home)), "-home-dev")):
        text = text.replace(old, new)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text)
    return dest


def main(argv: list[str]) -> int:
    clients = argv or ["claude-code", "codex"]
    for client in clients:
        with tempfile.TemporaryDirectory(prefix="msrec-") as tmp:
            record = {"claude-code": record_claude, "codex": record_codex}[client]
            for path in record(Path(tmp), OUT):
                print(f"{client}: {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
