"""The CLI through its entry point: same JSON in and out as the tools, clean errors, help text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memory_substrate.cli.main import main
from tests.helpers import entry_point

EXE = entry_point()


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "MEMORY_SUBSTRATE_ROOT": str(tmp_path / "root"), "MEMORY_SUBSTRATE_EMBEDDER": "none"}
    env.update(extra)
    return env


def _run(
    tmp_path: Path, *args: str, stdin: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    cmd = [EXE] if EXE else [sys.executable, "-m", "memory_substrate.cli.main"]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, env=_env(tmp_path, **env), input=stdin, timeout=120
    )


def test_entry_point_round_trip_and_status(tmp_path: Path) -> None:
    msg = {"title": "t", "messages": [{"role": "user", "content": "We pin numpy below three."}]}
    out = _run(tmp_path, "ingest", "conversation", json.dumps(msg))
    assert out.returncode == 0, out.stderr
    source_id = json.loads(out.stdout)["source_id"]
    found = _run(
        tmp_path, "query", "search", "@-", "--options", '{"max_items": 3}', stdin='{"query": "numpy"}'
    )
    assert json.loads(found.stdout)["items"][0]["id"] == source_id
    status = json.loads(_run(tmp_path, "status").stdout)
    assert status["storage"]["backend"] == "sqlite"
    assert status["storage"]["location"] == str(tmp_path / "root" / "memory.sqlite3")
    assert status["storage"]["schema_version"] >= 1
    assert status["counts"]["by_object_type"] == {"source": 1}
    assert status["namespace"] == "default"


def test_namespaces_are_isolated_on_the_cli(tmp_path: Path) -> None:
    data = json.dumps(
        {
            "kind": "fact",
            "title": "secret plan",
            "summary": "s",
            "reason": "r",
            "memory_source": "user_declared",
            "scope_refs": ["scope:p"],
        }
    )
    assert _run(tmp_path, "--namespace", "a", "remember", "knowledge", data).returncode == 0
    other = json.loads(
        _run(tmp_path, "--namespace", "b", "query", "search", '{"query": "secret plan"}').stdout
    )
    assert other["items"] == []
    same = json.loads(
        _run(tmp_path, "--namespace", "a", "query", "search", '{"query": "secret plan"}').stdout
    )
    assert len(same["items"]) == 1


def test_errors_are_one_line_with_exit_code(tmp_path: Path) -> None:
    bad = _run(tmp_path, "remember", "knowledge", '{"kind": "fact"}')
    assert bad.returncode == 2
    assert bad.stderr.startswith("error [memory_validation_error]:") and bad.stderr.count("\n") == 1
    missing = _run(tmp_path, "query", "page", '{"id": "know:nope"}')
    assert missing.returncode == 1 and "know:nope" in missing.stderr
    not_json = _run(tmp_path, "query", "search", "{nope")
    assert not_json.returncode == 2 and "not valid JSON" in not_json.stderr


def test_every_command_has_help_text() -> None:
    def walk(cmd: click.Command, path: str) -> None:
        assert cmd.help or cmd.short_help, f"{path} has no help text"
        for param in cmd.params:
            if isinstance(param, click.Option):
                assert param.help, f"{path} {param.opts} has no help"
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, f"{path} {name}")

    walk(main, "memory-substrate")
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0 and "serve" in result.output


@pytest.mark.parametrize("command", ["ingest", "query", "remember", "maintain", "status", "doctor", "serve"])
def test_subcommand_help_runs(command: str) -> None:
    assert CliRunner().invoke(main, [command, "--help"]).exit_code == 0
