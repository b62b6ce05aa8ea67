"""The agent's own memory reaches the task that needs it (issue: context for real agent work).

A store as a new user builds it: a refund incident chat among 30 unrelated chats, an open work
item and an active, user-declared decision, then a repo and a PDF beside them. A debug task that
names the work must get the work item and the decision, whatever the class's profile leads with.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate.app import Memory
from memory_substrate.mcp.server import build_server
from tests.helpers import call, conversation, knowledge
from tests.ingest_adapters.conftest import make_pdf

pytestmark = pytest.mark.anyio


@pytest.fixture
def memory(default_memory: Memory) -> Memory:
    """These cases are a new user's: the default embedder."""
    return default_memory


TOPICS = [
    ("Lunch", ["Where should we get lunch today?", "The ramen place on 5th is good.", "Let's go at noon."]),
    (
        "Hiring",
        ["We have two backend candidates this week.", "I'll take the Thursday interview.", "Send me the CV."],
    ),
    ("CSS", ["The sidebar overflows on Safari.", "Try min-width: 0 on the flex child.", "That fixed it."]),
    (
        "Offsite",
        ["Venue booked for the spring offsite.", "Can we do a hike on day two?", "Sure, weather permitting."],
    ),
    ("Laptop", ["My laptop fan is loud.", "Open a ticket with IT.", "Done, they'll swap it."]),
    ("Docs", ["The onboarding guide is outdated.", "I'll rewrite the setup section.", "Thanks!"]),
    ("Metrics", ["Dashboard p95 looks fine this week.", "The Grafana panel was renamed.", "Noted."]),
    ("Holiday", ["I'm off next Friday.", "Enjoy, I'll cover on-call.", "Thanks a lot."]),
    ("Design", ["New icons from the design team landed.", "They look sharp in dark mode.", "Ship them."]),
    ("Coffee", ["The coffee machine is broken again.", "Facilities are on it.", "Tea it is."]),
]


async def _seed(c: Client, extra: bool, tmp_path: Path) -> dict[str, str]:
    for i in range(30):
        title, turns = TOPICS[i % len(TOPICS)]
        await call(
            c,
            "memory_ingest",
            "conversation",
            conversation([f"{t} ({title.lower()} thread {i})" for t in turns], title=f"{title} {i}"),
        )
    await call(
        c,
        "memory_ingest",
        "conversation",
        conversation(
            [
                "Customers see HTTP 409 when the refund request is retried after a timeout.",
                "The second POST hits the unique constraint on refund_id and we return Conflict.",
                "We should make refunds idempotent on the client's key instead of failing.",
                "Agreed; and someone needs to cover this with a test.",
            ],
            title="Refund incident",
        ),
    )
    ids = {}
    ids["work"] = (
        await call(
            c,
            "memory_remember",
            "work_item",
            knowledge(
                kind="task",
                title="Add regression test for refund 409",
                summary="A retried refund must not answer 409; add a test that replays the retry.",
            ),
        )
    )["object_id"]
    ids["decision"] = (
        await call(
            c,
            "memory_remember",
            "knowledge",
            knowledge(
                kind="decision",
                title="Refunds are idempotent on the Idempotency-Key header",
                summary="A repeated refund request with the same Idempotency-Key returns the first result instead of 409.",
                memory_source="user_declared",
            ),
        )
    )["object_id"]
    ids["activity"] = (
        await call(
            c,
            "memory_remember",
            "activity",
            knowledge(
                kind="investigation",
                title="Traced refund 409s to the unique constraint",
                summary="Replayed a timed-out refund: the retry violates refunds.refund_id unique and answers 409.",
            ),
        )
    )["object_id"]
    if extra:
        repo = tmp_path / "repo"
        repo.mkdir()
        (repo / "cache.py").write_text(
            '"""An LRU cache for rendered templates."""\n\n\ndef get(key):\n    return None\n'
        )
        (repo / "README.md").write_text("# Storefront\n\nRenders the shop pages.\n")
        await call(c, "memory_ingest", "repo", {"path": str(repo)})
        pdf = tmp_path / "plan.pdf"
        pdf.write_bytes(make_pdf(["Quarterly marketing plan: social campaigns and newsletters."]))
        await call(c, "memory_ingest", "pdf", {"path": str(pdf)})
    return ids


