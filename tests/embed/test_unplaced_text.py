"""Text no language detector places (identifiers, ticket numbers): captured and searched as cheaply
as English, through the English model and the full-text stream (docs/multilingual.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memory_substrate import Memory, Settings
from memory_substrate.analysis import has_words, main_language
from memory_substrate.embed import create_embedder
from memory_substrate.embed.gated import LanguageGatedEmbedder

# Salads of ``w``-tokens (bench/scale_bench.py --text tokens) the detector named Russian or French
# with confidence, so each was embedded by the multilingual model and stemmed as that language.
IDENTIFIERS = [
    "w49197 w37556 w45787 w68253 w17648 w31937 w77081 w68325 w66387 w75333 w31016 w99137",
    "w36137 w48510 w46921 w33124 w72952 w18091 w94686 w57740 w13005 w94086 w93082 w40841",
    "w40314 w82421 w32361 w82636 w29142 w61392 w37450 w94189 w38589 w25625 w13713 w66762",
    "w29469 w4166 w16909 w37341 w18211 w48527 w32071 w90875 w84173 w25120 w58059 w56615",
]


def test_identifiers_are_placed_in_no_language() -> None:
    assert [main_language(t) for t in IDENTIFIERS] == [None] * len(IDENTIFIERS)
    # Words among the identifiers still tell the language.
    assert (
        main_language("Der Server w4411 ist heute Morgen wegen einer vollen Festplatte ausgefallen.") == "de"
    )
    assert main_language("The server w4411 went down this morning because its disk was full.") == "en"


def test_has_words() -> None:
    assert not has_words("w123 w456 w789") and not has_words("#4411, 17:30") and not has_words("")
    assert has_words("ticket 4411") and has_words("Zug w12") and has_words("会议")
    assert not has_words("a1 b2 c3 x")  # a lone letter is no word


def test_identifiers_are_embedded_by_the_english_model_alone() -> None:
    gated = create_embedder("use-gated")
    assert isinstance(gated, LanguageGatedEmbedder)
    docs = gated.embed_documents(IDENTIFIERS)
    assert not docs[:, gated.english.dimensions :].any()  # the multilingual encoder did not run
    assert gated.semantic_weight(" ".join(IDENTIFIERS[0].split()[:3])) == 0.0
    assert gated.semantic_weight("Where is ticket w4411?") == 1.0


def test_a_query_of_identifiers_finds_its_turn_without_a_vector(
    default_settings: Settings, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both result units find the turn holding the query's identifiers, and no query vector is made
    (the query's vector would be about as near every stored identifier turn)."""
    rng = np.random.default_rng(41)
    turns = [" ".join(f"w{n}" for n in rng.integers(0, 100_000, 12)) for _ in range(60)]
    turns += ["My sister is getting married in Lisbon next June.", *IDENTIFIERS]
    with Memory(default_settings, namespace=namespace) as memory:
        memory.ingest(
            "conversation", {"title": "logs", "messages": [{"role": "user", "content": t} for t in turns]}
        )

        def no_vector(self: Any, text: str) -> Any:
            raise AssertionError(f"embedded the query {text!r}")

        monkeypatch.setattr(LanguageGatedEmbedder, "embed_query", no_vector)
        for k in (3, 17, 61):
            query = " ".join(turns[k].split()[4:7])
            seg = memory.query(
                "search", {"query": query}, {"result_unit": "segment", "detail": "full", "max_items": 3}
            )
            assert seg["items"][0]["excerpt"] == turns[k], (query, seg["items"][:1])
            obj = memory.query("search", {"query": query}, {"detail": "full", "max_items": 3})
            assert obj["items"] and turns[k] in str(obj["items"][0]), (query, obj["items"][:1])
