"""``setup claude-code --serve-url``: the real Claude Code posts each prompt's event to a running
``serve`` itself (an ``http`` hook) and the model's first request carries what an earlier session
found, with no hook process started for the prompt. With the server down, sessions still run to
the end: the prompt goes on without memory and the capture falls back to the local store."""

from __future__ import annotations

from pathlib import Path

from memory_substrate.hooks.inject import PROMPT_HEADER, WEAK_HEADER
from tests.agents import anthropic_stub as an
from tests.agents.clients import require
from tests.e2e.e2e_support import Machine, Server, episodes, hook_records, namespace_of, spans

ORIGIN = "git@example.com:acme/shop.git"
FILES = {"README.md": "# shop\n", "CODEOWNERS": "/services/billing/ @dana\n"}
FOUND = "From CODEOWNERS: Dana owns the billing service, so she reviews billing changes."


def test_claude_code_posts_its_prompts_to_the_running_server(tmp_path: Path) -> None:
    require("claude-code")
    dev = Machine(tmp_path / "dev")
    shop = dev.project("shop", FILES, ORIGIN)
    namespace = namespace_of(shop)
    token = dev.cli("token", "create", "--namespace", namespace, "--label", "prompts").stdout.strip()
    server = Server(dev.root, dev.env())
    try:
        dev.cli("setup", "claude-code", "--dir", str(shop), "--serve-url", server.url, cwd=shop)
        warm = {"MEMORY_SUBSTRATE_HOOK_URL": server.url, "MEMORY_SUBSTRATE_HOOK_TOKEN": token}
        first = dev.claude(
            shop,
            "Who owns billing? I need a reviewer.",
            [[an.bash("cat CODEOWNERS")], an.text(FOUND)],
            env=warm,
        )
        first.run.check()
        assert f"claude-code:{first.run.session_id}" in episodes(dev.root, namespace)

        # SessionStart (a command) hands over nothing here, so what reaches the model came by the
        # prompt's http hook.
        quiet_start = {**warm, "MEMORY_SUBSTRATE_HOOK_SESSION_BUDGET": "0"}
        later = dev.claude(
            shop, "I changed invoice rounding. Who should review it?", [an.text("Dana.")], env=quiet_start
        )
        later.run.check()
        assert any("Dana owns the billing service" in s for s in spans(later.first)), later.first[-2000:]
        assert later.run.transcript is not None
        ran = {att.get("hookEvent") for att in hook_records(later.run.transcript)["success"]}
        assert "UserPromptSubmit" not in ran  # no hook process ran for the prompt
        assert PROMPT_HEADER in later.first or WEAK_HEADER in later.first
    finally:
        server.stop()

    # The server is down: the session runs to the end and is captured by the command's cold path.
    down = dev.claude(
        shop, "Add a line to the README.", [[an.bash("cat README.md")], an.text("Added.")], env=warm
    )
    down.run.check()
    assert down.run.result == "Added." and len(down.requests) == 2
    assert f"claude-code:{down.run.session_id}" in episodes(dev.root, namespace)
    # The prompt went on without memory: its hook's server is down.
    assert PROMPT_HEADER not in down.first and WEAK_HEADER not in down.first
