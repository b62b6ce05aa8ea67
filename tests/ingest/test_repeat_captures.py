"""Repeat captures answer with the existing source (status noop); a grown conversation appends its
new messages to the same episode. Both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_substrate import Memory
from tests.helpers import conversation
from tests.ingest_adapters.conftest import make_pdf

TURNS = ["We deploy the ledger on Fridays.", "Rollbacks need two approvals.", "Kafka carries billing events."]


def _sources(memory: Any) -> list[dict[str, Any]]:
    return [i for i in memory.query("recent", {}, {"max_items": 50})["items"] if i["object_type"] == "source"]


def test_the_same_conversation_twice_is_one_source(memory: Memory) -> None:
    first = memory.ingest("conversation", conversation(TURNS))
    again = memory.ingest("conversation", conversation(TURNS))
    assert (
        again["status"] == "noop" and again["source_id"] == first["source_id"] and again["patch_id"] is None
    )
    assert again["reason"] == "source_fingerprint_unchanged"
    hits = memory.query("search", {"query": "ledger Fridays"})["items"]
    assert [h["id"] for h in hits if h["id"].startswith("src:")] == [first["source_id"]]
    assert len(_sources(memory)) == 1


def test_a_grown_conversation_appends_its_new_turns_to_the_same_episode(memory: Memory) -> None:
    first = memory.ingest("conversation", conversation(TURNS[:2]))
    grown = memory.ingest("conversation", conversation(TURNS))
    assert grown["status"] == "completed" and grown["source_id"] == first["source_id"], grown
    assert grown["appended_messages"] == 1 and grown["segment_count"] == 3
    assert grown["extraction"] == {"status": "queued", "episode_id": first["source_id"], "specific_facts": 0}
    assert {"review_guidance", "more"} <= set(grown["memory_suggestions"])  # summarised like any capture
    page = memory.query("page", {"id": first["source_id"]}, {"detail": "full"})
    assert [s["text"] for s in page["segments"]] == TURNS
    assert [s["segment_id"] for s in page["segments"]] == ["seg-1", "seg-2", "seg-3"]
    assert page["object"]["payload"]["message_count"] == 3
    assert memory.query("search", {"query": "Kafka billing events"})["items"][0]["id"] == first["source_id"]
    # The grown capture again is a noop; the first, shorter one again is a noop too (already held).
    assert memory.ingest("conversation", conversation(TURNS))["status"] == "noop"
    assert len(_sources(memory)) == 1


def test_a_thread_id_names_the_conversation_across_titles(memory: Memory) -> None:
    a = {**conversation(TURNS[:1], title="Monday"), "thread_id": "thread-42"}
    b = {**conversation(TURNS, title="Monday (cont.)"), "thread_id": "thread-42"}
    first = memory.ingest("conversation", a)
    grown = memory.ingest("conversation", b)
    assert grown["source_id"] == first["source_id"] and grown["appended_messages"] == 2
    other = memory.ingest(
        "conversation", {**conversation([*TURNS, "More."], title="Monday (cont.)"), "thread_id": "thread-43"}
    )
    assert other["source_id"] != first["source_id"] and other["status"] == "completed"  # another thread


def test_a_changed_conversation_under_the_same_title_is_not_appended(memory: Memory) -> None:
    first = memory.ingest("conversation", conversation(TURNS[:2]))
    changed = memory.ingest("conversation", conversation(["Something else entirely.", *TURNS[1:]]))
    assert changed["source_id"] != first["source_id"] and "appended_messages" not in changed


def test_the_same_markdown_and_pdf_content_at_another_path_is_a_noop(memory: Memory, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Runbook\n\nRestart the ledger with care.\n")
    (tmp_path / "copy.md").write_text("# Runbook\n\nRestart the ledger with care.\n")
    md = memory.ingest("markdown", {"path": str(tmp_path / "a.md")})
    again = memory.ingest("markdown", {"path": str(tmp_path / "copy.md")})
    assert again["status"] == "noop" and again["source_id"] == md["source_id"], again
    pdf = make_pdf(["Quarterly ledger report: revenue grew."])
    (tmp_path / "r.pdf").write_bytes(pdf)
    (tmp_path / "r2.pdf").write_bytes(pdf)
    p1 = memory.ingest("pdf", {"path": str(tmp_path / "r.pdf")})
    p2 = memory.ingest("pdf", {"path": str(tmp_path / "r2.pdf")})
    assert p2["status"] == "noop" and p2["source_id"] == p1["source_id"], p2


def test_a_changed_file_whose_new_content_is_held_elsewhere_supersedes_its_own_capture(
    memory: Memory, tmp_path: Path
) -> None:
    # a.md now holds b.md's text: a noop answering with b.md would leave a.md's old text current.
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("# Alpha\n\nThe launch code is red.\n")
    b.write_text("# Beta\n\nThe launch code is blue.\n")
    first = memory.ingest("markdown", {"path": str(a)})
    memory.ingest("markdown", {"path": str(b)})
    a.write_text(b.read_text())
    again = memory.ingest("markdown", {"path": str(a)})
    assert again["status"] == "completed" and again["superseded_source_id"] == first["source_id"], again
    old = memory.query("page", {"id": first["source_id"]}, {"detail": "full"})["object"]
    assert old["status"] == "superseded"
