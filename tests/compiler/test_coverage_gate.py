"""The no-padding gate's parts (compiler/retrieve.gate_coverage, compiler/episodes.coverage), one
rule at a time: what counts as naming a participant or an entity, what a task with no words of its
own covers, which turns a weakly covered task keeps, and when no verdict is given. The whole path
through MCP is in test_agent_memory.py."""

from __future__ import annotations

from typing import Any

from memory_substrate.compiler import episodes
from memory_substrate.compiler.answer_type import asks_what_is_open, recounts_past_work, work_stance
from memory_substrate.compiler.candidates import Candidate
from memory_substrate.compiler.rank import CLOSE_MATCH
from memory_substrate.compiler.retrieve import OPENING_TOKENS, WEAK_TOKENS, WEAK_TURNS, gate_coverage
from memory_substrate.models import Segment
from memory_substrate.tokens import count_tokens


class _Rt:
    """Only what the gate asks of the runtime: whether an embedder is configured."""

    def embedder_or_none(self) -> Any:
        return None  # the lexical floors


def _seg(i: int, text: str, name: str = "Dana") -> Segment:
    return Segment("src-1", f"seg-{i}", i, text, {}, f"h{i}", metadata={"name": name})


def _turn(i: int, text: str) -> Candidate:
    return Candidate(
        f"src-1#seg-{i}", "episodic", "episode_recall", 1.0 - i / 100, "chat", segment=_seg(i, text)
    )


def _fact(key: str, sim: float) -> Candidate:
    return Candidate(key, "semantic", "fact_lookup", sim, "chat")


WEAK = {"episode_match": 0.1, "word_coverage": 0.1}


def test_only_whole_capitalised_names_that_are_not_function_words_name_a_participant() -> None:
    speakers = {"will": "Will", "mark": "Mark", "marisol": "Marisol"}
    assert episodes.named_participants("Will the fix hold for Marisol?", speakers) == ["marisol"]
    assert episodes.named_participants("We are marking the tickets", speakers) == []
    assert episodes.named_participants("what will mark do", speakers) == []
    assert episodes.named_participants("Is Mark's review done?", speakers) == ["mark"]
    # a sentence's first word is capitalised whatever it is
    assert episodes.named_participants("Mark the ticket as done. Then ask Marisol.", speakers) == ["marisol"]


def test_a_task_with_no_words_of_its_own_covers_nothing() -> None:
    pool = [(_seg(0, "We shipped the release yesterday."), None, 1.0)]
    share, named = episodes.coverage("What did we do last week?", pool)  # type: ignore[arg-type]
    assert share == 0.0 and named == []
    share, _ = episodes.coverage("Which release shipped?", pool)  # type: ignore[arg-type]
    assert share == 1.0


def test_names_written_as_code_count_only_as_whole_words() -> None:
    pool = [
        (_seg(0, "The user_id column is set in __init__ and getUserId reads it."), None, 1.0),
        (_seg(1, "We post the init script tonight."), None, 0.9),
    ]
    unseen = episodes.unseen_code_names(
        "Does __post_init__ set user_id? And usr_id, getUserId, USER_ID, TZ and the API?",
        pool,  # type: ignore[arg-type]
    )
    # "post" and "init" are held apart, never as the name; "USER_ID" is user_id, case aside;
    # plain words and acronyms ("TZ", "API") are not names written as code
    assert unseen == ["__post_init__", "usr_id"]
    assert episodes.unseen_code_names("What does the team do on Fridays?", pool) == []  # type: ignore[arg-type]


def test_a_task_naming_code_no_turn_holds_is_weak_whatever_its_match() -> None:
    found: dict[str, Any] = {"episode_match": 2.0, "word_coverage": 1.0, "code_names_unseen": ["usr_id"]}
    turns = [_turn(0, "short one")]
    gate_coverage(_Rt(), turns, found)  # type: ignore[arg-type]
    assert found["coverage"] == "weak" and "coverage_by" not in found
    found = {"episode_match": 2.0, "word_coverage": 1.0}
    gate_coverage(_Rt(), [_turn(0, "short one")], found)  # type: ignore[arg-type]
    assert found["coverage"] == "covered" and found["coverage_by"] == "match"


def test_no_verdict_without_recalled_turns() -> None:
    found: dict[str, Any] = {}
    fact = _fact("k1", 0.3)
    gate_coverage(_Rt(), [fact], found)  # type: ignore[arg-type]
    assert found["coverage"] == "unjudged" and fact.rejected is None


