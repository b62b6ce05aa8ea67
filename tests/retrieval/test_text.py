from __future__ import annotations

from memory_substrate.analysis.english import stem
from memory_substrate.retrieval.terms import (
    cjk_bigrams,
    index_terms,
    lexical_document,
    query_stems,
    tokenize,
)


def test_tokenize_folds_case_and_accents_and_splits_punctuation() -> None:
    assert tokenize("Café NAÏVE, re-use: 2023!") == ["cafe", "naive", "re", "use", "2023"]


def test_tokenize_cjk_runs_become_bigrams() -> None:
    assert tokenize("東京タワーへ") == ["東京", "京タ", "タワ", "ワー", "ーへ"]
    assert cjk_bigrams("東") == ["東"]
    assert tokenize("我 是") == ["我", "是"]


def test_stem_meets_inflections_and_leaves_short_words() -> None:
    assert stem("paintings") == stem("painting") == stem("painted") == stem("paint")
    assert stem("studies") == "study"
    assert stem("running") == "run"
    assert stem("bus") == "bus" and stem("class") == "class"
    assert stem("2023") == "2023"


def test_query_terms_drop_stopwords_and_duplicates() -> None:
    assert query_stems("What did you paint? We painted the sunrise") == ["paint", "sunris"]
    assert "destress" in index_terms("running helps me de-stress")


def test_the_sqlite_fulltext_query_quotes_terms() -> None:
    from memory_substrate.storage.sqlite.fulltext import fts_query  # the dialect lives in storage/

    assert fts_query(["cat", 'say "hi"', ""]) == '"cat" OR "say ""hi"""'
    assert fts_query([]) == ""


def test_lexical_document_matches_query_stems() -> None:
    doc = lexical_document("We were painting sunrises at the lake!")
    assert doc.split() == ["paint", "sunris", "lak"]  # stems, the same on both sides
    assert set(query_stems("Who paints a sunrise?")) <= set(doc.split())


def test_one_normaliser_for_the_full_text_terms_and_the_ranker_terms() -> None:
    """The full-text index's terms (memory_substrate.text) and the ranker's (retrieval.terms) come
    from one tokenizer: the same words, accents folded, full-width forms unified, kana voicing and
    Hangul syllables kept whole (NFKD used to split them: が became か, 한 became jamo)."""
    from memory_substrate import text as fulltext

    for sample in ("Café NAÏVE, re-use: 2023!", "ＡＢＣ１２３ ﬁle", "ｶﾞｷﾞ が 한국", "数据库迁移"):
        assert fulltext.tokens(sample) == tokenize(sample)
    assert tokenize("ｶﾞｷﾞ が") == ["ガギ", "が"]
    assert tokenize("한국") == ["한국"]
    assert fulltext.query_terms("café paintings") == ["cafe", "caf", "paintings", "paint"]  # surface and stem
    assert query_stems("café paintings") == ["caf", "paint"]  # the ranker: stems only
