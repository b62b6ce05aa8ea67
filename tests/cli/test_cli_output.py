"""What the CLI prints for people: whole ids in tables, one start-up line for serve, plurals."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import entry_point

EXE = entry_point()


def _run(
    tmp_path: Path, *args: str, stdin: str | None = None, columns: str = "60", namespace: str = "default"
) -> subprocess.CompletedProcess[str]:
    cmd = [EXE] if EXE else [sys.executable, "-m", "memory_substrate.cli.main"]
    env = {
        **os.environ,
        "MEMORY_SUBSTRATE_ROOT": str(tmp_path / "root"),
        "MEMORY_SUBSTRATE_EMBEDDER": "none",
        "MEMORY_SUBSTRATE_NAMESPACE": namespace,
        "COLUMNS": columns,
    }
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, input=stdin, timeout=120)


def test_tables_show_whole_ids_on_a_narrow_terminal(tmp_path: Path) -> None:
    msg = {
        "title": "db chat",
        "messages": [
            {"role": "user", "name": "ann", "content": "We pin numpy below three."},
            {"role": "user", "name": "bo", "content": "numpy three breaks the build."},
        ],
    }
    source_id = json.loads(_run(tmp_path, "ingest", "conversation", json.dumps(msg)).stdout)["source_id"]
    objects = _run(tmp_path, "query", "search", '{"query": "numpy"}', "--table")
    assert objects.returncode == 0, objects.stderr
    assert source_id in objects.stdout and "…" not in objects.stdout.splitlines()[3]
    segments = _run(
        tmp_path,
        "query",
        "search",
        '{"query": "numpy"}',
        "--options",
        '{"result_unit": "segment"}',
        "--table",
    )
    ids = set(re.findall(r"src:[0-9a-f]+#seg-\d+", segments.stdout))
    assert ids == {f"{source_id}#seg-1", f"{source_id}#seg-2"}, segments.stdout
    for ref in ids:  # what the table shows goes straight into the next command
        page = _run(tmp_path, "query", "page", json.dumps({"id": ref}))
        assert page.returncode == 0 and "numpy" in json.loads(page.stdout)["segment"]["text"]


def test_a_one_message_conversation_is_singular(tmp_path: Path) -> None:
    msg = {"title": "t", "messages": [{"role": "user", "name": "ann", "content": "Hello there."}]}
    source_id = json.loads(_run(tmp_path, "ingest", "conversation", json.dumps(msg)).stdout)["source_id"]
    page = json.loads(_run(tmp_path, "query", "page", json.dumps({"id": source_id})).stdout)
    assert page["object"]["summary"] == "Conversation of 1 message between ann."


def test_serve_says_what_it_serves_in_one_line(tmp_path: Path) -> None:
    out = _run(tmp_path, "serve", "--toolset", "all", stdin="", namespace="team-a")
    lines = [line for line in out.stderr.splitlines() if line.startswith("memory-substrate serve:")]
    assert len(lines) == 1, out.stderr
    line = lines[0]
    assert "transport=stdio" in line and "namespace=team-a" in line and "toolset=all" in line
    assert f"store=sqlite:{tmp_path / 'root'}" in line