async def _compile(c: Client, task: str, **input_data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    out = await call(c, "memory_query", "context", {"task": task, **input_data})
    trace = (await call(c, "memory_query", "trace", {"id": out["trace_id"]}))["trace"]
    return out, trace


def _selected(trace: dict[str, Any]) -> set[str]:
    return {e["id"] for e in trace["candidates"]["selected"]}


@pytest.mark.parametrize("extra", [False, True], ids=["chats", "chats+repo+pdf"])
async def test_debug_task_gets_the_open_work_and_the_decision(
    memory: Memory, tmp_path: Path, extra: bool
) -> None:
    async with Client(build_server(memory)) as c:
        ids = await _seed(c, extra, tmp_path)
        out, trace = await _compile(
            c, "Fix the refund 409 errors and add a regression test", budget_tokens=1500
        )
        assert out["classification"]["primary"]["class"] == "debug"
        selected = _selected(trace)
        assert ids["work"] in selected and ids["decision"] in selected, (
            trace["candidates"]["rejected"],
            trace["profiles"],
        )
        # every strategy ran: fact lookup too, although debug's profile leads with graph and episodes
        assert {p["strategy"] for p in trace["profiles"] if "skipped" not in p} >= {
            "fact_lookup",
            "episode_recall",
        }


async def test_object_types_apply_to_every_stream(memory: Memory, tmp_path: Path) -> None:
    async with Client(build_server(memory)) as c:
        ids = await _seed(c, True, tmp_path)
        task = "Fix the refund 409 errors and add a regression test"
        _, trace = await _compile(c, task, scope={"object_types": ["activity"]})
        selected = trace["candidates"]["selected"]
        assert selected and {e["id"] for e in selected} == {ids["activity"]}
        # the strategies that can yield nothing of the asked types are skipped, and the trace says why
        skipped = {
            p["strategy"] for p in trace["profiles"] if p.get("skipped") == "outside scope.object_types"
        }
        assert skipped >= {"episode_recall", "procedure_assist", "graph"}, trace["profiles"]
        _, trace = await _compile(c, task, scope={"object_types": ["work_item"]})
        assert _selected(trace) == {ids["work"]}
        _, trace = await _compile(c, task, scope={"object_types": ["source"]})
        assert _selected(trace) and all("#" in k for k in _selected(trace))


@pytest.mark.parametrize(
    "task",
    [
        "What's the fastest way to learn Rust in a month?",
        "The TLS certificate on the marketing website expired. How do I renew it?",
        "Draft a thank-you note to the catering company for the holiday party.",
    ],
)
async def test_task_memory_does_not_cover_gets_a_near_empty_package(
    memory: Memory, tmp_path: Path, task: str
) -> None:
    async with Client(build_server(memory)) as c:
        await _seed(c, True, tmp_path)
        out, trace = await _compile(c, task, budget_tokens=1500)
        assert out["token_count"] <= 300, (out["token_count"], out["content"])
        assert "memory barely covers this task" in out["content"]
        assert trace["coverage"] == "weak" and trace["classification"]["primary"]["class"]
        # turns past the first few are left out, with the cause that stopped them
        assert re.search(
            r"memory barely covers the task \(match [0-9.]+ < [0-9.]+\): (only its \d best turns|the next "
            r"best turn would take it past \d+ tokens)",
            str(trace["candidates"]["rejected"]),
        )
        # a task memory covers is not cut: the refund work still fills its package
        out, trace = await _compile(
            c, "Fix the refund 409 errors and add a regression test", budget_tokens=1500
        )
        assert trace["coverage"] == "covered" and "memory barely covers" not in out["content"]
        assert out["token_count"] > 300


async def test_a_task_naming_code_memory_never_held_is_weak_however_many_words_it_shares(
    memory: Memory,
) -> None:
    """Chats that happen to hold a question's words ("Python", "dataclass", "example") do not
    cover a question about ``__post_init__`` when no turn ever wrote that name; once one does, the
    same question is covered by it."""
    chats = [
        ("Hobbies", ["I learned Python in college and built a game mod.", "Here is one example of it."]),
        ("Money", ["The Money class is a frozen dataclass with integer cents.", "Good, no floats."]),
        ("Course", ["Can you explain the course schedule?", "Sure: short lessons, with an example each."]),
        *TOPICS,
    ]
    task = "Explain what a Python dataclass __post_init__ is for, with a short example."
    async with Client(build_server(memory)) as c:
        for i, (title, turns) in enumerate(chats):
            await call(c, "memory_ingest", "conversation", conversation(turns, title=f"{title} {i}"))
        out, trace = await _compile(c, task, budget_tokens=1500)
        assert trace["code_names_unseen"] == ["__post_init__"] and trace["coverage"] == "weak", trace
        assert out["token_count"] <= 300 and "memory barely covers this task" in out["content"]
        assert "no recalled turn holds __post_init__" in str(trace["candidates"]["rejected"])
        await call(
            c,
            "memory_ingest",
            "conversation",
            conversation(
                ["Why does Money validate in __post_init__?", "Because a dataclass runs it after __init__."],
                title="Money review",
            ),
        )
        _, trace = await _compile(c, task, budget_tokens=1500)
        assert "code_names_unseen" not in trace and trace["coverage"] == "covered", trace


async def test_a_task_naming_someone_memory_talked_with_is_covered(memory: Memory) -> None:
    """A question about a person the conversations are with is about memory, however little of
    the rest of its words memory holds."""
    async with Client(build_server(memory)) as c:
        for i, (title, turns) in enumerate(TOPICS):
            await call(
                c,
                "memory_ingest",
                "conversation",
                conversation(turns, title=f"{title} {i}", names=["Marisol", "Teodor"]),
            )
        task = "What attributes describe Marisol?"
        _, trace = await _compile(c, task, budget_tokens=1500)
        assert trace["participants_named"] == ["marisol"] and trace["coverage"] == "covered"
        _, trace = await _compile(
            c, "What attributes describe the quarterly tax filings?", budget_tokens=1500
        )
        assert "participants_named" not in trace and trace["coverage"] == "weak"


async def test_finished_work_reaches_an_account_of_it_but_not_a_task_to_do_it(
    memory: Memory, tmp_path: Path
) -> None:
    """A done item is history: release notes about the fix recount it, a task to fix the bug again
    must not be told it is handled."""
    async with Client(build_server(memory)) as c:
        ids = await _seed(c, False, tmp_path)
        await call(
            c,
            "memory_remember",
            "work_item",
            {"work_item_id": ids["work"], "status": "done", "reason": "merged"},
        )
        _, trace = await _compile(
            c, "Write the release notes for the retried refund 409 change", budget_tokens=1500
        )
        assert ids["work"] in _selected(trace)
        _, trace = await _compile(
            c, "Fix the refund 409 errors and add a regression test", budget_tokens=1500
        )
        assert ids["work"] not in _selected(trace)
        why = {e["id"]: e.get("reason") or e.get("why") for e in trace["candidates"]["rejected"]}
        assert "work still to do" in str(why.get(ids["work"]))


async def test_a_question_about_what_is_open_gets_the_open_work_whatever_its_words(
    memory: Memory, tmp_path: Path
) -> None:
    """ "What's still open?" shares next to no word with the items that answer it: open work that
    is about something at all (here 0.39, under the ordinary floor of 0.55) is listed, finished
    work is not."""
    async with Client(build_server(memory)) as c:
        ids = await _seed(c, False, tmp_path)
        other = (
            await call(
                c,
                "memory_remember",
                "work_item",
                knowledge(
                    kind="chore",
                    title="Migrate the CI runners to the new build cluster",
                    summary="Move the pipelines off the old Jenkins hosts before launch.",
                ),
            )
        )["object_id"]
        done = (
            await call(
                c,
                "memory_remember",
                "work_item",
                knowledge(
                    kind="task",
                    title="Renew the marketing site certificate",
                    summary="Renewed with the new CA.",
                ),
            )
        )["object_id"]
        await call(
            c, "memory_remember", "work_item", {"work_item_id": done, "status": "done", "reason": "renewed"}
        )
        elsewhere = (
            await call(
                c,
                "memory_remember",
                "work_item",
                knowledge(
                    kind="chore",
                    title="Migrate the CI runners of the mobile app to the new build cluster",
                    summary="Move the app pipelines off the old Jenkins hosts before launch.",
                    scope_refs=["scope:mobile"],
                ),
            )
        )["object_id"]
        _, trace = await _compile(c, "What's still open before the release?", budget_tokens=1500)
        assert {ids["work"], other, elsewhere} <= _selected(trace) and done not in _selected(trace)
        assert trace["coverage_by"] == "open work" and trace["open_work_listed"] >= 3
        # the list keeps to the task's scope
        _, trace = await _compile(
            c,
            "What's still open before the release?",
            budget_tokens=1500,
            scope={"scope_refs": ["scope:mobile"]},
        )
        assert elsewhere in _selected(trace) and not {ids["work"], other} & _selected(trace)
        # a question about something else, or a task that only mentions a backlog, gets no list of work
        for task in ("How do refunds answer a retried request?", "How big is the refund queue backlog?"):
            _, trace = await _compile(c, task, budget_tokens=1500)
            assert other not in _selected(trace) and "open_work_listed" not in trace, task
