"""The language-gated embedder: English scored as the English model alone, other languages across."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest

from memory_substrate import Memory
from memory_substrate.analysis import main_language
from memory_substrate.embed import Embedder, create_embedder
from memory_substrate.embed.gated import SLOTS, LanguageGatedEmbedder, language_slot
from memory_substrate.embed.static import StaticEmbedder

ENGLISH = [
    "My sister is getting married in Lisbon next June, and I will be her witness.",
    "Last week the backup of the file server failed because its disk was completely full.",
    "I started running three times a week to prepare for the city marathon in October.",
    "ok",
]
GERMAN = [
    "Meine Schwester heiratet nächsten Juni in Lissabon, und ich werde ihre Trauzeugin sein.",
    "Letzte Woche ist die Sicherung des Dateiservers fehlgeschlagen, weil seine Festplatte voll war.",
]


@pytest.fixture(scope="module")
def gated() -> LanguageGatedEmbedder:
    e = create_embedder("static-multilingual")
    assert isinstance(e, LanguageGatedEmbedder) and isinstance(e, Embedder)
    return e


def test_languages_are_told_conservatively() -> None:
    assert main_language(ENGLISH[0]) == "en"
    assert main_language("ok") is None and main_language("Catch ya later!") is None
    assert main_language(GERMAN[0]) == "de"
    assert main_language("我妹妹明年六月要在里斯本结婚。") == "zh"
    assert main_language("私たちは四月に東京へ行きます。") == "ja"
    assert {language_slot(x) for x in ("de", "ja", "xx", "yy")} <= set(range(SLOTS))


def test_english_is_scored_exactly_as_the_english_model_alone(gated: LanguageGatedEmbedder) -> None:
    english = StaticEmbedder()
    docs = gated.embed_documents(ENGLISH)
    assert docs.shape == (len(ENGLISH), gated.dimensions) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert not docs[:, english.dimensions :].any()  # no multilingual part, no language coordinate
    query = "Why did the file server's backup not work?"
    plain = english.embed_documents(ENGLISH) @ english.embed_query(query)
    ours = docs @ gated.embed_query(query)
    # Every English document's score is the English cosine itself: same order, same values (an
    # entity-resolution or classifier threshold set on them keeps its meaning).
    assert np.allclose(ours, plain, atol=1e-6)
    assert np.isclose(float(gated.embed_query(ENGLISH[0]) @ docs[0]), 1.0, atol=1e-5)


def test_english_question_finds_the_translation(gated: LanguageGatedEmbedder) -> None:
    docs = gated.embed_documents(GERMAN)
    assert not docs[:, : gated.english.dimensions].any()  # the English model never reads German
    scores = docs @ gated.embed_query("Where is my sister getting married?")
    assert scores[0] > scores[1] + 0.05
    assert np.allclose(
        gated.embed_query(GERMAN[0]) @ docs[0], float(np.max(gated.embed_query(GERMAN[0]) @ docs.T))
    )


def test_a_question_prefers_its_own_language_among_translations(gated: LanguageGatedEmbedder) -> None:
    dutch = "Mijn zus trouwt volgend jaar in juni in Lissabon, en ik ben haar getuige."
    docs = gated.embed_documents([GERMAN[0], dutch])
    q_de = gated.embed_query("In welcher Stadt findet die Hochzeit meiner Schwester statt?")
    q_nl = gated.embed_query("In welke stad vindt de bruiloft van mijn zus plaats?")
    assert float(q_de @ docs[0]) > float(q_de @ docs[1])
    assert float(q_nl @ docs[1]) > float(q_nl @ docs[0])


def test_name_names_both_models_and_the_gate(gated: LanguageGatedEmbedder) -> None:
    assert gated.name.startswith("gated:static:minilm-l6") and "use-m3-static" in gated.name
    assert gated.dimensions == 256 + 128 + SLOTS
    assert gated.embed_documents([]).shape == (0, gated.dimensions)
    other = create_embedder("static-multilingual", query_multilingual=0.5)
    assert other is not None and other.name != gated.name  # a changed gate is a new model: reindex


def test_through_mcp_an_english_question_finds_a_german_turn(make_settings: Any, namespace: str) -> None:
    """On both backends, with the default embedder: the German turn is the English question's answer."""
    from mcp import Client

    from memory_substrate.mcp.server import build_server

    async def run() -> list[str]:
        memory = Memory(make_settings(embedder="static-multilingual"), namespace=namespace)
        try:
            async with Client(build_server(memory)) as client:
                messages = [{"role": "user", "content": t} for t in [*GERMAN, *ENGLISH[2:3]]]
                args = {"mode": "conversation", "input_data": {"title": "notizen", "messages": messages}}
                out = await client.call_tool("memory_ingest", {"args": args})
                assert not out.is_error
                query = {
                    "mode": "search",
                    "input_data": {"query": "Why did the backup of the file server not work?"},
                    "options": {"result_unit": "segment", "max_items": 1, "detail": "full"},
                }
                found = await client.call_tool("memory_query", {"args": query})
                assert not found.is_error and found.structured_content is not None
                return [json.dumps(i, ensure_ascii=False) for i in found.structured_content["items"]]
        finally:
            memory.close()

    items = asyncio.run(run())
    assert len(items) == 1 and "Dateiservers" in items[0]
