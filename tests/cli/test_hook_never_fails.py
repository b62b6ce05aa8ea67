"""`memory-substrate hook ...` exits 0 even when the command line or the environment is one the
group refuses before the hook runs (exit 2 would block the client's prompt); the reason goes to
the hooks' log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EVENT = json.dumps(
    {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": "/nowhere", "prompt": "hello there"}
)


# The installed script's entry (which reads a plain hook command line itself) and the click group
# behind it must treat every command line alike.
ENTRIES = ("memory_substrate.cli.entry", "memory_substrate.cli.main")


def _run(root: Path, *args: str, entry: str = ENTRIES[0], **env: str) -> subprocess.CompletedProcess[str]:
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    run_env.update(MEMORY_SUBSTRATE_ROOT=str(root), **env)
    return subprocess.run(
        [sys.executable, "-m", entry, *args],
        input=EVENT,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "args,env,logged",
    [
        # What the hooks do not use (the namespace: they take the project's) or can do without (a
        # root they cannot expand: they read MEMORY_SUBSTRATE_ROOT as hooks/run.py does) stops nothing.
        (("hook", "claude-code"), {"MEMORY_SUBSTRATE_NAMESPACE": "not a namespace"}, False),
        (("--root", "~nosuchuser-here/x", "hook", "codex"), {}, False),
        # A command line refused before the hook runs.
        (("--bogus-option", "hook", "claude-code"), {}, True),
        (("hook",), {}, True),
        (("hook", "claude-code", "--root", "~nosuchuser-here/x"), {}, True),
    ],
)
@pytest.mark.parametrize("entry", ENTRIES)
def test_a_refused_hook_command_line_exits_zero_and_logs(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], logged: bool, entry: str
) -> None:
    done = _run(tmp_path, *args, entry=entry, **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    if logged:
        assert "before the hook ran" in (tmp_path / "logs" / "hooks.log").read_text()


@pytest.mark.parametrize("entry", ENTRIES)
def test_other_commands_still_fail_as_before(tmp_path: Path, entry: str) -> None:
    assert _run(tmp_path, "--bogus-option", "status", entry=entry).returncode == 2
    assert _run(tmp_path, "status", entry=entry, MEMORY_SUBSTRATE_NAMESPACE="not a namespace").returncode == 2
