"""The shared response-shaping helpers, without a store."""

from __future__ import annotations

from typing import Any

import pytest

from memory_substrate.answers.shaping import Cursor, excerpt, fit_sections, paginate, prune, take_within
from memory_substrate.errors import ValidationError
from memory_substrate.tokens import count_tokens, wire_json

TEXT = (
    "Alpha beta gamma delta. " * 10
    + "The support group met on Tuesday about rights. "
    + "Zeta eta. " * 10
    + "Omega."
)


def test_excerpt_is_cut_around_the_first_match_on_word_boundaries() -> None:
    cut = excerpt(TEXT, ["support"], 80)
    assert len(cut) <= 80 and "support group met on Tuesday" in cut
    assert cut.startswith("…") and cut.endswith("…")
    assert excerpt(TEXT, ["nothing"], 80).startswith("Alpha beta")  # no match: the start
    assert excerpt("short text", ["x"], 80) == "short text"
    assert excerpt(TEXT, ["omega"], 40).endswith("Zeta eta. Omega.")  # a match near the end shows the end


def test_prune_drops_nulls_and_internal_fields_at_every_depth() -> None:
    value: dict[str, Any] = {
        "a": None,
        "hash": "x",
        "items": [{"rank_score": 1, "id": "k", "b": None}, None],
        "keep": {},
    }
    assert prune(value) == {"items": [{"id": "k"}], "keep": {}}


def test_cursor_round_trip_and_refusals() -> None:
    fp = Cursor.fingerprint_of("search", {"query": "q"}, {"max_items": 3})
    assert fp == Cursor.fingerprint_of("search", {"query": "q"}, {"max_items": 9, "detail": "full"})
    page, nxt = paginate(list(range(10)), 3, 3, fp)
    assert page == [3, 4, 5] and Cursor.decode(nxt, fp) == 6
    assert paginate(list(range(6)), 3, 3, fp)[1] is None
    with pytest.raises(ValidationError):
        Cursor.decode(nxt, Cursor.fingerprint_of("search", {"query": "other"}, {}))
    with pytest.raises(ValidationError):
        Cursor.decode("%%%", fp)


def test_budget_helpers_keep_a_prefix_and_mark_what_they_cut() -> None:
    items = [{"id": f"know:{i}", "summary": "word " * 50} for i in range(20)]
    kept = take_within(items, 300)
    assert 1 <= len(kept) < 20 and kept == items[: len(kept)]
    assert sum(count_tokens(wire_json(i)) + 1 for i in kept) <= 300
    report: dict[str, Any] = {"a": list(items), "b": list(items[:2]), "truncated": {"a": False, "b": False}}
    fit_sections(report, ["a", "b"], budget=600)
    assert count_tokens(wire_json(report)) <= 600
    assert report["truncated"]["a"] is True and len(report["b"]) >= 1
