"""``memory-substrate hook claude-code|codex`` run as the clients run it: the event JSON on stdin,
the answer on stdout, exit 0. Sessions are captured at Stop and handed back at SessionStart and
on each prompt, wrapped in the markers, once per session, and only within their own project."""

from __future__ import annotations

import json
from pathlib import Path

from memory_substrate.hooks.project import project_namespace
from memory_substrate.tokens import count_tokens
from tests.hooks.hook_support import CLOSE, OPEN, Hooks, Transcript, context, episodes, project, texts

CHECKOUT = (
    ("user", "The checkout service keeps timing out on the payments call. Find the cause."),
    (
        "assistant",
        "Found it: the payments client timeout is 200 ms while the Stripe API p95 latency is 450 ms. "
        "I raised payments.timeout_ms to 2000 in config/payments.yaml and the checkout tests pass.",
    ),
    (
        "user",
        "Good. We also decided to move transactional email from SendGrid to Postmark; Alice owns that migration.",
    ),
    ("assistant", "Noted: transactional email moves to Postmark, and Alice owns the migration."),
)
GARDEN = (
    ("user", "Plan the raised beds for the allotment: tomatoes, beans and courgettes along the south fence."),
    (
        "assistant",
        "The beans go on the north side so they do not shade the tomatoes; courgettes need the most room.",
    ),
)


def _captured(
    tmp_path: Path,
    hooks: Hooks,
    name: str = "shop",
    turns: tuple[tuple[str, str], ...] = CHECKOUT,
    session: str = "sess-1",
) -> Transcript:
    repo = project(tmp_path, name)
    t = Transcript(hooks.home / ".claude" / "projects" / name / f"{session}.jsonl", session, repo).add(*turns)
    assert (
        hooks.run(t.event("Stop", stop_hook_active=False, last_assistant_message=turns[-1][1])).stdout == ""
    )
    return t


