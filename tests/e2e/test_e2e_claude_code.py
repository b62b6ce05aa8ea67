"""The real Claude Code CLI with the hooks ``memory-substrate setup claude-code`` installed: what a
session found reaches the next session's first model request, inside our wrapper; another
project's memory never does; the store holds each session once, never the context it was given,
never a secret a tool printed nor a ``<private>`` span; the client records every hook run as a
normal exit, with its duration."""

from __future__ import annotations

from pathlib import Path

from tests.agents import anthropic_stub as an
from tests.agents.clients import require
from tests.e2e.e2e_support import (
    CLOSE,
    FAKE_KEY,
    INJECTED_HEADER,
    OPEN,
    Machine,
    episodes,
    hook_records,
    namespace_of,
    spans,
)

SHOP = {
    "README.md": "# shop\n",
    "ci/nightly.yml": "jobs:\n  test:\n    env:\n      DATABASE_URL: postgres://ci@localhost/shop\n"
    "    steps:\n      - run: pytest tests/test_reports.py\n",
    ".env": f"OPENAI_API_KEY={FAKE_KEY}\n",
}
BLOG = {"README.md": "# blog\n", "deploy/policy.json": '{"Effect": "Deny", "Action": "s3:PutObject"}\n'}
PRIVATE = "the customer behind this is Initech"
FOUND = "Found it: the nightly build fails because TZ is unset in CI, so the report tests run in UTC."
BLOG_FOUND = "The blog deploy fails because the bucket policy denies PutObject."


def test_a_later_session_starts_with_what_an_earlier_one_found(tmp_path: Path) -> None:
    require("claude-code")
    dev = Machine(tmp_path)
    shop = dev.project("shop", SHOP, "git@example.com:acme/shop.git")
    blog = dev.project("blog", BLOG, "git@example.com:acme/blog.git")
    dev.setup_claude(shop)
    dev.setup_claude(blog)

    first = dev.claude(
        shop,
        f"The nightly build fails. Find out why. <private>{PRIVATE}</private>",
        [[an.bash("cat ci/nightly.yml")], [an.bash("cat .env")], an.text(FOUND)],
    )
    first.run.check()
    # The tools really ran: the model got the file and the key in this session's tool results.
    assert "pytest tests/test_reports.py" in first.everything and FAKE_KEY in first.everything
    other = dev.claude(
        blog, "Why does the blog deploy fail?", [[an.bash("cat deploy/policy.json")], an.text(BLOG_FOUND)]
    )
    other.run.check()
    later = dev.claude(
        shop, "The nightly is red again. Same cause as last time?", [an.text("Yes, the same.")]
    )
    later.run.check()

    # What the first session found is in the later one's FIRST request, inside our wrapper.
    assert any("TZ is unset in CI" in s for s in spans(later.first)), later.first[-3000:]
    # Nothing crosses projects, and no secret or private span is handed back to the model.
    assert "TZ is unset" not in other.everything and "denies PutObject" not in later.everything
    for text in (FAKE_KEY, PRIVATE):
        assert text not in later.everything and text not in other.everything

    shop_eps = episodes(dev.root, namespace_of(shop))
    blog_eps = episodes(dev.root, namespace_of(blog))
    # Each session is captured once, as its own episode, in its own project's namespace.
    assert set(shop_eps) == {f"claude-code:{first.run.session_id}", f"claude-code:{later.run.session_id}"}
    assert set(blog_eps) == {f"claude-code:{other.run.session_id}"}
    turns = [t for eps in (shop_eps, blog_eps) for texts in eps.values() for t in texts]
    # The finding is stored once: the context the later session was handed is not captured again.
    assert sum(FOUND in t for t in turns) == 1
    assert not [t for t in turns if OPEN in t or CLOSE in t or INJECTED_HEADER in t]
    assert "[tool Bash] cat .env" in shop_eps[f"claude-code:{first.run.session_id}"]
    assert not [t for t in turns if FAKE_KEY in t or PRIVATE in t]
    assert not [t for t in blog_eps[f"claude-code:{other.run.session_id}"] if "TZ is unset" in t]

    # The client recorded our hooks: every Stop hook and the SessionStart that printed context
    # ran to a normal exit, each with its duration.
    assert first.run.transcript and later.run.transcript
    for run in (first.run, later.run):
        assert run.transcript is not None
        stops = hook_records(run.transcript)["stop"]
        assert stops, "no stop_hook_summary recorded"
        for rec in stops:
            infos = [i for i in rec["hookInfos"] if "memory-substrate" in i["command"]]
            assert infos and all(i["durationMs"] > 0 for i in infos)
            assert rec["hookErrors"] == [] and not rec["preventedContinuation"]
    started = [a for a in hook_records(later.run.transcript)["success"] if a["hookEvent"] == "SessionStart"]
    assert started and started[0]["exitCode"] == 0 and started[0]["durationMs"] > 0
    log = dev.root / "logs" / "hooks.log"
    assert not log.exists() or "failed" not in log.read_text(), log.read_text()
