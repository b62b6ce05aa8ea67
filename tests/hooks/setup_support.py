"""What the set-up tests share: running ``memory-substrate setup`` as a user does (the installed
console script, in a temporary HOME), and a stand-in hook command that records each run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers import entry_point

# The neutral part of the caller's environment a set-up run inherits (no real HOME, no CODEX_HOME).
_KEEP = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "TZ")


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEEP if k in os.environ}
    env["HOME"] = str(home)
    env.update(extra)
    return env


def run_setup(
    *args: str, home: Path, cwd: Path, env: dict[str, str] | None = None, expect: int | None = 0
) -> subprocess.CompletedProcess[str]:
    """``memory-substrate setup ARGS`` in ``cwd`` with HOME = ``home``; checks the exit status."""
    exe = entry_point()
    cmd = [exe] if exe else [sys.executable, "-m", "memory_substrate.cli.main"]
    proc = subprocess.run(
        [*cmd, "setup", *args],
        cwd=cwd,
        env=env or env_for(home),
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    if expect is not None:
        assert proc.returncode == expect, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def report(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The JSON report of a run made with ``--json``."""
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def snapshot(*paths: Path) -> dict[Path, bytes | None]:
    return {p: (p.read_bytes() if p.exists() else None) for p in paths}


def recorder(folder: Path, log: Path) -> Path:
    """A ``memory-substrate`` stand-in in ``folder`` (a path with a space in it) that appends its
    arguments and stdin to ``log``: evidence that a client ran a hook, whatever the hook does."""
    script = folder / "memory-substrate"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\ncat >> '{log}'\nprintf '\\n' >> '{log}'\n"
    )
    script.chmod(0o755)
    return script


def recorded_events(log: Path) -> list[str]:
    """The ``hook_event_name`` of every hook run the recorder saw."""
    names = []
    for line in log.read_text().splitlines() if log.exists() else []:
        if line.startswith("{") and '"hook_event_name"' in line:
            names.append(json.loads(line)["hook_event_name"])
    return names
