"""``memory-substrate setup claude-code``: through the installed script, in a temporary HOME, and
against the real Claude Code when it is installed (tests/agents/clients.py says why when not)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.clients import binary, skip_reason
from tests.helpers import entry_point
from tests.hooks.setup_support import env_for, recorded_events, recorder, report, run_setup, snapshot

EVENTS = ["SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "SessionEnd"]
# Claude Code kills a command hook after its timeout (600 s unless set); ours stay well under it.
CLIENT_LIMIT_S = 600


def _project(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    (project / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return home, project


def _user_files(home: Path, project: Path) -> tuple[Path, Path, Path]:
    """A user's existing config, written as Claude Code writes it (2-space JSON; .claude.json
    without a final newline): their own hooks, permissions, servers, and CLAUDE.md memory."""
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(npm test)"]},
                "autoMemoryEnabled": True,
                "hooks": {
                    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
                    "SessionStart": [
                        {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
                    ],
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
                    ],
                },
            },
            indent=2,
        )
        + "\n"
    )
    global_json = home / ".claude.json"
    global_json.write_text(
        json.dumps(
            {
                "numStartups": 12,
                "mcpServers": {
                    "memory": {
                        "type": "stdio",
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-memory"],
                    }
                },
                "projects": {
                    str(project): {
                        "allowedTools": [],
                        "mcpServers": {"db": {"type": "stdio", "command": "db-mcp", "args": []}},
                    },
                    "/elsewhere": {"mcpServers": {}},
                },
            },
            indent=2,
        )
    )
    memory_md = project / "CLAUDE.md"
    memory_md.write_text("# Project memory\nUse pnpm.\n")
    return settings, global_json, memory_md


def test_project_setup_merges_is_idempotent_and_removes_exactly_what_it_added(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    settings, global_json, memory_md = _user_files(home, project)
    before = snapshot(
        settings, global_json, memory_md, project / ".mcp.json", project / ".claude" / "settings.json"
    )

    first = run_setup(
        "claude-code", "--json", home=home, cwd=project / "src"
    )  # a subfolder: its git root is set up
    rep = report(first)
    assert rep["ok"] and rep["changed"] and rep["where"] == f"project {project.resolve()}"
    assert [f["action"] for f in rep["files"]] == ["update", "update"]

    data = json.loads(settings.read_text())
    assert data["permissions"] == {"allow": ["Bash(npm test)"]} and data["autoMemoryEnabled"] is True
    hooks = data["hooks"]
    assert hooks["PreToolUse"] == [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]
    # The user's groups keep their place, ours come after them.
    assert hooks["Stop"][0] == {"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}
    assert hooks["SessionStart"][0]["matcher"] == "startup"
    for event in EVENTS:
        ours = hooks[event][-1]["hooks"]
        assert len(ours) == 1
        handler = ours[0]
        # Exec form: an absolute executable and its arguments, no shell, nothing to quote.
        assert handler["type"] == "command" and handler["args"] == ["hook", "claude-code"]
        assert Path(handler["command"]).is_absolute() and Path(handler["command"]).name == "memory-substrate"
        assert os.access(handler["command"], os.X_OK)
        assert 0 < handler["timeout"] < CLIENT_LIMIT_S
    assert hooks["SessionEnd"][-1]["hooks"][0]["timeout"] <= 3

    claude = json.loads(global_json.read_text())
    assert claude["numStartups"] == 12
    assert claude["mcpServers"] == {
        "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
    }
    entry = claude["projects"][str(project.resolve())]
    assert entry["allowedTools"] == [] and entry["mcpServers"]["db"]["command"] == "db-mcp"
    server = entry["mcpServers"]["memory-substrate"]
    assert server["type"] == "stdio" and Path(server["command"]).is_absolute()
    assert server["args"] == ["serve", "--project"]
    # Never the client's own memory, never the shared project files.
    assert memory_md.read_bytes() == before[memory_md]
    assert not (project / ".mcp.json").exists() and not (project / ".claude" / "settings.json").exists()

    after_first = snapshot(settings, global_json)
    second = run_setup("claude-code", home=home, cwd=project)
    assert "Nothing to change: already set up." in second.stdout
    assert second.stdout.count("unchanged") == 2
    assert snapshot(settings, global_json) == after_first

    removed = run_setup("claude-code", "--remove", home=home, cwd=project)
    assert "Removed" in removed.stdout
    assert (
        snapshot(
            settings, global_json, memory_md, project / ".mcp.json", project / ".claude" / "settings.json"
        )
        == before
    )
    again = run_setup("claude-code", "--remove", home=home, cwd=project)
    assert "Nothing to remove" in again.stdout


def test_files_setup_created_are_deleted_again(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    run_setup("claude-code", "--dir", str(project), home=home, cwd=tmp_path)
    assert (project / ".claude" / "settings.local.json").is_file() and (home / ".claude.json").is_file()
    run_setup("claude-code", "--dir", str(project), "--remove", home=home, cwd=tmp_path)
    assert not (project / ".claude").exists() and not (home / ".claude.json").exists()


@pytest.mark.parametrize("config_dir", [False, True])
def test_user_setup_writes_user_settings_and_user_servers(tmp_path: Path, config_dir: bool) -> None:
    home, project = _project(tmp_path)
    base = tmp_path / "claude-config" if config_dir else home / ".claude"
    env = env_for(home, **({"CLAUDE_CONFIG_DIR": str(base)} if config_dir else {}))
    user_settings = base / "settings.json"
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text('{\n  "model": "opus",\n  "enabledPlugins": {}\n}\n')
    before = user_settings.read_bytes()
    run_setup("claude-code", "--user", home=home, cwd=project, env=env)
    data = json.loads(user_settings.read_text())
    assert data["model"] == "opus" and set(data["hooks"]) == set(EVENTS)
    global_json = base / ".claude.json" if config_dir else home / ".claude.json"
    assert json.loads(global_json.read_text())["mcpServers"]["memory-substrate"]["args"] == [
        "serve",
        "--project",
    ]
    assert not (project / ".claude").exists()

    # Set up in the project as well: the report says each event would run twice.
    twice = run_setup("claude-code", home=home, cwd=project, env=env)
    assert "would run twice" in twice.stdout
    run_setup("claude-code", "--remove", home=home, cwd=project, env=env)
    run_setup("claude-code", "--user", "--remove", home=home, cwd=project, env=env)
    assert user_settings.read_bytes() == before and not global_json.exists()


def test_a_moved_installation_replaces_its_old_hooks_in_place(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    old = {"type": "command", "command": "/old/venv/bin/memory-substrate hook claude-code", "timeout": 60}
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [{"hooks": [{"type": "command", "command": "x"}, old]}],
                    "UserPromptSubmit": [{"hooks": [old]}, {"hooks": [old]}],
                }
            }
        )
    )
    run_setup("claude-code", home=home, cwd=project)
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["Stop"][0]["hooks"][0] == {"type": "command", "command": "x"}
    assert hooks["Stop"][0]["hooks"][1]["command"] == entry_point() and len(hooks["Stop"]) == 1
    assert len(hooks["UserPromptSubmit"]) == 1  # the duplicate is gone
    assert "/old/venv" not in json.dumps(hooks)


def test_a_server_name_the_user_has_is_never_overwritten(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    global_json = home / ".claude.json"
    theirs = {
        "projects": {
            str(project.resolve()): {"mcpServers": {"memory-substrate": {"command": "their-server"}}}
        }
    }
    global_json.write_text(json.dumps(theirs))
    before = snapshot(global_json, project / ".claude" / "settings.local.json")
    failed = run_setup("claude-code", home=home, cwd=project, expect=1)
    assert "error [memory_conflict]" in failed.stderr and "--server-name" in failed.stderr
    assert snapshot(global_json, project / ".claude" / "settings.local.json") == before
    run_setup("claude-code", "--server-name", "project-memory", home=home, cwd=project)
    servers = json.loads(global_json.read_text())["projects"][str(project.resolve())]["mcpServers"]
    assert servers["memory-substrate"] == {"command": "their-server"} and "project-memory" in servers


def test_unreadable_config_stops_setup_with_nothing_written(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"hooks": {')
    failed = run_setup("claude-code", home=home, cwd=project, expect=2)
    assert "error [memory_validation_error]" in failed.stderr and "not valid JSON" in failed.stderr
    assert settings.read_text() == '{"hooks": {' and not (home / ".claude.json").exists()


def test_dry_run_and_usage(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    dry = run_setup("claude-code", "--dry-run", home=home, cwd=project)
    assert dry.stdout.count("would create") == 2 and "nothing was changed" in dry.stdout
    assert not (project / ".claude").exists() and not (home / ".claude.json").exists()
    both = run_setup("claude-code", "--user", "--dir", str(project), home=home, cwd=project, expect=2)
    assert "exclusive" in both.stderr


# -- the real Claude Code --------------------------------------------------------------------------
def _claude_env(home: Path) -> dict[str, str]:
    return env_for(
        home,
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ANTHROPIC_API_KEY="sk-ant-stub",
        MEMORY_SUBSTRATE_ROOT=str(home / "store"),
    )


def test_real_claude_code_connects_the_server_setup_registered(tmp_path: Path) -> None:
    reason = skip_reason("claude-code")
    if reason:
        pytest.skip(reason)
    home, project = _project(tmp_path)
    env = _claude_env(home)
    run_setup("claude-code", home=home, cwd=project, env=env)
    listed = subprocess.run(
        [str(binary("claude-code")), "mcp", "list"],
        cwd=project / "src",
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    line = next(x for x in listed.stdout.splitlines() if x.startswith("memory-substrate:"))
    assert "Connected" in line, listed.stdout + listed.stderr


@pytest.mark.parametrize("scope", ["project", "user"])
def test_real_claude_code_runs_every_hook_setup_wrote(tmp_path: Path, scope: str) -> None:
    """The entries a set-up writes (exec form, a path with a space) run in a real ``claude -p``
    started in a subfolder of the project. The hook command is a recorder here, so this checks
    the set-up, whatever the hook does."""
    from memory_substrate.hooks import config_files, setup_claude
    from memory_substrate.hooks.setup_plan import Request
    from tests.agents.anthropic_stub import AnthropicStub, text
    from tests.agents.clients import run_claude

    if skip_reason("claude-code"):
        pytest.skip(skip_reason("claude-code") or "")
    home, project = _project(tmp_path)
    log = tmp_path / "ran.log"
    script = recorder(tmp_path / "bin dir", log)
    req = Request(
        client="claude-code",
        scope=scope,  # type: ignore[arg-type]
        project=None if scope == "user" else project.resolve(),
        remove=False,
        script=script,
        home=home,
        env={"HOME": str(home)},
    )
    config_files.apply(setup_claude.plan(req).edits)
    with AnthropicStub([text("All done.")], default=text("ok")) as stub:
        run_claude(project / "src", home, stub, "Say hello.").check()
    ran = recorded_events(log)
    assert {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} <= set(ran), ran
    assert "hook claude-code" in log.read_text()


@pytest.mark.anyio
async def test_the_registered_server_serves_the_projects_namespace(tmp_path: Path) -> None:
    """The server entry runs in the session's folder and serves that project's namespace, the
    one its hooks capture into."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from memory_substrate.hooks.config import load
    from memory_substrate.hooks.project import project_namespace
    from tests.helpers import call

    if not entry_point():
        pytest.skip("no installed memory-substrate script beside " + sys.executable)
    home, project = _project(tmp_path)
    store = tmp_path / "store"
    env = env_for(home)
    run_setup("claude-code", "--root", str(store), home=home, cwd=project, env=env)
    server = json.loads((home / ".claude.json").read_text())["projects"][str(project.resolve())][
        "mcpServers"
    ]["memory-substrate"]
    assert server["args"] == ["serve", "--project", "--root", str(store)]
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=env, cwd=str(project / "src")
    )
    async with Client(stdio_client(params)) as client:
        status = await call(client, "memory_maintain", "structure", {})
    assert status["namespace"] == project_namespace(project, load(store))


