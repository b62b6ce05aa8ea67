"""`maintain extract` through the entry point against the streaming stub model: every episode's
outcome printed, progress per episode on stderr (JSON lines, or a bar on a terminal), exit 1
when an episode failed."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.graph.stub_llm import Reply, stub_llm
from tests.helpers import entry_point

EXE = entry_point()
GOOD = json.dumps(
    {
        "entities": [
            {"name": "Customer Portal", "type": "project"},
            {"name": "Semantic Kernel", "type": "technology"},
        ],
        "facts": [
            {
                "subject": "Customer Portal",
                "predicate": "uses",
                "object": "Semantic Kernel",
                "segment_ids": ["seg-1"],
            }
        ],
        "procedures": [],
    }
)
BAD = json.dumps({"entities": [{"name": "X", "type": "galaxy"}]})


def _run(tmp_path: Any, url: str, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "MEMORY_SUBSTRATE_ROOT": str(tmp_path / "root"),
        "MEMORY_SUBSTRATE_EMBEDDER": "none",
        "MEMORY_SUBSTRATE_LLM_BASE_URL": url,
        "MEMORY_SUBSTRATE_LLM_MODEL": "stub",
        "MEMORY_SUBSTRATE_LLM_MAX_RETRIES": "0",
    }
    cmd = [EXE] if EXE else [sys.executable, "-m", "memory_substrate.cli.main"]
    return subprocess.run([*cmd, *args], text=True, env=env, timeout=120, **(kw or {"capture_output": True}))


def _ingest(tmp_path: Any, url: str, text: str) -> str:
    msg = {"title": text[:20], "messages": [{"role": "user", "content": text}]}
    out = _run(tmp_path, url, "ingest", "conversation", json.dumps(msg))
    assert out.returncode == 0, out.stderr
    return str(json.loads(out.stdout)["source_id"])


def _answer(body: dict[str, Any]) -> Reply:
    return Reply(content=GOOD if "Customer Portal" in body["messages"][1]["content"] else BAD)


def test_extract_prints_every_outcome_shows_progress_and_exits_1_when_an_episode_failed(
    tmp_path: Path,
) -> None:
    with stub_llm() as llm:
        llm.respond = _answer
        good = _ingest(tmp_path, llm.url, "Customer Portal uses Semantic Kernel.")
        bad = _ingest(tmp_path, llm.url, "Nothing to see here.")
        out = _run(
            tmp_path,
            llm.url,
            "maintain",
            "extract",
            "{}",
            "--options",
            '{"apply": true}',
            "--progress",
            "json",
        )
    assert out.returncode == 1
    result = json.loads(out.stdout)
    # the episode that failed is queued again: the counts say so in the queue's words
    assert result["status"] == "partial" and result["counts"] == {
        "done": 1,
        "partial": 0,
        "retrying": 1,
        "failed": 0,
    }
    assert result["queue"]["retrying"] == 1 and result["queue"]["failed"] == 0
    assert result["error"]["details"]["episode_id"] == bad
    assert {r["episode_id"]: r["outcome"] for r in result["runs"]} == {good: "done", bad: "failed"}
    lines = [json.loads(line) for line in out.stderr.splitlines() if line.startswith("{")]
    assert lines[0] == {"done": 0, "total": 2, "phase": "extract:start"}
    assert [(p["done"], p["episode_id"], p["outcome"]) for p in lines[1:]] == [
        (1, good, "done"),
        (2, bad, "failed"),
    ]


def test_extract_on_a_terminal_draws_progress_on_stderr(tmp_path: Path) -> None:
    with stub_llm() as llm:
        llm.respond = _answer
        good = _ingest(tmp_path, llm.url, "Customer Portal uses Semantic Kernel.")
        parent, child = pty.openpty()
        try:
            out = _run(
                tmp_path,
                llm.url,
                "maintain",
                "extract",
                "{}",
                "--options",
                '{"apply": true}',
                stdout=subprocess.PIPE,
                stderr=child,
            )
            os.close(child)
            seen = b""
            while True:
                try:
                    chunk = os.read(parent, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        finally:
            os.close(parent)
    assert out.returncode == 0 and json.loads(out.stdout)["runs"][0]["outcome"] == "done"
    assert f"extract 1/1 {good}: done".encode() in seen
