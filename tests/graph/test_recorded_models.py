"""Replay what real small models answered (tests/graph/data/llm_recordings.jsonl: Qwen2.5-Coder
0.5B and 1.5B in llama.cpp on LoCoMo sessions 1-4, see /work/shared/data/llm-recordings) through
the streaming stub, and check what is kept, what is reported, and that nothing is lost silently."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.graph.grounding import MAX_CITED
from memory_substrate.mcp.server import build_server
from memory_substrate.text import query_terms
from tests.graph.stub_llm import Reply, StubLLM, stub_llm
from tests.helpers import call

pytestmark = pytest.mark.anyio
DATA = Path(__file__).parent / "data"
RECORDS = [json.loads(line) for line in (DATA / "llm_recordings.jsonl").read_text().splitlines()]
ROW = re.compile(r"^(seg-\d+) \[([^\]]+)\] (\w+): (.*)$")
EMPTY = json.dumps({"entities": [], "facts": [], "procedures": []})
SCALE = 0.01


def _messages(episode: str) -> tuple[str, list[dict[str, Any]]]:
    lines = episode.splitlines()
    rows = [ROW.match(line) for line in lines[1:]]
    return lines[0].removeprefix("Episode: "), [
        {"role": "user", "name": m.group(3), "content": m.group(4), "created_at": m.group(2)}
        for m in rows
        if m
    ]


@pytest.fixture
def llm() -> Iterator[StubLLM]:
    with stub_llm() as stub:
        yield stub


@pytest.fixture
def mem(make_settings: Any, namespace: str, llm: StubLLM) -> Iterator[Memory]:
    m = Memory(make_settings(llm_base_url=llm.url, llm_model="qwen", llm_backoff_s=0.01), namespace=namespace)
    try:
        yield m
    finally:
        m.close()


def _replayer(llm: StubLLM, record: dict[str, Any]) -> list[dict[str, Any]]:
    """Answer the recorded request with the recorded answer; any other request (a half window
    after a truncated answer, a repair) with an empty extraction, so what is stored comes from the
    recording alone."""
    others: list[dict[str, Any]] = []
    finish = record["finish_reason"] if record["finish_reason"] in ("stop", "length") else None

    def respond(body: dict[str, Any]) -> Reply:
        msgs = body["messages"]
        if len(msgs) == 2 and msgs[1]["content"] == record["episode"]:
            return Reply(content=record["response_text"], finish_reason=finish)  # type: ignore[arg-type]
        others.append(body)
        return Reply(content=EMPTY)

    llm.respond = respond
    return others


async def _facts(c: Client, names: list[str]) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        found = await call(
            c, "memory_query", "facts", {"subject": name}, {"detail": "full", "max_items": 200}
        )
        out.update({f["id"]: f for f in found["items"]})
    return list(out.values())


@pytest.mark.parametrize("record", RECORDS, ids=[f"{r['id'][-6:]}-{r['finish_reason']}" for r in RECORDS])
async def test_a_recorded_answer_is_salvaged_and_reported(
    mem: Memory, llm: StubLLM, record: dict[str, Any]
) -> None:
    others = _replayer(llm, record)
    title, messages = _messages(record["episode"])
    async with Client(build_server(mem)) as c:
        ep = (await call(c, "memory_ingest", "conversation", {"title": title, "messages": messages}))[
            "source_id"
        ]
        out = await call(c, "memory_maintain", "extract", {"episode_ids": [ep]}, {"apply": True})
        assert [r["episode_id"] for r in out["runs"]] == [
            ep
        ]  # an outcome for the episode, whatever the answer
        run = out["runs"][0]
        trace = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]
        window = trace["window_runs"][0]
        assert (
            llm.requests[0]["body"]["messages"][1]["content"] == record["episode"]
        )  # the recorded window again
        assert run["dropped"] == len(trace["dropped"]) and run["dropped_examples"] == [
            {"item": d["item"], "reason": d["reason"]} for d in trace["dropped"][:5]
        ]  # reported, reasons included
        assert run["truncated_windows"] == (record["finish_reason"] == "length")
        if record["finish_reason"] == "length":
            assert window["truncated"] and any(
                "truncated at the token cap" in d["reason"] for d in window["dropped"]
            )
            assert len(window["split"]) == 2 and all(
                s["max_tokens"] < window["max_tokens"] for s in window["split"]
            )
        if run["outcome"] == "failed":  # nothing valid, even after the repair request: named in the job
            assert run["status"] == "retrying" and run["error"]["code"].startswith("memory_llm_output")
            assert (await call(c, "memory_query", "trace", {"id": ep}))["job"]["error"]
        facts = await _facts(c, ["Caroline", "Melanie"])
        segments = {
            m["segment_id"]: m
            for m in (await call(c, "memory_query", "page", {"id": ep}, {"detail": "full"}))["segments"]
        }
    for fact in facts:
        text = f"{fact['subject']['name']} {fact['predicate']} {(fact.get('object') or {}).get('name') or fact.get('value')}"
        assert (
            "webhook" not in text.lower() and "event delivery" not in text.lower()
        )  # the old prompt's example
        cited = [r["segment_id"] for r in fact["evidence_refs"]]
        assert 1 <= len(cited) <= MAX_CITED, fact
        want = set(
            query_terms(
                str((fact.get("object") or {}).get("name") or fact.get("value") or fact["subject"]["name"])
            )
        )
        assert any(
            want & set(query_terms(segments[s]["text"] + " " + str(segments[s].get("name")))) for s in cited
        ), fact
    # every dropped item is listed with its reason; none of the recorded invalid items is kept silently
    assert all(d["reason"] for d in trace["dropped"])
    assert len(others) <= 3  # at most two halves, or one repair


async def test_the_recordings_invalid_items_are_dropped_with_reasons_and_valid_ones_kept(
    mem: Memory, llm: StubLLM
) -> None:
    # 1.5B on session 3: two valid persons, invented aliases, facts with both object and value
    # copying the old prompt's example ("Webhook Gateway ... for event delivery system").
    record = next(r for r in RECORDS if "Marie" in r["response_text"])
    _replayer(llm, record)
    title, messages = _messages(record["episode"])
    async with Client(build_server(mem)) as c:
        ep = (await call(c, "memory_ingest", "conversation", {"title": title, "messages": messages}))[
            "source_id"
        ]
        out = await call(c, "memory_maintain", "extract", {"episode_ids": [ep]}, {"apply": True})
        assert out["runs"][0]["outcome"] == "done"
        trace = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]
        names = sorted(e["name"] for e in trace["entities"]["new"])
        assert names == ["Caroline", "Melanie"]
        reasons = {d["item"]: d["reason"] for d in trace["dropped"]}
        assert (
            "exactly one of object" in reasons["facts[0]"] and "exactly one of object" in reasons["facts[1]"]
        )
        # An alias the episode never writes is the model's own knowledge: kept, and marked as the
        # model's, so a reader can weigh it (this one is a small model's guess).
        assert "aliases of 'Caroline'" not in reasons
        ents = await call(c, "memory_query", "entities", {"name": "Caroline Marie"})
        assert ents["matched_by"] == "name_or_alias" and ents["count"] == 1
        caroline = ents["items"][0]
        assert caroline["name"] == "Caroline" and "Caroline Marie" in caroline["model_aliases"]
        assert set(caroline["model_aliases"]) <= set(caroline["aliases"])


async def test_a_recorded_slow_answer_completes_on_the_first_attempt_with_default_settings(
    make_settings: Any, namespace: str, llm: StubLLM
) -> None:
    # 1.5B, session 1: prefill 70 s, the whole answer at 96 s (the old 60 s timeout fired).
    record = next(r for r in RECORDS if r["prefill_s"] > 60 and r["finish_reason"] == "stop")
    from tests.graph.test_slow_models import scaled_defaults

    llm.default = Reply(
        content=record["response_text"],
        first_token_s=record["prefill_s"] * SCALE,
        total_s=record["total_s"] * SCALE,
    )
    mem = Memory(
        make_settings(llm_base_url=llm.url, llm_model="qwen", **scaled_defaults()), namespace=namespace
    )
    try:
        title, messages = _messages(record["episode"])
        async with Client(build_server(mem)) as c:
            await call(c, "memory_ingest", "conversation", {"title": title, "messages": messages})
            out = await call(c, "memory_maintain", "extract", {}, {"apply": True})
            assert out["runs"][0]["outcome"] == "done" and len(llm.requests) == 1
    finally:
        mem.close()


def wordpiece_tokens(text: str) -> int:
    """Tokens of ``text`` under a real subword vocabulary (BERT WordPiece, bundled with the static
    model), as a model's own tokenizer counts a prompt. The package's budget counter
    (tokens.count_tokens) is an estimate calibrated on prose, not a tokenizer: it weighs a JSON
    schema's punctuation differently from any model and cannot compare two prompts' sizes."""
    from memory_substrate.embed.wordpiece import WordPieceTokenizer, basic_split

    vocab = Path(__file__).resolve().parents[2] / "src" / "memory_substrate" / "embed" / "data" / "vocab.txt"
    tok = WordPieceTokenizer(vocab.read_text(encoding="utf-8").splitlines())
    return sum(len(tok.word_ids(w)) for w in basic_split(text))


def test_prompt_tokens_per_window_fall_by_at_least_a_third() -> None:
    """The request this client sends for each recorded episode against the one the old client
    sent (recorded verbatim), counted alike."""
    from memory_substrate.graph import extraction_prompt as prompt

    count_tokens = wordpiece_tokens

    old_system = (DATA / "recorded_system_prompt.txt").read_text()
    for episode in {r["episode"] for r in RECORDS}:
        title, messages = _messages(episode)
        lines = [
            prompt.EpisodeLine(f"seg-{i}", m["name"], m["created_at"], m["content"])
            for i, m in enumerate(messages, 1)
        ]
        windows, _info = prompt.plan(title, lines)
        assert len(windows) == 1
        sent = windows[0].messages()
        assert sent[1]["content"] == episode  # the same window, rendered alike
        new = sum(count_tokens(m["content"]) for m in sent)
        old = count_tokens(old_system) + count_tokens(episode)
        assert new <= old * 2 / 3, (title, new, old)