def test_a_weak_task_stops_at_the_first_turn_that_does_not_fit() -> None:
    long_text = "word " * (WEAK_TOKENS + 40)
    turns = [_turn(0, "short one"), _turn(1, long_text), _turn(2, "another short one")]
    found: dict[str, Any] = dict(WEAK)
    gate_coverage(_Rt(), turns, found)  # type: ignore[arg-type]
    assert found["coverage"] == "weak" and turns[0].rejected is None
    # the long second turn ends the run: the shorter, worse third one is not let in past it
    assert all(t.rejected and f"past {WEAK_TOKENS} tokens" in t.rejected for t in turns[1:])
    turns = [_turn(0, long_text), _turn(1, "short one")]
    gate_coverage(_Rt(), turns, dict(WEAK))  # type: ignore[arg-type]
    assert all(t.rejected for t in turns)  # a best turn too long for a near-empty package: none


def test_a_weak_task_keeps_at_most_its_best_turns_in_recall_order() -> None:
    turns = [_turn(i, f"turn {i}") for i in range(WEAK_TURNS + 2)]
    # all from one episode: one opening line
    assert (
        sum(count_tokens(t.segment.text) for t in turns[:WEAK_TURNS] if t.segment) + OPENING_TOKENS
        <= WEAK_TOKENS
    )
    found = dict(WEAK)
    gate_coverage(_Rt(), turns, found)  # type: ignore[arg-type]
    assert [t.rejected is None for t in turns] == [True] * WEAK_TURNS + [False, False]
    assert f"only its {WEAK_TURNS} best turns" in str(turns[-1].rejected)


def test_a_weak_task_admits_only_close_matches_of_everything_else() -> None:
    near, close = _fact("k-near", 0.7), _fact("k-close", CLOSE_MATCH)
    found = dict(WEAK)
    gate_coverage(_Rt(), [_turn(0, "hello"), near, close], found)  # type: ignore[arg-type]
    assert close.rejected is None and near.rejected and "only a close match enters" in near.rejected


def test_named_participants_and_asked_entities_cover_the_task_but_a_bare_entity_does_not() -> None:
    for extra, by in (
        ({"participants_named": ["marisol"]}, "participants"),
        ({"entities_asked": ["ent:1"]}, "entities"),
    ):
        found = {**WEAK, **extra}
        near = _fact("k", 0.5)
        gate_coverage(_Rt(), [_turn(0, "hi"), near], found)  # type: ignore[arg-type]
        assert found["coverage"] == "covered" and found["coverage_by"] == by and near.rejected is None
    # an entity the task's words happen to name, with no fact saying anything the task asks
    found = {**WEAK, "entities": [{"id": "ent:api", "match": 1.0}]}
    gate_coverage(_Rt(), [_turn(0, "hi")], found)  # type: ignore[arg-type]
    assert found["coverage"] == "weak"


def test_an_account_of_past_work_is_not_work_still_to_do() -> None:
    for task in (
        "Write the postmortem for last month's planning failures.",
        "Write the post mortem for the outage",
        "Write release notes for the app version that changed how it syncs.",
        "Write a short summary of why we dropped the warm start.",
        "Write a changelog entry for the route size change.",
    ):
        assert recounts_past_work(task) and work_stance(task) == (False, True), task
    # instructions to do work, whatever past they mention
    for task in (
        "Write a regression test for the refund 409s.",
        "Investigate what happened to the webhook and fix it",
        "Fix the changelog generator in CI",
    ):
        assert not recounts_past_work(task) and work_stance(task) == (True, False), task
    assert not recounts_past_work("Draft the weekly status update.")
    # a question about what is open stays one, whatever account it mentions
    assert work_stance("What is still open after the incident report?") == (True, False)


def test_only_a_question_for_the_open_work_lists_it() -> None:
    for task in (
        "What's still open before we go live?",
        "What are the open issues?",
        "What work remains?",
        "Which tickets are unresolved?",
        "What should I work on next?",
    ):
        assert asks_what_is_open(task), task
    for task in (
        "Where are we storing the session tokens?",
        "Which customers have an outstanding balance?",
        "Why does the ad blocker break checkout?",
        "How big is the Kafka consumer backlog?",
        "Build a todo list component",
        "What is left of the Q3 budget?",
        "I'm picking up the flaky job today, where are we?",
    ):
        assert not asks_what_is_open(task), task
