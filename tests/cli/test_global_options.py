"""The global options work after the subcommand too, with the same checks, and win over the
ones before it; a command's own option of the same name keeps its meaning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import entry_point

EXE = entry_point()


def _run(env_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env.update(MEMORY_SUBSTRATE_ROOT=str(env_root), MEMORY_SUBSTRATE_EMBEDDER="none")
    cmd = [EXE] if EXE else [sys.executable, "-m", "memory_substrate.cli.main"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=120)


CHAT = json.dumps(
    {"title": "db chat", "messages": [{"role": "user", "content": "We run SQLite in WAL mode."}]}
)


def test_namespace_and_root_after_the_subcommand(tmp_path: Path) -> None:
    other = tmp_path / "other-root"
    done = _run(
        tmp_path / "env-root", "ingest", "conversation", CHAT, "--namespace", "team-x", "--root", str(other)
    )
    assert done.returncode == 0, done.stderr
    source_id = json.loads(done.stdout)["source_id"]
    assert (other / "memory.sqlite3").exists() and not (tmp_path / "env-root").exists()
    found = _run(other, "query", "search", '{"query": "WAL mode"}', "--namespace", "team-x")
    assert json.loads(found.stdout)["items"][0]["id"] == source_id
    # Before the subcommand, another namespace: after it wins.
    found = _run(
        other, "--namespace", "default", "query", "search", '{"query": "WAL mode"}', "--namespace", "team-x"
    )
    assert json.loads(found.stdout)["items"][0]["id"] == source_id
    empty = _run(other, "query", "search", '{"query": "WAL mode"}')
    assert json.loads(empty.stdout)["items"] == []  # the default namespace holds nothing
    status = _run(other, "status", "--namespace", "team-x")
    assert json.loads(status.stdout)["namespace"] == "team-x"


def test_after_the_subcommand_the_same_checks_apply(tmp_path: Path) -> None:
    done = _run(tmp_path, "status", "--namespace", " ")
    assert done.returncode == 2
    # the one namespace rule of every surface (validation.is_namespace), as before the command
    before = _run(tmp_path, "--namespace", " ", "status")
    assert before.returncode == 2 and done.stderr.split(" (see")[0] == before.stderr.split(" (see")[0]
    assert done.stderr.startswith(
        "error [memory_usage_error]: Invalid value for --namespace: namespace ' ' is invalid"
    )


def test_help_of_a_subcommand_lists_them() -> None:
    from click.testing import CliRunner

    from memory_substrate.cli.main import main

    text = CliRunner().invoke(main, ["ingest", "--help"]).output
    for option in ("--namespace", "--root", "--database-url", "--embedder"):
        assert option in text


def test_a_commands_own_namespace_option_keeps_its_meaning(tmp_path: Path) -> None:
    made = _run(tmp_path, "token", "create", "--namespace", "team-a", "--label", "ana")
    assert made.returncode == 0, made.stderr
    listed = _run(tmp_path, "token", "list", "--namespace", "team-a")
    assert listed.returncode == 0, listed.stderr
    assert "ana" in listed.stdout
