"""The shipped plugins, marketplaces and ``server.json``: their shape, that they agree with each
other and with the package, and that the real clients install them and run their hooks (a
stand-in ``uvx`` on PATH records what the plugin's hooks and server ask for)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from memory_substrate.hooks.hook_entries import EVENTS, TIMEOUTS
from memory_substrate.version import __version__
from tests.agents.clients import binary, skip_reason
from tests.hooks.setup_support import env_for, recorded_events, run_setup

ROOT = Path(__file__).resolve().parents[2]
PINNED = f"memory-substrate@{__version__}"


def _json(relative: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / relative).read_text(encoding="utf-8"))
    return data


def test_claude_code_plugin_files() -> None:
    manifest = _json("plugins/claude-code/.claude-plugin/plugin.json")
    assert manifest["name"] == "memory-substrate" and manifest["version"] == __version__
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", manifest["name"])
    hooks = _json("plugins/claude-code/hooks/hooks.json")["hooks"]
    assert list(hooks) == list(EVENTS)
    for event, groups in hooks.items():
        (handler,) = groups[0]["hooks"]
        # Exec form: no shell, the version pinned to the plugin's own.
        assert handler == {
            "type": "command",
            "command": "uvx",
            "args": [PINNED, "hook", "claude-code"],
            "timeout": TIMEOUTS[event],
        }
    servers = _json("plugins/claude-code/.mcp.json")["mcpServers"]
    assert servers == {"memory-substrate": {"command": "uvx", "args": [PINNED, "serve", "--project"]}}
    market = _json(".claude-plugin/marketplace.json")
    assert market["name"] == "memory-substrate" and market["owner"]["name"]
    (entry,) = market["plugins"]
    assert entry["name"] == manifest["name"] and entry["version"] == __version__
    assert (ROOT / entry["source"] / ".claude-plugin" / "plugin.json").is_file()


def test_codex_plugin_files() -> None:
    manifest = _json("plugins/codex/.codex-plugin/plugin.json")
    assert manifest["name"] == "memory-substrate" and manifest["version"] == __version__
    base = ROOT / "plugins" / "codex"
    for field in ("hooks", "mcpServers"):
        assert manifest[field].startswith("./") and (base / manifest[field]).is_file()
    hooks = _json("plugins/codex/hooks/hooks.json")["hooks"]
    assert list(hooks) == list(EVENTS)
    for event, groups in hooks.items():
        (handler,) = groups[0]["hooks"]
        assert handler == {
            "type": "command",
            "command": f"uvx {PINNED} hook codex",
            "timeout": TIMEOUTS[event],
        }
    assert _json("plugins/codex/.mcp.json") == _json("plugins/claude-code/.mcp.json")
    market = _json(".agents/plugins/marketplace.json")
    (entry,) = market["plugins"]
    assert entry["name"] == manifest["name"] and entry["source"]["source"] == "local"
    assert (ROOT / entry["source"]["path"] / ".codex-plugin" / "plugin.json").is_file()


def test_server_json_for_the_mcp_registry_matches_the_package_and_the_readme() -> None:
    server = _json("server.json")
    assert server["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    assert re.fullmatch(r"io\.github\.[A-Za-z0-9-]+/memory-substrate", server["name"])
    assert 1 <= len(server["description"]) <= 100 and server["version"] == __version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (package,) = server["packages"]
    assert package["registryType"] == "pypi" and package["identifier"] == project["name"]
    assert package["version"] == project["version"] == __version__
    assert package["transport"] == {"type": "stdio"}
    assert package["packageArguments"] == [{"type": "positional", "value": "serve"}]
    assert set(package) <= {
        "registryType",
        "registryBaseUrl",
        "identifier",
        "version",
        "fileSha256",
        "runtimeHint",
        "transport",
        "runtimeArguments",
        "packageArguments",
        "environmentVariables",
    }
    assert all(set(v) >= {"name"} for v in package["environmentVariables"])
    # The registry's ownership check: "mcp-name: NAME" followed by a boundary, in the PyPI README.
    readme = (ROOT / project["readme"]).read_text()
    assert re.search(rf"mcp-name: {re.escape(server['name'])}(\s|-->|<)", readme)
    # The marketplace commands the docs give name the same GitHub owner.
    owner = server["name"].split("/")[0].removeprefix("io.github.")
    for doc in ("README.md", "docs/setup.md"):
        assert f"--marketplace {owner}/memory-substrate" in (ROOT / doc).read_text().replace("\n", " ")


# -- the real clients ------------------------------------------------------------------------------
def _marketplace_copy(tmp_path: Path) -> Path:
    """The repository's plugin files only, as a local marketplace."""
    market = tmp_path / "marketplace"
    for part in ("plugins", ".claude-plugin", ".agents"):
        shutil.copytree(ROOT / part, market / part)
    return market