def test_serve_url_makes_the_prompt_hook_an_http_hook_in_place_and_back(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    settings = project / ".claude" / "settings.local.json"
    others = {"type": "http", "url": "http://127.0.0.1:9/elsewhere", "timeout": 5}  # the user's own
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [others]}]}}))
    done = report(
        run_setup("claude-code", "--serve-url", "http://127.0.0.1:8765/", "--json", home=home, cwd=project)
    )
    hooks = json.loads(settings.read_text())["hooks"]
    ours = hooks["UserPromptSubmit"][-1]["hooks"]
    assert hooks["UserPromptSubmit"][0]["hooks"] == [others]
    assert ours == [
        {
            "type": "http",
            "url": "http://127.0.0.1:8765/hooks/claude-code/event",
            "headers": {"Authorization": "Bearer ${MEMORY_SUBSTRATE_HOOK_TOKEN}"},
            "allowedEnvVars": ["MEMORY_SUBSTRATE_HOOK_TOKEN"],
            "timeout": 10,
        }
    ]
    # SessionStart stays a command: Claude Code skips http hooks on it; so do the captures.
    for event in ("SessionStart", "Stop", "PreCompact", "SessionEnd"):
        assert hooks[event][0]["hooks"][0]["type"] == "command", event
    assert any("MEMORY_SUBSTRATE_HOOK_TOKEN" in n for n in done["notes"])
    before = settings.read_bytes()
    run_setup("claude-code", "--serve-url", "http://127.0.0.1:8765/", home=home, cwd=project)
    assert settings.read_bytes() == before  # idempotent
    # Without --serve-url the http hook is replaced in place by the command, and --remove takes
    # out ours of either kind and nothing else.
    run_setup("claude-code", home=home, cwd=project)
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["UserPromptSubmit"][0]["hooks"] == [others]
    assert [h["type"] for h in hooks["UserPromptSubmit"][1]["hooks"]] == ["command"]
    run_setup("claude-code", "--serve-url", "http://127.0.0.1:8765", home=home, cwd=project)
    run_setup("claude-code", "--remove", home=home, cwd=project)
    assert json.loads(settings.read_text())["hooks"] == {"UserPromptSubmit": [{"hooks": [others]}]}


def test_serve_url_is_checked_and_is_for_claude_code_only(tmp_path: Path) -> None:
    home, project = _project(tmp_path)
    bad = run_setup("claude-code", "--serve-url", "127.0.0.1:8765", home=home, cwd=project, expect=2)
    assert "--serve-url" in bad.stderr
    codex = run_setup("codex", "--serve-url", "http://127.0.0.1:8765", home=home, cwd=project, expect=2)
    assert "Claude Code" in codex.stderr
    assert not (project / ".claude").exists() and not (home / ".codex").exists()
