"""``memory-substrate setup codex``: files through the installed script in a temporary
CODEX_HOME, and the trust flow against the real Codex when it is installed (tests/agents)."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.agents.clients import binary, skip_reason
from tests.helpers import entry_point

if TYPE_CHECKING:
    from memory_substrate.hooks.setup_plan import Scope
from tests.hooks.setup_support import env_for, recorded_events, recorder, report, run_setup, snapshot

EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "SessionEnd"]
USER_CONFIG = """# my Codex settings
model = "gpt-5.1-codex"   # the one I like
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-mcp"
args = ["--port", "0"]

[projects."/elsewhere"]
trust_level = "trusted"
"""


def _homes(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, project = tmp_path / "home", tmp_path / "proj"
    (home / ".codex").mkdir(parents=True)
    (project / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return home, home / ".codex", project


def _no_codex_env(home: Path, codex_home: Path) -> dict[str, str]:
    """PATH without any codex, so the trust step reports what is left to do."""
    env = env_for(home, CODEX_HOME=str(codex_home))
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not (Path(p) / "codex").exists()
    )
    return env


def _require_codex() -> Path:
    reason = skip_reason("codex")
    if reason:
        pytest.skip(reason)
    return binary("codex")


def test_files_merge_and_remove_byte_for_byte_without_codex(tmp_path: Path) -> None:
    home, codex_home, project = _homes(tmp_path)
    config, hooks_json = codex_home / "config.toml", codex_home / "hooks.json"
    config.write_text(USER_CONFIG)
    hooks_json.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}, indent=2)
        + "\n"
    )
    before = snapshot(config, hooks_json)
    env = _no_codex_env(home, codex_home)

    first = run_setup("codex", "--user", "--json", home=home, cwd=project, env=env, expect=1)
    rep = report(first)
    assert not rep["ok"] and len(rep["steps"]) == 1 and "Codex is not installed" in rep["steps"][0]
    assert "setup codex --user" in rep["steps"][0]

    parsed = tomllib.loads(config.read_text())
    assert parsed["model"] == "gpt-5.1-codex" and parsed["mcp_servers"]["docs"]["command"] == "docs-mcp"
    assert parsed["projects"] == {"/elsewhere": {"trust_level": "trusted"}}
    server = parsed["mcp_servers"]["memory-substrate"]
    assert Path(server["command"]).is_absolute() and server["args"] == ["serve", "--project"]
    assert config.read_text().startswith(USER_CONFIG)  # comments and layout kept, our table appended

    hooks = json.loads(hooks_json.read_text())["hooks"]
    assert hooks["Stop"][0] == {"hooks": [{"type": "command", "command": "say done"}]}
    for event in EVENTS:
        handler = hooks[event][-1]["hooks"][0]
        assert handler["command"] == f"{entry_point()} hook codex"  # a shell line: no VAR=x, no shell syntax
        assert 0 < handler["timeout"] <= (3 if event == "SessionEnd" else 600)

    after_first = snapshot(config, hooks_json)
    second = run_setup("codex", "--user", home=home, cwd=project, env=env, expect=1)
    assert second.stdout.count("unchanged") == 2 and "ACTION NEEDED" in second.stdout
    assert snapshot(config, hooks_json) == after_first

    run_setup("codex", "--user", "--remove", home=home, cwd=project, env=env)
    assert snapshot(config, hooks_json) == before


def test_created_files_go_again_and_a_users_server_name_is_kept(tmp_path: Path) -> None:
    home, codex_home, project = _homes(tmp_path)
    env = _no_codex_env(home, codex_home)
    run_setup("codex", "--user", home=home, cwd=project, env=env, expect=1)
    run_setup("codex", "--user", "--remove", home=home, cwd=project, env=env)
    assert not (codex_home / "config.toml").exists() and not (codex_home / "hooks.json").exists()

    (codex_home / "config.toml").write_text('[mcp_servers.memory-substrate]\ncommand = "their-own"\n')
    before = snapshot(codex_home / "config.toml", codex_home / "hooks.json")
    failed = run_setup("codex", "--user", home=home, cwd=project, env=env, expect=1)
    assert "error [memory_conflict]" in failed.stderr
    assert snapshot(codex_home / "config.toml", codex_home / "hooks.json") == before


def test_a_config_this_writer_cannot_edit_safely_is_left_alone(tmp_path: Path) -> None:
    home, codex_home, project = _homes(tmp_path)
    env = _no_codex_env(home, codex_home)
    config = codex_home / "config.toml"
    # Ours, but spelled inline in the user's table: an update must not guess at the layout.
    config.write_text(
        '[mcp_servers]\nmemory-substrate = { command = "/old/bin/memory-substrate", args = ["serve"] }\n'
    )
    before = config.read_bytes()
    failed = run_setup("codex", "--user", home=home, cwd=project, env=env, expect=2)
    assert "by hand" in failed.stderr and config.read_bytes() == before
    config.write_text("model = [unclosed\n")
    failed = run_setup("codex", "--user", home=home, cwd=project, env=env, expect=2)
    assert "not valid TOML" in failed.stderr


def test_hooks_turned_off_in_codex_are_reported(tmp_path: Path) -> None:
    home, codex_home, project = _homes(tmp_path)
    (codex_home / "config.toml").write_text("[features]\nhooks = false\n")
    out = run_setup(
        "codex",
        "--user",
        "--codex-bin",
        "/nonexistent/codex",
        home=home,
        cwd=project,
        env=env_for(home, CODEX_HOME=str(codex_home)),
        expect=1,
    )
    assert "turned off" in out.stdout and "[features] hooks = false" in out.stdout


# -- the real Codex ------------------------------------------------------------------------------
def _listed(codex: Path, env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    from memory_substrate.hooks.codex_app_server import AppServer, list_hooks

    with AppServer(codex, env=env) as server:
        return list_hooks(server, cwd)


def test_real_codex_trusts_the_hooks_setup_wrote(tmp_path: Path) -> None:
    from memory_substrate.hooks.setup_codex import trust_keys

    codex = _require_codex()
    home, codex_home, project = _homes(tmp_path)
    config = codex_home / "config.toml"
    config.write_text(USER_CONFIG)
    before = config.read_bytes()
    env = env_for(home, CODEX_HOME=str(codex_home))
    first = run_setup("codex", "--user", "--codex-bin", str(codex), home=home, cwd=project, env=env)
    assert "Codex now trusts 6 new or changed hook(s)" in first.stdout

    ours = [h for h in _listed(codex, env, project) if h.get("sourcePath") == str(codex_home / "hooks.json")]
    assert sorted(h["eventName"] for h in ours) == sorted(e[0].lower() + e[1:] for e in EVENTS)
    assert all(h["trustStatus"] == "trusted" for h in ours), ours
    # The trust is what Codex itself recorded: the hash it reports, under the key it reports.
    state = tomllib.loads(config.read_text())["hooks"]["state"]
    assert {k: v["trusted_hash"] for k, v in state.items()} == {h["key"]: h["currentHash"] for h in ours}
    hooks_table = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert {h["key"] for h in ours} <= set(trust_keys(codex_home / "hooks.json", hooks_table, "codex"))

    second = run_setup("codex", "--user", "--codex-bin", str(codex), home=home, cwd=project, env=env)
    assert "Nothing to change: already set up." in second.stdout and "Codex trusts all 6" in second.stdout

    # A hook edited by hand is no longer trusted (Codex says "modified"); setup puts it back as
    # it was, which Codex trusts already.
    edited = json.loads((codex_home / "hooks.json").read_text())
    edited["hooks"]["Stop"][-1]["hooks"][0]["timeout"] = 99
    (codex_home / "hooks.json").write_text(json.dumps(edited))
    stop = next(h for h in _listed(codex, env, project) if h["eventName"] == "stop")
    assert stop["trustStatus"] == "modified"
    third = run_setup("codex", "--user", "--codex-bin", str(codex), home=home, cwd=project, env=env)
    assert "updated" in third.stdout and "Codex trusts all 6" in third.stdout
    assert all(h["trustStatus"] == "trusted" for h in _listed(codex, env, project))
    # Our entries changing (another store) need Codex's trust anew: setup asks for it.
    store = tmp_path / "other store"
    fourth = run_setup(
        "codex", "--user", "--root", str(store), "--codex-bin", str(codex), home=home, cwd=project, env=env
    )
    assert "Codex now trusts 6 new or changed hook(s)" in fourth.stdout
    listed = [
        h for h in _listed(codex, env, project) if h.get("sourcePath") == str(codex_home / "hooks.json")
    ]
    assert len(listed) == 6 and all(
        h["trustStatus"] == "trusted" and "other store" in h["command"] for h in listed
    )

    run_setup("codex", "--user", "--remove", home=home, cwd=project, env=env)
    assert config.read_bytes() == before and not (codex_home / "hooks.json").exists()


def test_real_codex_project_setup_waits_for_the_projects_trust(tmp_path: Path) -> None:
    codex = _require_codex()
    home, codex_home, project = _homes(tmp_path)
    env = env_for(home, CODEX_HOME=str(codex_home))
    untrusted = run_setup("codex", "--codex-bin", str(codex), home=home, cwd=project, env=env, expect=1)
    assert f"Codex does not trust the project {project.resolve()}" in untrusted.stdout
    assert (project / ".codex" / "hooks.json").is_file()
    # What Codex writes when the user trusts the folder at its first start there.
    with (codex_home / "config.toml").open("a") as fh:
        fh.write(f'\n[projects."{project.resolve()}"]\ntrust_level = "trusted"\n')
    trusted = run_setup("codex", "--codex-bin", str(codex), home=home, cwd=project, env=env)
    assert "Codex now trusts 6 new or changed hook(s)" in trusted.stdout
    listed = [h for h in _listed(codex, env, project) if h["source"] == "project"]
    assert len(listed) == 6 and all(h["trustStatus"] == "trusted" for h in listed)
    config = tomllib.loads((codex_home / "config.toml").read_text())
    run_setup("codex", "--remove", home=home, cwd=project, env=env)
    left = tomllib.loads((codex_home / "config.toml").read_text())
    assert "hooks" in config and "hooks" not in left and "mcp_servers" not in left
    assert left["projects"] == {str(project.resolve()): {"trust_level": "trusted"}}
    assert not (project / ".codex").exists()


@pytest.mark.parametrize("scope", ["user", "project"])
def test_real_codex_exec_runs_the_trusted_hooks_without_bypassing_trust(tmp_path: Path, scope: Scope) -> None:
    """``codex exec`` without ``--dangerously-bypass-hook-trust`` runs the hooks a set-up wrote and
    had trusted. The hook command is a recorder (a path with a space) so this checks the set-up,
    whatever the hook itself does."""
    from memory_substrate.hooks import config_files, setup_codex
    from memory_substrate.hooks.setup_plan import Request
    from tests.agents.clients import run_codex
    from tests.agents.openai_stub import OpenAIStub, say

    codex = _require_codex()
    home, codex_home, project = _homes(tmp_path)
    if scope == "project":
        (codex_home / "config.toml").write_text(
            f'[projects."{project.resolve()}"]\ntrust_level = "trusted"\n'
        )
    log = tmp_path / "ran.log"
    env = env_for(home, CODEX_HOME=str(codex_home))
    req = Request(
        client="codex",
        scope=scope,
        project=project.resolve() if scope == "project" else None,
        remove=False,
        script=recorder(tmp_path / "bin dir", log),
        home=home,
        env=env,
    )
    rep = setup_codex.plan(req)
    config_files.apply(rep.edits)
    setup_codex.secure_trust(req, rep, codex)
    assert not rep.steps, rep.steps
    with OpenAIStub([say("All done.")]) as stub:
        run_codex(project, home, stub, "Say hello.", bypass_hook_trust=False).check()
    ran = recorded_events(log)
    assert {"SessionStart", "UserPromptSubmit", "Stop"} <= set(ran), ran
    assert "hook codex" in log.read_text()