def test_session_start_on_an_empty_store_prints_nothing(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    repo = project(tmp_path, "shop")
    t = Transcript(tmp_path / "t" / "s.jsonl", "s", repo)
    proc = hooks.run(t.event("SessionStart", source="startup"))
    assert proc.stdout == "" and hooks.log() == ""
    assert not (hooks.root / "memory.sqlite3").exists()  # a read creates no store
    # A store holding only another project's memory has nothing for this one either.
    _captured(tmp_path, hooks, "garden", GARDEN, "g1")
    assert hooks.run(t.event("SessionStart", source="startup")).stdout == ""


def test_a_captured_session_is_handed_to_the_next_one(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    first = _captured(tmp_path, hooks)
    namespace = project_namespace(first.cwd)
    assert episodes(hooks.root, namespace) == [
        ("claude-code session The checkout service keeps timing out on the …", 4)
    ]

    nxt = Transcript(first.path.with_name("sess-2.jsonl"), "sess-2", first.cwd)
    start = context(hooks.run(nxt.event("SessionStart", source="startup")), "SessionStart")
    assert start is not None and "Postmark" in start  # the last session's last answer
    assert count_tokens(start) <= 800

    proc = hooks.run(
        nxt.event("UserPromptSubmit", prompt="Why was the checkout timing out on the payments call?")
    )
    given = context(proc, "UserPromptSubmit")
    assert given is not None and "200 ms" in given and "450 ms" in given
    assert count_tokens(given) <= 1000
    assert hooks.log() == ""


def test_a_recalled_session_brings_its_conclusion_past_its_tool_calls(tmp_path: Path) -> None:
    # The question matches the later prompt's words, its answer (after the tool calls) does not.
    hooks = Hooks(tmp_path)
    repo = project(tmp_path, "shop")
    yaml = "\n".join(
        [
            "name: nightly",
            "on:",
            "  schedule:",
            "    - cron: '30 23 * * *'",
            "jobs:",
            "  test:",
            "    runs-on: ubuntu-latest",
            "    steps:",
            "      - run: pytest tests/test_reports.py",
        ]
        * 3
    )
    first = Transcript(hooks.home / ".claude" / "projects" / "shop" / "s1.jsonl", "s1", repo)
    first.add(("user", "The nightly build has been red since Monday. Find out why."))
    first.tool("Bash", "cat ci/nightly.yml", yaml).tool(
        "Bash", "cat tests/test_reports.py", "def test_daily(): ..."
    )
    first.add(
        (
            "assistant",
            "Found it: the report tests run in UTC because TZ is unset in CI, so the 23:30 order "
            "lands on the next day. Setting TZ=Europe/Berlin in the job's env fixes it.",
        )
    )
    hooks.run(first.event("Stop", stop_hook_active=False, last_assistant_message="Found it"))
    nxt = Transcript(first.path.with_name("s2.jsonl"), "s2", repo)
    for prompt in (
        "The nightly is red again this morning. Same problem as last time?",
        "Is the nightly build red since Monday for the same reason?",
    ):
        given = context(hooks.run(nxt.event("UserPromptSubmit", prompt=prompt)), "UserPromptSubmit") or ""
        assert "TZ is unset" in given, given
        assert count_tokens(given) <= 1000
        nxt = Transcript(first.path.with_name("s3.jsonl"), "s3", repo)
    assert hooks.log() == ""


def test_a_session_starts_with_a_line_for_each_earlier_session(tmp_path: Path) -> None:
    """The three latest sessions come with their last answers, the ones before them a line each,
    newest first, within the budget; a chat that shares only generic words with "what is open"
    ("opening the studio") is not handed over."""
    hooks = Hooks(tmp_path)
    first = _captured(tmp_path, hooks, turns=CHECKOUT[:2], session="s0")
    _captured(
        tmp_path,
        hooks,
        turns=(
            ("user", "Is the studio opening still open for sign-ups?"),
            ("assistant", "Still open until Friday."),
        ),
        session="s1",
    )
    for i in range(2, 8):
        _captured(
            tmp_path,
            hooks,
            turns=(("user", f"Rename helper number {i} in utils."), ("assistant", f"Renamed helper {i}.")),
            session=f"s{i}",
        )
    nxt = Transcript(first.path.with_name("s9.jsonl"), "s9", first.cwd)
    start = context(hooks.run(nxt.event("SessionStart", source="startup")), "SessionStart") or ""
    latest, _, earlier = start.partition("Earlier sessions, newest first")
    assert "Renamed helper 7." in latest and "Renamed helper 5." in latest
    assert "Renamed helper 4." not in latest
    lines = [line for line in earlier.splitlines() if line.startswith("- ")]
    assert [line.rsplit(": ", 1)[1] for line in lines] == [
        "Renamed helper 4.",
        "Renamed helper 3.",
        "Renamed helper 2.",
        "Still open until Friday.",
        "the payments client timeout is 200 ms while the Stripe API p95 latency is 450 ms. I raised "
        "payments.timeout_ms to 2000 in config/payments.yaml and th\u2026",
    ][: len(lines)]
    assert len(lines) == 5
    assert (
        lines[0].split(" ", 2)[2].startswith('"Rename helper number 4 in utils."')
    )  # no "claude-code session"
    assert "450 ms" in earlier  # the first session, eight back, still named at the start
    assert start.count("Still open until Friday") == 1  # once, as a line, never as a recalled turn
    assert count_tokens(start) <= 800


def test_a_session_starts_with_open_work_and_the_decisions_in_force(tmp_path: Path) -> None:
    from memory_substrate.app import Memory
    from memory_substrate.settings import Settings

    hooks = Hooks(tmp_path)
    first = _captured(tmp_path, hooks)
    common = {"reason": "agreed in review", "memory_source": "user_declared", "scope_refs": ["scope:project"]}
    with Memory(Settings(root=hooks.root, namespace=project_namespace(first.cwd))) as mem:
        mem.remember(
            "knowledge",
            {
                **common,
                "kind": "decision",
                "title": "Transactional email goes through Postmark",
                "summary": "Moved from SendGrid in November; Alice owns the migration.",
            },
        )
        mem.remember(
            "knowledge",
            {
                **common,
                "kind": "decision",
                "title": "Feature flags live in LaunchDarkly",
                "summary": "Chosen for the audit log.",
                "valid_until": "2026-01-01T00:00:00Z",
            },
        )
        mem.remember(
            "work_item",
            {
                **common,
                "kind": "task",
                "title": "Add retry with backoff to the payments client",
                "summary": "Three retries with jittered backoff.",
            },
        )
    nxt = Transcript(first.path.with_name("sess-2.jsonl"), "sess-2", first.cwd)
    start = context(hooks.run(nxt.event("SessionStart", source="startup")), "SessionStart") or ""
    assert "decision active] Transactional email goes through Postmark" in start
    assert "task open] Add retry with backoff" in start
    assert "LaunchDarkly" not in start  # no longer in force
    assert start.count("Alice owns the migration") <= 2  # the decision and the turn that made it, once each
    assert count_tokens(start) <= 800


def test_a_prompt_is_never_handed_what_the_session_already_holds(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    first = _captured(tmp_path, hooks)
    nxt = Transcript(first.path.with_name("sess-2.jsonl"), "sess-2", first.cwd)
    prompt = "Why was the checkout timing out on the payments call?"
    once = context(hooks.run(nxt.event("UserPromptSubmit", prompt=prompt)), "UserPromptSubmit")
    assert once is not None and "450 ms" in once
    again = context(hooks.run(nxt.event("UserPromptSubmit", prompt=prompt)), "UserPromptSubmit")
    assert again is None or "450 ms" not in again
    # Another session is handed it again; so is this one after the client compacted it.
    other = Transcript(first.path.with_name("sess-3.jsonl"), "sess-3", first.cwd)
    assert "450 ms" in (
        context(hooks.run(other.event("UserPromptSubmit", prompt=prompt)), "UserPromptSubmit") or ""
    )
    hooks.run(nxt.event("SessionStart", source="compact"))
    assert "450 ms" in (
        context(hooks.run(nxt.event("UserPromptSubmit", prompt=prompt)), "UserPromptSubmit") or ""
    )


def test_a_prompt_memory_does_not_cover_gets_nothing(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    first = _captured(tmp_path, hooks)
    nxt = Transcript(first.path.with_name("sess-2.jsonl"), "sess-2", first.cwd)
    for prompt in (
        "How long should I knead sourdough bread dough by hand?",
        "Translate 'good morning' into Welsh.",
    ):
        given = context(hooks.run(nxt.event("UserPromptSubmit", prompt=prompt)), "UserPromptSubmit")
        assert given is None or count_tokens(given) <= 150, given
    # Nothing to recall for a bare acknowledgement.
    assert hooks.run(nxt.event("UserPromptSubmit", prompt="ok")).stdout == ""


def test_two_projects_never_see_each_others_memory(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    shop = _captured(tmp_path, hooks)
    garden = _captured(tmp_path, hooks, "garden", GARDEN, "g1")
    assert project_namespace(shop.cwd) != project_namespace(garden.cwd)
    g2 = Transcript(garden.path.with_name("g2.jsonl"), "g2", garden.cwd)
    start = context(hooks.run(g2.event("SessionStart", source="startup")), "SessionStart") or ""
    asked = (
        context(
            hooks.run(g2.event("UserPromptSubmit", prompt="Why was the checkout timing out on payments?")),
            "UserPromptSubmit",
        )
        or ""
    )
    for word in ("checkout", "Postmark", "450 ms", "Stripe"):
        assert word not in start and word not in asked
    assert "beans" in start
    # The shop's own sessions still get it, from any folder inside the repository.
    (shop.cwd / "src").mkdir()
    inside = Transcript(shop.path.with_name("sess-9.jsonl"), "sess-9", shop.cwd / "src")
    assert "450 ms" in (
        context(
            hooks.run(
                inside.event("UserPromptSubmit", prompt="Why was the checkout timing out on payments?")
            ),
            "UserPromptSubmit",
        )
        or ""
    )


def test_stop_captures_only_what_was_added_and_twice_adds_nothing(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    t = _captured(tmp_path, hooks)
    namespace = project_namespace(t.cwd)
    assert [n for _, n in episodes(hooks.root, namespace)] == [4]
    hooks.run(t.event("Stop"))  # nothing new
    t.add(
        ("user", "Add a retry with backoff to the payments client."),
        ("assistant", "Added three retries with jittered backoff."),
    )
    hooks.run(t.event("Stop"))
    hooks.run(t.event("PreCompact", trigger="auto", custom_instructions=""))
    hooks.run(t.event("SessionEnd", reason="prompt_input_exit"))
    assert [n for _, n in episodes(hooks.root, namespace)] == [6]  # one episode, appended to
    # A lost cursor costs a re-read, not a copy: the store already has every turn.
    for cursor in (hooks.root / "hooks" / "cursors").iterdir():
        cursor.unlink()
    hooks.run(t.event("Stop"))
    assert [n for _, n in episodes(hooks.root, namespace)] == [6]
    assert hooks.log() == ""


def test_what_the_hooks_injected_is_never_stored_again(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    first = _captured(tmp_path, hooks)
    nxt = Transcript(first.path.with_name("sess-2.jsonl"), "sess-2", first.cwd)
    given = context(
        hooks.run(nxt.event("UserPromptSubmit", prompt="Why was the checkout timing out on payments?")),
        "UserPromptSubmit",
    )
    assert given is not None
    # The client records the hook's context in the transcript; a user may paste it back too.
    nxt.add(
        ("user", f"{given}\nSo should we raise the timeout further?"),
        ("assistant", "No: 2000 ms leaves room."),
    )
    hooks.run(nxt.event("Stop"))
    stored = texts(hooks.root, project_namespace(first.cwd))
    assert OPEN not in stored and CLOSE not in stored
    assert stored.count("Stripe API p95 latency is 450 ms") == 1
    assert "So should we raise the timeout further?" in stored


def test_secrets_and_private_spans_are_never_stored(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path)
    repo = project(tmp_path, "shop")
    t = Transcript(hooks.home / "t" / "s.jsonl", "s", repo).add(
        (
            "user",
            "Deploy with OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEF please "
            "<private>my home address is 12 Elm Street</private> and tell me when done.",
        ),
        ("assistant", "Deployed. The database is postgresql://admin:hunter2secret@db.internal:5432/shop."),
    )
    hooks.run(t.event("Stop"))
    stored = texts(hooks.root, project_namespace(repo))
    assert "Deployed." in stored
    for secret in ("sk-proj-abcdefghijklmnopqrstuvwxyz", "hunter2secret", "12 Elm Street"):
        assert secret not in stored


def test_codex_events_are_answered_in_the_same_shape(tmp_path: Path) -> None:
    hooks = Hooks(tmp_path, CODEX_HOME=str(tmp_path / "codex"))
    repo = project(tmp_path, "shop")
    day = tmp_path / "codex" / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    sid = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    rollout = day / f"rollout-2026-11-30T10-00-00-{sid}.jsonl"
    lines = [
        {
            "timestamp": "2026-11-30T10:00:00.000Z",
            "type": "session_meta",
            "payload": {
                "id": sid,
                "timestamp": "2026-11-30T10:00:00.000Z",
                "cwd": str(repo),
                "originator": "codex_exec",
                "cli_version": "0.169.0",
            },
        },
        {
            "timestamp": "2026-11-30T10:00:01.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": CHECKOUT[0][1]}],
            },
        },
        {
            "timestamp": "2026-11-30T10:00:05.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": CHECKOUT[1][1]}],
            },
        },
    ]
    rollout.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    base = {"session_id": sid, "cwd": str(repo), "model": "gpt-5", "permission_mode": "default"}
    # Codex may send no transcript path: the rollout is found by the session id.
    hooks.run(
        {
            **base,
            "hook_event_name": "Stop",
            "turn_id": "t1",
            "transcript_path": None,
            "stop_hook_active": False,
            "last_assistant_message": CHECKOUT[1][1],
        },
        client="codex",
    )
    assert [n for _, n in episodes(hooks.root, project_namespace(repo))] == [2]
    nxt = {**base, "session_id": "0199a1b2-0000-7e5f-8a9b-0c1d2e3f4a5c", "transcript_path": None}
    start = context(
        hooks.run({**nxt, "hook_event_name": "SessionStart", "source": "startup"}, client="codex"),
        "SessionStart",
    )
    assert start is not None and "450 ms" in start
