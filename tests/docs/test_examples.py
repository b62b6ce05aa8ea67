"""The README's and docs/api.md's examples, run as a reader would run them.

Every fenced block is either run here or named in ``NOT_RUN`` with the reason, so a new example
cannot slip in unrun:

- a ``$ command`` transcript runs each command through the installed CLI on a fresh store (a
  ``| jq`` filter through jq's own library) and must print what the block shows, ids aside;
- a work-item update is run against a work item made for it;
- the Python block is executed;
- a client's MCP configuration must name a command the CLI has and settings it reads.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import jq
import pytest

REPO = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
ID = re.compile(r"\b(?:src|know|act|work|ent|rel|node|trace|patch|evt|job):[0-9a-z]+")

# Blocks that are not run, by their first line, and why.
NOT_RUN = {
    "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/memory-substrate serve": (
        "the install itself (tests/packaging builds and installs the wheel)"
    ),
    "./scripts/test": "the suite that runs this test",
    "claude mcp add memory -- /path/to/memory-substrate/.venv/bin/memory-substrate serve": (
        "a Claude Code command with the reader's path (tests/agents drive the real client)"
    ),
    "uv tool install memory-substrate      # or: pipx install memory-substrate (from a checkout: pipx install .)": (
        "installs from the registry and writes the reader's client config (tests/hooks/test_setup_claude.py)"
    ),
    "export MEMORY_SUBSTRATE_LLM_BASE_URL=http://localhost:11434/v1 MEMORY_SUBSTRATE_LLM_MODEL=qwen2.5:7b-instruct": (
        "needs a model endpoint (tests/graph runs extraction against a loopback model)"
    ),
    '$ memory-substrate query context \'{"task": "Why are Stripe webhooks failing on the gateway?", '
    '"model": "claude-sonnet-4-5"}\' --options \'{"budget_tokens": 400}\' | jq -r .content': (
        "its fact comes from an extraction by a model, which the README does not set up"
    ),
    "memory-substrate inspect          # http://127.0.0.1:8766/ ; Ctrl-C stops it": (
        "serves until stopped (tests/inspect drive it in a browser)"
    ),
    "# the reference MCP memory server (@modelcontextprotocol/server-memory): its JSON Lines file": (
        "reads the reader's files (tests/importers run the same commands on recorded files)"
    ),
}


def _blocks(page: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer((REPO / page).read_text(encoding="utf-8"))]


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env.update(MEMORY_SUBSTRATE_ROOT=str(root), MEMORY_SUBSTRATE_DEBUG="1")
    return env


def _cli(root: Path, args: list[str]) -> str:
    assert args[0] == "memory-substrate", args
    done = subprocess.run(
        [sys.executable, "-m", "memory_substrate.cli.entry", *args[1:]],
        env=_env(root),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (args, done.stderr[-2000:])
    return done.stdout


def _jq(flags: list[str], text: str) -> str:
    raw, compact = "-r" in flags, "-c" in flags
    (program,) = [f for f in flags if not f.startswith("-")]
    out = []
    for value in jq.compile(program).input_value(json.loads(text)).all():
        if raw and isinstance(value, str):
            out.append(value)
        else:
            out.append(json.dumps(value, ensure_ascii=False, separators=(",", ":") if compact else None))
    return "\n".join(out)


def _run_line(root: Path, line: str) -> str:
    words = shlex.split(line)
    if "|" not in words:
        return _cli(root, words).rstrip("\n")
    at = words.index("|")
    assert words[at + 1] == "jq", line
    return _jq(words[at + 2 :], _cli(root, words[:at]))


def _transcripts() -> list[str]:
    return [
        body
        for page in ("README.md", "docs/api.md")
        for _, body in _blocks(page)
        if body.startswith("$ ") and body.splitlines()[0] not in NOT_RUN
    ]


def _steps(body: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


@pytest.mark.parametrize("body", _transcripts(), ids=lambda b: b.splitlines()[0][2:60])
def test_a_transcript_prints_what_it_shows(body: str, tmp_path: Path) -> None:
    for command, shown in _steps(body):
        printed = _run_line(tmp_path, command)
        assert ID.sub("ID", printed).splitlines() == [ID.sub("ID", s) for s in shown], command


def _work_item_updates() -> list[str]:
    found = []
    for page in ("README.md", "docs/api.md"):
        for _, body in _blocks(page):
            if '"work_item_id"' in body and not body.startswith("$ "):
                found.append(body.strip())
    return found


@pytest.mark.parametrize("body", _work_item_updates())
def test_a_work_item_update_runs(body: str, tmp_path: Path) -> None:
    created = json.loads(
        _cli(
            tmp_path,
            [
                "memory-substrate",
                "remember",
                "work_item",
                json.dumps(
                    {
                        "title": "Flaky checkout test",
                        "summary": "The checkout e2e test fails every few runs.",
                        "kind": "task",
                        "reason": "seen on CI",
                        "memory_source": "user_declared",
                        "scope_refs": ["scope:shop"],
                    }
                ),
            ],
        )
    )
    shown_id = re.search(r"work:[0-9a-z]+", body)
    assert shown_id is not None
    # The block shows a short id (the type and the id's end): the same length of the new one's end.
    tail = len(shown_id.group(0)) - len("work:")
    short = "work:" + created["object_id"].rsplit(":", 1)[1][-tail:]
    line = body.replace(shown_id.group(0), short)
    if line.startswith("{"):  # the input alone (docs/api.md): as memory_remember work_item takes it
        line = f"memory-substrate remember work_item {shlex.quote(line)}"
    updated = json.loads(_cli(tmp_path, shlex.split(line)))
    assert updated["object_id"] == created["object_id"]
    assert updated["work_status"] == json.loads(shlex.split(line)[-1])["status"]


def test_the_python_block_runs(tmp_path: Path) -> None:
    (code,) = [body for lang, body in _blocks("README.md") if lang == "python"]
    assert '"/tmp/mem"' in code
    scope: dict[str, Any] = {}
    exec(compile(code.replace('"/tmp/mem"', repr(str(tmp_path))), "README.md", "exec"), scope)
    assert scope["src"]["status"] == "completed"
    assert "Kuzu is our graph store" in json.dumps(scope["hits"])


def test_the_mcp_configuration_names_what_exists() -> None:
    (config,) = [json.loads(body) for lang, body in _blocks("README.md") if lang == "json"]
    server = config["mcpServers"]["memory"]
    assert server["command"].endswith("/.venv/bin/memory-substrate") and server["args"] == ["serve"]
    done = subprocess.run(
        [sys.executable, "-m", "memory_substrate.cli.entry", *server["args"], "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    settings = (REPO / "src" / "memory_substrate" / "cli" / "main.py").read_text(encoding="utf-8")
    assert all(f'envvar="{name}"' in settings for name in server["env"])


def test_every_block_is_run_or_named() -> None:
    handled = {*_transcripts(), *_work_item_updates()}
    unrun = []
    for page in ("README.md", "docs/api.md"):
        for lang, body in _blocks(page):
            first = body.splitlines()[0]
            ran_elsewhere = (page, lang) == ("README.md", "python") or (
                first == "{" and '"mcpServers"' in body
            )
            if body in handled or body.strip() in handled or ran_elsewhere or first in NOT_RUN:
                continue
            unrun.append(f"{page}: {first}")
    assert unrun == [], "run these examples here, or name them in NOT_RUN with the reason"
    firsts = {b.splitlines()[0] for page in ("README.md", "docs/api.md") for _, b in _blocks(page)}
    assert set(NOT_RUN) <= firsts, set(NOT_RUN) - firsts  # a name whose block is gone
