"""A command whose work failed says so first and exits non-zero: ``maintain extract`` with the
README's model settings and no model listening (a loopback port nobody holds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import entry_point
from tests.inspect.browser import free_port

EXE = entry_point()


def _run(root: Path, *args: str, **env_extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env.update(MEMORY_SUBSTRATE_ROOT=str(root), MEMORY_SUBSTRATE_EMBEDDER="none", **env_extra)
    cmd = [EXE] if EXE else [sys.executable, "-m", "memory_substrate.cli.main"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=120)


def test_extract_with_the_model_unreachable_fails_and_says_so(tmp_path: Path) -> None:
    chat = {
        "title": "portal",
        "messages": [{"role": "user", "content": "Customer Portal uses Semantic Kernel."}],
    }
    assert _run(tmp_path, "ingest", "conversation", json.dumps(chat)).returncode == 0
    model = {
        "MEMORY_SUBSTRATE_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
        "MEMORY_SUBSTRATE_LLM_MODEL": "qwen2.5:7b-instruct",
        "MEMORY_SUBSTRATE_LLM_MAX_RETRIES": "0",
    }
    done = _run(tmp_path, "maintain", "extract", "{}", "--options", '{"apply": true}', **model)
    assert done.returncode == 1, (done.stdout, done.stderr)
    first = done.stderr.splitlines()[0]
    assert first.startswith("error [memory_llm_error]: failed: 1 of 1 episodes"), done.stderr
    out = json.loads(done.stdout)
    assert next(iter(out)) == "status" and out["status"] == "failed"
    assert out["error"]["code"] == "memory_llm_error"
    # The counts and the queue say the same: the episode is queued again, none failed for good.
    assert out["counts"] == {"done": 0, "partial": 0, "retrying": 1, "failed": 0}
    assert out["queue"]["retrying"] == 1 and out["queue"]["failed"] == 0
    # Nothing to do is not a failure.
    dry = _run(tmp_path, "maintain", "extract", "{}", **model)
    assert dry.returncode == 0 and json.loads(dry.stdout)["status"] == "dry_run"
