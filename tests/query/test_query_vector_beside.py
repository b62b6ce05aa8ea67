"""The query is embedded on the stream worker, beside the full-text query, and still shares the
request's query-vector memo (a context compile embeds its task once)."""

from __future__ import annotations

import threading

from memory_substrate.embed.base import query_memo, request_memo
from memory_substrate.search.streams import in_callers_context


def test_a_worker_sees_the_callers_memo() -> None:
    seen: list[object] = []
    with query_memo():
        memo = request_memo()
        probe = in_callers_context(request_memo)
        worker = threading.Thread(target=lambda: seen.append(probe()))
        worker.start()
        worker.join()
    assert memo is not None
    assert seen == [memo]  # the same dict: what the worker embeds, the caller finds


def test_outside_a_request_a_worker_sees_none() -> None:
    probe = in_callers_context(request_memo)
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.append(probe()))
    worker.start()
    worker.join()
    assert seen == [None]
