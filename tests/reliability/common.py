"""Shared by the reliability tests: the soak switch, figure reporting, child processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SOAK = os.environ.get("MEMORY_SUBSTRATE_SOAK", "") not in ("", "0")
SRC = str(Path(__file__).resolve().parents[2] / "src")
REPO = str(Path(__file__).resolve().parents[2])


def scale(ci: int, soak: int) -> int:
    """``soak`` under MEMORY_SUBSTRATE_SOAK=1, else ``ci``."""
    return soak if SOAK else ci


def report(test: str, **figures: Any) -> None:
    """Print one figures line (and append it to $MEMORY_SUBSTRATE_RELIABILITY_REPORT if set)."""
    line = json.dumps({"test": test, "soak": SOAK, **figures}, sort_keys=False)
    print(f"RELIABILITY {line}")
    target = os.environ.get("MEMORY_SUBSTRATE_RELIABILITY_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def child_env(root: Path, database_url: str | None, namespace: str) -> dict[str, str]:
    """Environment for a child process using the same store as the test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env.update(
        MEMORY_SUBSTRATE_ROOT=str(root),
        MEMORY_SUBSTRATE_NAMESPACE=namespace,
        MEMORY_SUBSTRATE_EMBEDDER="none",
        PYTHONUNBUFFERED="1",
        PYTHONPATH=os.pathsep.join([SRC, REPO, env.get("PYTHONPATH", "")]),
    )
    if database_url:
        env["MEMORY_SUBSTRATE_DATABASE_URL"] = database_url
    return env


def spawn(module: str, env: dict[str, str], *args: str, **kwargs: Any) -> subprocess.Popen[str]:
    """Start ``python -m module args`` with piped text stdout."""
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=kwargs.pop("stderr", subprocess.PIPE),
        text=True,
        **kwargs,
    )


def cli(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a user would; returns the finished process."""
    return subprocess.run(
        [sys.executable, "-m", "memory_substrate.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
