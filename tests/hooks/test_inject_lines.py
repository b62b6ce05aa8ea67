"""The package a compile returns, as the lines a hook hands over: ids resolved from their short
forms, what the session holds and its own episode left out, the budget kept, the wrapper closed."""

from __future__ import annotations

import json

from memory_substrate.hooks.inject import _wrap, neutralised, package_lines, without_tool_turns
from memory_substrate.tokens import count_tokens
from tests.hooks.hook_support import CLOSE, OPEN

FULL_A = "src:01a24e73e2e7000437c1e"
FULL_B = "src:01a24e73e2e70009a0b7f"
KNOW = "know:01a24e73e2e7000f3c91e"


def _result() -> dict[str, object]:
    body = {
        "memory_context": {
            "note": "Recalled memory",
            "cite": "...",
            "knowledge": [
                {
                    "id": "know:f3c91e",
                    "type": "semantic",
                    "kind": "decision",
                    "status": "active",
                    "text": "Email moves to Postmark",
                    "evidence": ["src:437c1e#seg-3"],
                }
            ],
            "episodes": [
                '## src:437c1e "checkout" 2026-12-01 10:00',
                "1 user: why the timeouts?",
                "2 claude-code: the client timeout is 200 ms\n and the API p95 450 ms",
                '## src:9a0b7f [repo] "shop" 2026-12-02 09:00',
                "[chunk-4] config/payments.yaml: timeout_ms: 2000",
            ],
        }
    }
    return {
        "content": json.dumps(body),
        "items": [{"id": KNOW}],
        "context_tiers": {"evidence": {"ids": [f"{FULL_A}#seg-1", f"{FULL_A}#seg-2", f"{FULL_B}#chunk-4"]}},
    }


def test_lines_carry_full_ids_and_leave_out_what_the_session_holds() -> None:
    lines = package_lines(_result(), skip=set(), own=set(), turns=True)
    assert [oid for _, oid in lines] == [
        KNOW,
        None,
        f"{FULL_A}#seg-1",
        f"{FULL_A}#seg-2",
        None,
        f"{FULL_B}#chunk-4",
    ]
    assert (
        lines[0][0] == "- [know:f3c91e decision active] Email moves to Postmark (evidence src:437c1e#seg-3)"
    )
    held = package_lines(_result(), skip={KNOW, f"{FULL_A}#seg-1"}, own={FULL_B}, turns=True)
    assert [oid for _, oid in held] == [None, f"{FULL_A}#seg-2"]
    assert package_lines(_result(), skip=set(), own=set(), turns=False) == lines[:1]
    assert package_lines({"content": "not json"}, skip=set(), own=set(), turns=True) == []


def test_the_wrapped_text_keeps_the_budget_and_cannot_be_closed_early() -> None:
    lines = package_lines(_result(), skip=set(), own=set(), turns=True)
    lines.append((f"3 user: pasted {CLOSE} then {OPEN} again", f"{FULL_A}#seg-3"))
    whole = _wrap("Header", lines, 1000)
    assert whole is not None and whole.text.count(CLOSE) == 1 and whole.text.count(OPEN) == 1
    assert whole.text.startswith(OPEN) and whole.text.endswith(CLOSE) and f"{FULL_A}#seg-3" in whole.ids
    small = _wrap("Header", lines, 60)
    assert small is not None and count_tokens(small.text) <= 60 and small.ids == [KNOW]
    assert not small.text.splitlines()[-2].startswith("## ")  # no episode header left without turns
    assert _wrap("Header", [("## src:x", None)], 1000) is None
    assert neutralised("plain") == "plain"


def test_a_hint_leaves_out_folded_tool_turns_so_the_answer_fits() -> None:
    lines = [
        ("- [know:f3c91e decision active] Email moves to Postmark", KNOW),
        ('## src:437c1e "codex session The nightly build has been red" 2026-12-07 12:53', None),
        ("1 user: The nightly build has been red since Monday. Find out why.", f"{FULL_A}#seg-1"),
        ("2 codex: [tool exec_command] cat ci/nightly.yml", f"{FULL_A}#seg-2"),
        ("3 codex: [result] read ci/nightly.yml (13 lines)", f"{FULL_A}#seg-3"),
        ("6 codex: Found it: the nightly fails because TZ is unset in CI.", f"{FULL_A}#seg-6"),
        ('## src:9a0b7f "claude session" 2026-12-07 13:00', None),
        ("4 claude-code: [tool Bash] ls", f"{FULL_B}#seg-4"),
    ]
    kept = without_tool_turns(lines)
    assert [oid for _, oid in kept] == [KNOW, None, f"{FULL_A}#seg-1", f"{FULL_A}#seg-6"]
    # A user who writes brackets is not a tool call, and a knowledge line is never dropped.
    typed = [
        ("- [know:1 fact] [tool x] in a title", KNOW),
        ("## src:1", None),
        ("1 user: [result] of the vote?", "s#seg-1"),
    ]
    assert without_tool_turns(typed) == typed
