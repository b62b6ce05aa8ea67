"""The real Claude Code and Codex CLIs run offline against the loopback stubs: tools run for real,
hook context reaches the model, transcripts land where the parsers read them, sessions resume."""

from __future__ import annotations

from pathlib import Path

from memory_substrate.hooks.transcripts import read_claude_code, read_codex
from tests.agents import anthropic_stub as an
from tests.agents import openai_stub as oa
from tests.agents.clients import run_claude, run_codex
from tests.agents.record import START_CONTEXT, hooks_config, make_project


def test_claude_code_runs_real_tools_and_hooks_against_the_stub(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = make_project(home / "shop")
    with an.AnthropicStub([[an.bash("cat README.md")], an.text("It is a tiny shop.")]) as stub:
        run = run_claude(project, home, stub, "What is this project?", hooks_config()).check()
        assert run.result == "It is a tiny shop."
        assert stub.remaining == 0
        # The hook's context reached the first request; the real Bash output came back in the second.
        assert "the payments service is owned by Dana" in stub.received_text(0)
        results = an.tool_results(stub.model_requests[1])
        assert len(results) == 1 and "Orders of 100 EUR or more" in str(results[0]["content"])

        stub.add(an.text("Still a tiny shop."))
        again = run_claude(project, home, stub, "And now?", resume=run.session_id).check()
    assert again.session_id == run.session_id and again.transcript == run.transcript
    assert "What is this project?" in stub.received_text(-1)  # the resumed session carries its history
    assert run.transcript is not None
    turns = read_claude_code(run.transcript).turns
    assert [t.content for t in turns if t.role == "user"] == ["What is this project?", "And now?"]
    assert "[tool Bash] cat README.md" in [t.content for t in turns]


def test_codex_runs_real_tools_and_hooks_against_the_stub(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = make_project(home / "shop")
    with oa.OpenAIStub([[oa.exec_command("cat README.md")], oa.say("It is a tiny shop.")]) as stub:
        run = run_codex(project, home, stub, "What is this project?", hooks_config()).check()
        assert run.result == "It is a tiny shop."
        assert stub.remaining == 0
        # SessionStart's context reaches the model as a developer message.
        assert START_CONTEXT in oa.messages(stub.model_requests[0], "developer")
        outputs = oa.function_outputs(stub.model_requests[1])
        assert len(outputs) == 1 and "Orders of 100 EUR or more" in outputs[0]["output"]

        stub.add(oa.say("Still a tiny shop."))
        again = run_codex(project, home, stub, "And now?", resume=run.session_id).check()
    assert again.session_id == run.session_id and again.transcript == run.transcript
    assert "What is this project?" in oa.messages(stub.model_requests[-1], "user")
    assert run.transcript is not None
    turns = read_codex(run.transcript).turns
    assert [t.content for t in turns if t.role == "user"] == ["What is this project?", "And now?"]
    assert "[tool exec_command] cat README.md" in [t.content for t in turns]
