"""The installed script's entry (cli/entry.py) reads a plain hook command line itself, without
click: for every such line it hands the hook runner what the click group would, and it leaves
every other line to the group."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory_substrate.cli import entry
from memory_substrate.cli.main import main as group
from memory_substrate.hooks import run as hook_run

ENV_NAMES = (
    "MEMORY_SUBSTRATE_ROOT",
    "MEMORY_SUBSTRATE_DATABASE_URL",
    "MEMORY_SUBSTRATE_EMBEDDER",
    "MEMORY_SUBSTRATE_NAMESPACE",
)


def _groups_call(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, Any]]:
    seen: list[tuple[str, dict[str, Any]]] = []

    def fake_run(client: str, overrides: dict[str, Any]) -> None:
        seen.append((client, overrides))

    monkeypatch.setattr(hook_run, "run", fake_run)
    group(argv, prog_name="memory-substrate")
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize(
    "argv,env",
    [
        (["hook", "claude-code"], {}),
        (["hook", "codex"], {"MEMORY_SUBSTRATE_ROOT": "/srv/mem", "MEMORY_SUBSTRATE_EMBEDDER": "none"}),
        (["--root", "/x/y", "hook", "codex"], {"MEMORY_SUBSTRATE_ROOT": "/ignored"}),
        (
            ["--root=~/mem", "--embedder", "static", "hook", "claude-code"],
            {"MEMORY_SUBSTRATE_EMBEDDER": "none"},
        ),
        (["--database-url", "postgresql://u@h/db", "hook", "codex"], {}),
        (["hook", "claude-code"], {"MEMORY_SUBSTRATE_DATABASE_URL": "", "MEMORY_SUBSTRATE_ROOT": ""}),
        (["--namespace", "not a namespace", "hook", "claude-code"], {}),
        (["--root", "~nosuchuser-here/x", "hook", "codex"], {}),
        (["hook", "cursor"], {}),  # an unknown client is the runner's to refuse (and log)
        # After the command (as setup writes --root): it wins over the same option before it.
        (["hook", "claude-code", "--root", "/x"], {"MEMORY_SUBSTRATE_ROOT": "/env"}),
        (["--root", "/a", "hook", "codex", "--root=/b", "--embedder", "none"], {}),
    ],
)
def test_a_plain_hook_line_gets_what_the_group_would_give(
    argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    ours = entry.hook_call(argv)
    assert ours is not None
    client, overrides = _groups_call(argv, monkeypatch)
    assert ours == (client, overrides)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["hook"],
        ["--help"],
        ["hook", "--help"],
        ["hook", "claude-code", "extra"],
        ["hook", "claude-code", "--root", "~nosuchuser-here/x"],  # the group refuses it after the command
        ["hook", "claude-code", "--namespace", "x"],  # checked by the group after the command
        ["--root", "/a", "--root", "/b", "hook", "codex"],
        ["--bogus", "hook", "codex"],
        ["--root"],
        ["--root", "/x"],
        ["status"],
        ["backfill", "codex"],
        ["--version"],
    ],
)
def test_every_other_line_goes_to_the_group(argv: list[str]) -> None:
    assert entry.hook_call(argv, environ={}) is None


def test_a_hook_through_the_entry_imports_no_click(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env["MEMORY_SUBSTRATE_ROOT"] = str(tmp_path / "store")
    event = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": str(tmp_path), "prompt": "hi"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memory_substrate.cli.entry", "hook", "claude-code"],
        input=json.dumps(event),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == ""
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "memory_substrate.hooks.run" in imported
    assert not {"click", "memory_substrate.cli.main", "http.client"} & imported
