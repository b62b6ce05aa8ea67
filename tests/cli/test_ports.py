"""A port another process holds: one line naming the port and the flag, exit 2, for both servers;
and the inspector's default port is not the HTTP transport's, so both run at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memory_substrate.cli.main import main

EXE = os.path.join(os.path.dirname(sys.executable), "memory-substrate")


@pytest.mark.parametrize("command", [["serve", "--transport", "http"], ["inspect"]])
def test_a_busy_port_is_one_line_and_exit_2(tmp_path: Path, command: list[str]) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
        env.update(MEMORY_SUBSTRATE_ROOT=str(tmp_path), MEMORY_SUBSTRATE_EMBEDDER="none")
        done = subprocess.run(
            [EXE, *command, "--port", str(port)], env=env, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # nothing claims to be serving, no uvicorn log
    assert str(port) in lines[0] and "--port" in lines[0] and "in use" in lines[0]
    assert lines[0].startswith("error [memory_validation_error]")


def test_inspect_has_its_own_default_port() -> None:
    def default_port(name: str) -> int:
        command = main.commands[name]
        return next(p.default for p in command.params if p.name == "port")  # type: ignore[return-value]

    assert default_port("serve") == 8765
    assert default_port("inspect") != default_port("serve")
