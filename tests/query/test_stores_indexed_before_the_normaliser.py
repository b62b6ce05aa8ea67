"""A store whose full-text rows were written by the earlier normaliser (NFKC, lower case,
accents kept) stays searchable without ``reindex``. Neither backend's
full-text index folds the accents of Greek or Cyrillic letters, so a query normalised the new way
(``καλημερα``) must still reach the rows that hold the old form (``καλημέρα``)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory, indexing
from memory_substrate.mcp.server import build_server
from memory_substrate.text import query_terms
from tests.helpers import call

pytestmark = pytest.mark.anyio

GREEK = "Η γιαγιά είπε καλημέρα στον γείτονα"
RUSSIAN = "Мой ёж спит"
# Other turns: a term most segments hold is not worth a full-text query (storage/), so the two
# above must be a small share of the store.
FILLER = [f"note {i}: the weather was mild and the train left at {i} o'clock" for i in range(40)]


def _index_text_before_round_6(*parts: str | None) -> str:
    # text.index_text at f2967fb for text no language analyser takes: NFKC words, lower case.
    text = " ".join(p for p in parts if p)
    return " ".join(re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", text).lower()))


@pytest.fixture
def old_store(make_settings: Any, namespace: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    mem = Memory(make_settings(), namespace=namespace)
    with monkeypatch.context() as m:
        m.setattr(indexing, "index_text", _index_text_before_round_6)
        for text in (GREEK, RUSSIAN, *FILLER):
            mem.ingest("conversation", {"title": "chat", "messages": [{"role": "user", "content": text}]})
    try:
        yield mem
    finally:
        mem.close()


@pytest.mark.parametrize("query, said", [("καλημέρα", GREEK), ("γιαγιά", GREEK), ("мой", RUSSIAN)])
async def test_old_full_text_rows_are_found_by_new_queries(old_store: Memory, query: str, said: str) -> None:
    async with Client(build_server(old_store)) as c:
        found = await call(
            c,
            "memory_query",
            "search",
            {"query": query},
            {"result_unit": "segment", "detail": "full", "max_items": 3},
        )
        assert [i["excerpt"] for i in found["items"]][:1] == [said], (found["normalized_terms"], found)
        objects = await call(
            c, "memory_query", "search", {"query": query}, {"detail": "full", "max_items": 3}
        )
        assert objects["items"], objects


def test_older_forms_only_where_no_index_folds_the_accent() -> None:
    from memory_substrate.text import full_text_terms

    assert full_text_terms("crêpes au café") == query_terms("crêpes au café")  # Latin: the indexes fold it
    assert full_text_terms("plain english words") == query_terms("plain english words")
    assert "καλημέρα" in full_text_terms("καλημέρα") and "καλημερα" in full_text_terms("καλημέρα")
