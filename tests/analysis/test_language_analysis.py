"""Language-aware lexical analysis: detection, stemming, compounds; search through MCP on both backends."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from memory_substrate import Memory, analysis
from memory_substrate.analysis import analyse, language_of
from memory_substrate.analysis.compounds import compound_heads
from memory_substrate.mcp.server import build_server
from memory_substrate.retrieval.terms import index_terms
from tests.helpers import call, conversation

STATEMENTS = [
    "Mein Arzt hat mir wegen einer Knieverletzung geraten, einen Monat lang nicht zu laufen.",
    "Letzte Woche ist die Sicherung des Dateiservers fehlgeschlagen, weil die Festplatte voll war.",
    "Im März haben wir alle Datenbankserver in ein neues Rechenzentrum in Amsterdam umgezogen.",
    "Mi hermana trabaja como enfermera en el hospital infantil de la ciudad.",
    "Ночное резервное копирование переносит базу данных клиентов в дата-центр во Франкфурте.",
    "I went hiking in the mountains with my two dogs last weekend.",
]


def test_language_is_detected_and_short_or_english_text_keeps_the_english_path() -> None:
    assert language_of(STATEMENTS[0]) == "de"
    assert language_of(STATEMENTS[3]) == "es"
    assert language_of(STATEMENTS[4]) == "ru"
    assert language_of(STATEMENTS[5]) == "en"
    assert language_of("ok, danke") is None  # too short to tell
    assert analyse(STATEMENTS[5]) is None and analyse("Ja!") is None
    assert analyse("한국어 문장입니다 그리고 더 많은 단어") is None  # Korean keeps its bigrams
    # English is analysed exactly as before this module existed
    assert index_terms(STATEMENTS[5]) == ["went", "hik", "mountain", "two", "dog", "last", "weekend"]


def test_a_stored_language_gives_the_detected_answer_without_the_detector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memory_substrate.analysis import words
    from memory_substrate.storage.ranking import stored_language
    from memory_substrate.text import query_terms

    expected = {t: (words.analyse_words(t), query_terms(t)) for t in STATEMENTS}
    stored = {t: stored_language(t) for t in STATEMENTS}

    def no_detector(_: str) -> str:
        raise AssertionError("the detector ran although the language was given")

    monkeypatch.setattr(words, "language_of", no_detector)
    for text in STATEMENTS:
        assert words.analyse_words(text, language=stored[text]) == expected[text][0], text
        assert query_terms(text + " ", stored[text]) == expected[text][1], text  # a new text: not cached
    # "" (no language could be told) and a language not analysed here keep the English path
    assert words.analyse_words(STATEMENTS[0], language="") is None
    assert words.analyse_words(STATEMENTS[0], language="tr") is None


def test_inflections_meet_stopwords_drop_and_compounds_offer_their_head() -> None:
    doc = set(index_terms(STATEMENTS[1]))
    assert {"dateiserv", "sicher", "festplatt"} <= doc
    assert "die" not in doc and "des" not in doc and "weil" not in doc
    assert "dateiserv" in index_terms("Warum hat das Backup vom Dateiserver nicht funktioniert?")
    assert "zentrum" in index_terms(STATEMENTS[2]) and "verletz" in index_terms(STATEMENTS[0])
    assert "verletz" in index_terms("Welche Verletzung hat der Arzt bei mir festgestellt?")
    assert compound_heads("rechenzentrum")[:3] == ["enzentrum", "nzentrum", "zentrum"]
    assert compound_heads("haus") == [] and compound_heads("wöchentlich") == []
    # inflected adjectives offer no tails either: "nächtlichen" would otherwise add "lich"
    assert (
        compound_heads("nächtlichen") == compound_heads("praktischen") == compound_heads("vriendelijke") == []
    )
    assert "lich" not in index_terms("Die nächtlichen Backups der Datenbanken")
    assert "wirtschaft" in compound_heads("landwirtschaft")  # -schaft is a noun, not -haft
    ru = index_terms("Куда перенесли базы данных клиентов?")
    assert {"баз", "дан", "клиент"} <= set(ru)


async def _rank_of(client: Client, sources: dict[str, int], question: str, expected: int) -> int:
    found = await call(
        client,
        "memory_query",
        "search",
        {"query": question},
        {"max_items": 10, "result_unit": "segment", "detail": "full"},
    )
    order = [i["locator"]["index"] for i in found["items"] if i["source_id"] in sources]
    return order.index(expected) + 1 if expected in order else 99


QUESTIONS = [
    ("Welche Verletzung am Knie hat mein Arzt erwähnt?", 0),
    ("Warum hat die Sicherung vom Dateiserver nicht funktioniert?", 1),
    ("In welches Zentrum kamen die Server der Datenbanken?", 2),
    ("¿Dónde trabaja de enfermera mi hermana?", 3),
    ("Куда переносят базы данных клиентов?", 4),
]


@pytest.mark.anyio
async def test_search_in_each_language_through_mcp_and_reindex_rebuilds_older_rows(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rows written by the English-only analysis (as before this module), then reindexed.
    monkeypatch.setattr(analysis, "analyse_words", lambda text, **kw: None)
    monkeypatch.setattr("memory_substrate.text.analyse_words", lambda text, **kw: None)
    monkeypatch.setattr(analysis, "analyse", lambda text, **kw: None)
    async with Client(build_server(memory)) as c:
        out: dict[str, Any] = await call(c, "memory_ingest", "conversation", conversation(STATEMENTS))
    monkeypatch.undo()
    from memory_substrate.retrieval import terms as retrieval_terms

    retrieval_terms._index_terms.cache_clear()
    sources = {out["source_id"]: 0}
    async with Client(build_server(memory)) as c:
        before = [await _rank_of(c, sources, q, i) for q, i in QUESTIONS]
        done = await call(c, "memory_maintain", "reindex", {}, {"apply": True})
        assert done
        after = [await _rank_of(c, sources, q, i) for q, i in QUESTIONS]
    assert all(r == 1 for r in after), after
    assert before != after  # the old rows did not carry the analysed forms


def test_chinese_and_japanese_are_cut_into_words_with_the_cjk_extra() -> None:
    pytest.importorskip("jieba")
    pytest.importorskip("fugashi")
    zh = index_terms("每天夜里两点，备份任务会把客户数据库复制到法兰克福的数据中心。")
    assert {"备份", "数据库", "法兰克福", "数据中心"} <= set(zh) and "的" not in zh
    assert {"数据库", "备份"} <= set(index_terms("客户的数据库每晚几点备份？"))
    ja = index_terms("十月の市民マラソンに備えて、週に三回走り始めました。")
    assert "マラソン" in ja and "走る" in ja and "に" not in ja  # lemma; particles dropped
    assert "走る" in index_terms("毎朝走ります")


def test_without_a_segmenter_cjk_keeps_its_bigrams(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_substrate.analysis import cjk

    monkeypatch.setattr(cjk, "_state", {"zh": None, "ja": None})
    from memory_substrate.retrieval import terms as retrieval_terms

    retrieval_terms._index_terms.cache_clear()
    assert analyse("我们四月要飞去东京看樱花") is None
    assert index_terms("东京看樱花") == ["东京", "京看", "看樱", "樱花"]
    retrieval_terms._index_terms.cache_clear()


def test_lexical_evidence_across_languages_is_neutral_and_one_language_keeps_its_scores() -> None:
    import numpy as np

    from memory_substrate.analysis import across_languages

    german_query = "Warum ist die Sicherung des Dateiservers fehlgeschlagen?"
    texts = [STATEMENTS[1], STATEMENTS[2], STATEMENTS[3], "ok", STATEMENTS[4]]  # de, de, es, ?, ru
    z = np.array([2.0, -1.0, 1.5, 0.3, -0.8])
    out = across_languages(german_query, texts, z)
    # The Spanish and Russian turns get the German turns' mean (0.5); the short one keeps its own.
    assert out.tolist() == [2.0, -1.0, 0.5, 0.3, 0.5]
    assert z.tolist() == [2.0, -1.0, 1.5, 0.3, -0.8]  # the input is not changed
    english = [STATEMENTS[5], "We went to the lake with the kids and had a picnic there."]
    same = across_languages("Where did I go hiking with the dogs?", english, np.array([1.0, -1.0]))
    assert same.tolist() == [1.0, -1.0]
    # A query whose language cannot be told (one word), or no candidate in its language: unchanged.
    assert across_languages("Dateiserver", texts, z).tolist() == z.tolist()
    assert across_languages(german_query, english, np.array([1.0, -1.0])).tolist() == [1.0, -1.0]


def test_lexical_evidence_across_languages_follows_the_semantic_score_where_it_is_known() -> None:
    import numpy as np

    from memory_substrate.analysis import across_languages

    english_query = "Why did the backup of the file server fail?"
    english = [
        STATEMENTS[5],
        "We went to the lake with the kids and had a picnic there.",
        "The backup generator in the basement was tested on Tuesday.",
        "I bought a new bike last week.",
    ]
    texts = [*english, STATEMENTS[1], STATEMENTS[3]]  # + de (the answer), es (unrelated)
    lexical = np.array([-1.0, -1.2, 1.5, 0.0, 9.0, 9.0])  # the last two: chance spellings
    semantic = np.array([-0.5, -1.0, 1.0, -0.3, 0.8, -1.5])
    out = across_languages(english_query, texts, lexical, semantic=semantic)
    assert out[:4].tolist() == lexical[:4].tolist()  # the query's language keeps its scores
    # The English turns' lexical scores rise with their semantic ones (least squares over the
    # four): the German turn, close in meaning, gets the line's value, above the mean; the
    # unrelated Spanish one, below the line's mean, keeps the mean (no evidence against).
    slope, intercept = np.polyfit(semantic[:4], lexical[:4], 1)
    assert np.isclose(out[4], intercept + slope * semantic[4]) and out[4] > lexical[:4].mean()
    assert out[5] == lexical[:4].mean()
    # Read within the semantic scores it was fitted on: a turn beyond the best English one gets
    # what the best gets, not a word match no English turn has (three close English scores make
    # a steep line).
    far = across_languages(
        english_query, texts, lexical, semantic=np.array([-0.5, -1.0, 1.0, -0.3, 50.0, -1.5])
    )
    assert np.isclose(far[4], intercept + slope * 1.0)
    steep_lex, steep_sem = np.array([3.0, 0.2, -0.5]), np.array([0.15, 0.12, 0.10])
    steep = across_languages(
        english_query,
        [*english[:3], STATEMENTS[1]],
        np.append(steep_lex, 0.0),
        semantic=np.append(steep_sem, 0.9),
    )
    slope, intercept = np.polyfit(steep_sem, steep_lex, 1)  # about 72 lexical z-units per semantic one
    assert np.isclose(steep[3], intercept + slope * 0.15) and steep[3] < 3.0  # not 57 at 0.9
    # Where the two scores disagree among the query's language (a negative slope), or there are
    # fewer than three turns to fit, every other-language turn gets the mean as before.
    flipped = across_languages(english_query, texts, lexical, semantic=-semantic)
    assert flipped[4:].tolist() == [lexical[:4].mean()] * 2
    two = across_languages(
        english_query, [*english[:2], STATEMENTS[1]], lexical[[0, 1, 4]], semantic=semantic[[0, 1, 4]]
    )
    assert two[2] == lexical[:2].mean()
