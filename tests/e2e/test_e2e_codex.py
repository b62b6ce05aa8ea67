"""The real ``codex exec`` with the hooks ``memory-substrate setup codex`` installed and had Codex
trust (through its app-server): the hooks run WITHOUT ``--dangerously-bypass-hook-trust``, a
session is captured once, and the next one starts with what it found."""

from __future__ import annotations

import re
from pathlib import Path

from tests.agents import openai_stub as oa
from tests.agents.clients import require
from tests.e2e.e2e_support import OPEN, Machine, episodes, namespace_of, spans

FOUND = "The nightly build fails because TZ is unset in CI; the report tests then run in UTC."


def test_a_codex_session_is_captured_and_the_next_starts_with_it(tmp_path: Path) -> None:
    require("codex")
    dev = Machine(tmp_path)
    project = dev.project(
        "shop", {"ci/nightly.yml": "jobs:\n  test:\n    env: {}\n"}, "git@example.com:acme/shop.git"
    )
    said = dev.setup_codex()
    assert re.search(r"Codex trusts all \d+ memory-substrate hooks", said), said

    first = dev.codex(
        project, "Why does the nightly build fail?", [[oa.exec_command("cat ci/nightly.yml")], oa.say(FOUND)]
    )
    first.run.check()
    assert "env: {}" in first.everything  # the command really ran
    eps = episodes(dev.root, namespace_of(project))
    assert list(eps) == [f"codex:{first.run.session_id}"]
    assert sum(FOUND in t for t in eps[f"codex:{first.run.session_id}"]) == 1

    later = dev.codex(project, "The nightly is red again. Known cause?", [oa.say("Yes, the known one.")])
    later.run.check()
    developer = oa.messages(later.requests[0], "developer")
    assert any(m.startswith(OPEN) and "TZ is unset in CI" in m for m in developer), developer[-2:]
    assert any("TZ is unset in CI" in s for s in spans(later.first))
    eps = episodes(dev.root, namespace_of(project))
    assert set(eps) == {f"codex:{first.run.session_id}", f"codex:{later.run.session_id}"}
    turns = [t for texts in eps.values() for t in texts]
    assert sum(FOUND in t for t in turns) == 1 and not [t for t in turns if OPEN in t]
