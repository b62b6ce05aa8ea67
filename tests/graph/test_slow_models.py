"""Extraction against a slow local model, played by the streaming stub at a hundredth of the speed
of the recorded one (Qwen2.5-Coder on two cores): the client's deadlines are the defaults scaled
by the same factor, so the real deadline logic runs, only faster."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.inspector.data import overview as inspector_overview
from memory_substrate.llm.base import LLMError
from memory_substrate.llm.openai_compat import OpenAICompatibleChat
from memory_substrate.mcp.server import build_server
from memory_substrate.settings import Settings
from tests.graph.stub_llm import Reply, StubLLM, stub_llm
from tests.helpers import ToolFailed, call

pytestmark = pytest.mark.anyio
SCALE = 0.01  # 1 s of the real model is 10 ms here
GOOD = json.dumps(
    {
        "entities": [
            {"name": "Customer Portal", "type": "project"},
            {"name": "Semantic Kernel", "type": "technology"},
        ],
        "facts": [
            {
                "subject": "Customer Portal",
                "predicate": "uses",
                "object": "Semantic Kernel",
                "segment_ids": ["seg-1"],
            }
        ],
        "procedures": [],
    }
)


def default(name: str) -> Any:
    return Settings.model_fields[name].default


def scaled_defaults(**overrides: Any) -> dict[str, Any]:
    """The client's timing settings as shipped, scaled like the stub's clock."""
    out = {k: default(k) * SCALE for k in ("llm_timeout_s", "llm_window_timeout_s", "llm_backoff_s")}
    out.update(llm_max_retries=default("llm_max_retries"), llm_max_in_flight=default("llm_max_in_flight"))
    out.update(overrides)
    return out


@pytest.fixture
def llm() -> Iterator[StubLLM]:
    with stub_llm() as stub:
        yield stub


def _memory(make_settings: Any, namespace: str, llm: StubLLM, **timing: Any) -> Memory:
    return Memory(
        make_settings(llm_base_url=llm.url, llm_model="qwen-small", **scaled_defaults(**timing)),
        namespace=namespace,
    )


async def _ingest(c: Client) -> str:
    out = await call(
        c,
        "memory_ingest",
        "conversation",
        {
            "title": "portal chat",
            "messages": [
                {
                    "role": "user",
                    "content": "Customer Portal uses Semantic Kernel.",
                    "created_at": "2026-03-01T00:00:00Z",
                }
            ],
        },
    )
    return str(out["source_id"])


async def test_first_token_at_30s_and_answer_at_90s_completes_on_the_first_attempt(
    make_settings: Any, namespace: str, llm: StubLLM
) -> None:
    # The old client waited 60 s for the whole (unstreamed) answer and retried from scratch.
    llm.default = Reply(content=GOOD, first_token_s=30 * SCALE, total_s=90 * SCALE)
    mem = _memory(make_settings, namespace, llm)
    try:
        async with Client(build_server(mem)) as c:
            ep = await _ingest(c)
            out = await call(c, "memory_maintain", "extract", {}, {"apply": True})
            assert out["status"] == "applied" and out["runs"][0]["outcome"] == "done"
            assert len(llm.requests) == 1 and llm.client_gone == 0
            window = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]["window_runs"][0]
            assert window["attempts"] == 1 and "retried" not in window and window["finish_reason"] == "stop"
    finally:
        mem.close()


# Its retries' spacing is wall time as the stub model sees it: timed, so it runs apart from the
# coverage tracer, which slows the in-process stub's receipt of the first request more than the
# client's wait and let the spacing come out short on a loaded machine.
@pytest.mark.timed
async def test_a_model_that_always_times_out_is_retried_with_backoff_one_request_at_a_time(
    make_settings: Any, namespace: str, llm: StubLLM
) -> None:
    # Prefill outlasts the read deadline every time; the server notices the hang-up at its first token.
    timeout = 0.2
    llm.default = Reply(content=GOOD, first_token_s=0.3, total_s=0.3)
    mem = _memory(make_settings, namespace, llm, llm_timeout_s=timeout, llm_max_retries=2, llm_backoff_s=0.05)
    try:
        async with Client(build_server(mem)) as c:
            ep = await _ingest(c)
            # a run that extracted nothing is an isError result with the whole run in its details
            with pytest.raises(ToolFailed) as info:
                await call(c, "memory_maintain", "extract", {}, {"apply": True})
            out = info.value.error["details"]
            run = out["runs"][0]
            assert out["status"] == "failed" and run["outcome"] == "failed" and run["status"] == "retrying"
            assert (
                run["error"]["code"] == "memory_llm_error"
                and "gave up after 3 attempts" in run["error"]["message"]
            )
            assert len(llm.requests) == 3  # 1 + max_retries, never more
            starts = [r["at"] for r in llm.requests]
            # each retry waited at least as long as the abandoned request had run, plus the backoff
            assert all(b - a >= 2 * timeout for a, b in itertools.pairwise(starts))
            assert llm.max_in_flight == 1
            report = await call(c, "memory_maintain", "report", {})
            assert report["knowledge_graph"]["extraction_queue"] == {"retrying": 1}
            failure = report["knowledge_graph"]["extraction_failures"][0]
            assert (
                failure["episode_id"] == ep
                and failure["attempts"] == 1
                and "timed out" in failure["last_error"]
            )
        overview = inspector_overview(mem)  # the inspector's first page
        assert overview["jobs"]["retrying"] == 1 and overview["jobs"]["pending"] == 0
        assert overview["queue"][0]["status"] == "retrying" and "timed out" in (
            overview["queue"][0]["error"] or ""
        )
    finally:
        mem.close()


async def test_an_answer_after_the_client_hung_up_is_not_used_and_the_retry_is(
    make_settings: Any, namespace: str, llm: StubLLM
) -> None:
    late = json.loads(GOOD)
    late["facts"][0]["object"] = "Customer Portal"  # what the abandoned request would have said
    # A deadline wide enough that the retry's immediate answer meets it on a loaded machine, with
    # the abandoned answer well past it.
    llm.script = [Reply(content=json.dumps(late), first_token_s=0.9, total_s=0.91), Reply(content=GOOD)]
    mem = _memory(make_settings, namespace, llm, llm_timeout_s=0.5, llm_backoff_s=0.01)
    try:
        async with Client(build_server(mem)) as c:
            ep = await _ingest(c)
            out = await call(c, "memory_maintain", "extract", {}, {"apply": True})
            assert out["runs"][0]["outcome"] == "done" and len(llm.requests) == 2
            deadline = time.monotonic() + 2
            while llm.client_gone < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert llm.client_gone == 1 and llm.max_in_flight == 1
            window = (await call(c, "memory_query", "trace", {"id": ep}))["trace"]["window_runs"][0]
            assert window["attempts"] == 2 and "timed out" in window["retried"][0]
            facts = await call(c, "memory_query", "facts", {"subject": "Customer Portal"})
            assert [f["object"]["name"] for f in facts["items"]] == ["Semantic Kernel"]
    finally:
        mem.close()


def test_a_window_deadline_ends_an_answer_that_never_finishes(llm: StubLLM) -> None:
    llm.default = Reply(content=GOOD * 5, first_token_s=0.0, total_s=1.0)  # tokens keep coming, slowly
    chat = OpenAICompatibleChat(llm.url, "m", timeout_s=0.5, window_timeout_s=0.3, max_retries=0)
    with pytest.raises(LLMError) as info:
        chat.complete([{"role": "user", "content": "x"}], {}, schema_name="extraction", max_tokens=64)
    assert "window deadline" in info.value.message and llm.requests[0]["body"]["max_tokens"] == 64


@pytest.mark.parametrize("limit", [1, 2])
def test_requests_in_flight_per_endpoint_are_bounded(llm: StubLLM, limit: int) -> None:
    """Two extractions at once (the server's background drain and a CLI run) share the endpoint."""
    llm.default = Reply(content=GOOD, first_token_s=0.15, total_s=0.2)
    chats = [OpenAICompatibleChat(llm.url, "m", max_in_flight=limit) for _ in range(3)]
    threads = [
        threading.Thread(
            target=ch.complete,
            args=([{"role": "user", "content": "x"}], {}),
            kwargs={"schema_name": "extraction"},
        )
        for ch in chats
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert len(llm.requests) == 3 and llm.max_in_flight == limit


def test_a_server_refusing_stream_options_is_asked_again_without(llm: StubLLM) -> None:
    llm.script = [Reply(400, "unknown field stream_options"), Reply(content=GOOD)]
    chat = OpenAICompatibleChat(llm.url, "m", max_retries=0)
    answer = chat.complete([{"role": "user", "content": "x"}], {}, schema_name="extraction")
    assert answer.text == GOOD and "stream_options" not in llm.requests[1]["body"]
    assert llm.requests[1]["body"]["response_format"]["type"] == "json_schema"