def _fake_uvx(tmp_path: Path) -> tuple[Path, Path]:
    folder, log = tmp_path / "bin", tmp_path / "uvx.log"
    folder.mkdir()
    uvx = folder / "uvx"
    uvx.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\ncat >> '{log}'\nprintf '\\n' >> '{log}'\n")
    uvx.chmod(0o755)
    return folder, log


def _with_path(env: dict[str, str], folder: Path) -> dict[str, str]:
    return {**env, "PATH": f"{folder}:{env.get('PATH', '')}"}


def test_claude_code_validates_installs_and_runs_the_plugin(tmp_path: Path) -> None:
    from tests.agents.anthropic_stub import AnthropicStub, text
    from tests.agents.clients import run_claude

    if skip_reason("claude-code"):
        pytest.skip(skip_reason("claude-code") or "")
    claude = str(binary("claude-code"))
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    folder, log = _fake_uvx(tmp_path)
    env = _with_path(
        env_for(home, DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1"), folder
    )
    market = _marketplace_copy(tmp_path)
    for target in (market, market / "plugins" / "claude-code"):
        checked = subprocess.run(
            [claude, "plugin", "validate", str(target), "--strict"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    installed = subprocess.run(
        [claude, "plugin", "install", "memory-substrate", "--marketplace", str(market)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    with AnthropicStub([text("All done.")], default=text("ok")) as stub:
        run_claude(project, home, stub, "Say hello.", env={"PATH": env["PATH"]}).check()
    assert {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} <= set(recorded_events(log))
    lines = log.read_text()
    assert f"{PINNED} hook claude-code" in lines and f"{PINNED} serve --project" in lines
    # Setting up beside the plugin is reported: each hook would run twice.
    twice = run_setup("claude-code", home=home, cwd=project, env=env)
    assert "plugin is enabled too" in twice.stdout


def test_codex_installs_the_plugin_and_runs_its_hooks_once_setup_had_them_trusted(tmp_path: Path) -> None:
    from tests.agents.clients import run_codex
    from tests.agents.openai_stub import OpenAIStub, say

    if skip_reason("codex"):
        pytest.skip(skip_reason("codex") or "")
    codex = str(binary("codex"))
    home, project = tmp_path / "home", tmp_path / "proj"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    project.mkdir()
    folder, log = _fake_uvx(tmp_path)
    env = _with_path(env_for(home, CODEX_HOME=str(codex_home)), folder)
    market = _marketplace_copy(tmp_path)
    for cmd in (
        ["plugin", "marketplace", "add", str(market)],
        ["plugin", "add", "memory-substrate@memory-substrate"],
    ):
        done = subprocess.run(
            [codex, *cmd], cwd=project, env=env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stdout + done.stderr
    before = (codex_home / "config.toml").read_bytes()

    trusted = run_setup("codex", "--plugin", "--codex-bin", codex, home=home, cwd=project, env=env)
    assert "Codex now trusts 6 new or changed hook(s)" in trusted.stdout
    assert not (codex_home / "hooks.json").exists()  # the plugin brings its own hooks and server
    assert "mcp_servers" not in tomllib.loads((codex_home / "config.toml").read_text())
    with OpenAIStub([say("All done.")]) as stub:
        run_codex(
            project, home, stub, "Say hello.", bypass_hook_trust=False, env={"PATH": env["PATH"]}
        ).check()
    assert {"SessionStart", "UserPromptSubmit", "Stop"} <= set(recorded_events(log))
    assert f"{PINNED} hook codex" in log.read_text()

    run_setup("codex", "--plugin", "--remove", home=home, cwd=project, env=env)
    assert (codex_home / "config.toml").read_bytes() == before
