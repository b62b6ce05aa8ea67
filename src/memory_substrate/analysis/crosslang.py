"""Word-match scores across languages: a text in another language than the query's gets no
verdict from word matching (``across_languages``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memory_substrate.analysis.detect import main_language


def _expected_lexical(
    lexical: npt.NDArray[np.float64], semantic: npt.NDArray[np.float64], at: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64] | float:
    """The lexical score expected at each semantic score of ``at``, fitted by least squares on the
    pairs ``(semantic, lexical)`` of the texts in the query's language, read within the semantic
    scores it was fitted on (a higher one counts as their highest), and never below their mean:
    a text in another language cannot share the query's words, so their absence is no evidence
    against it (the two models' semantic scales differ, and an unrelated English text's score sits
    higher than an unrelated translation's: without the floor, a held-out set lost a quarter of its
    cross-language hits). The mean where the texts are too few (under 3), flat, or where the two
    scores disagree (a negative slope)."""
    mean = float(lexical.mean())
    if len(lexical) < 3:
        return mean
    sd_lex, sd_sem = float(lexical.std()), float(semantic.std())
    if sd_lex < 1e-12 or sd_sem < 1e-12:
        return mean
    rho = float(np.corrcoef(lexical, semantic)[0, 1])
    if not rho > 0.0:
        return mean
    # Within the fitted range only: a few close semantic scores make a steep line, and a text
    # beyond them would otherwise be promised a word match no text in the query's language has.
    at = np.clip(np.asarray(at, dtype=np.float64), float(semantic.min()), float(semantic.max()))
    line = mean + rho * sd_lex / sd_sem * (at - float(semantic.mean()))
    return np.maximum(line, mean)


def across_languages(
    query: str,
    texts: Sequence[str],
    lexical: npt.NDArray[np.float64],
    stored: Sequence[str | None] | None = None,
    semantic: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """``lexical`` (one score per text) with no verdict where a text is not in the query's language.

    Word matching can only tell texts in the query's own language apart: a text in another
    language shares no words with the query (or only chance spellings: German "allergisch" and
    French "allergique" stem alike), which is evidence neither for nor against it. When the
    query's language is known, each text whose language is known and differs gets the mean score
    of the texts in the query's language, so the semantic evidence decides where it stands.
    Texts of unknown language, and all texts of a query whose language cannot be told, keep
    their scores: a store in one language ranks exactly as plain word matching ranks it.

    With ``semantic`` (each text's semantic score), a text whose semantic score predicts more than
    the mean gets that prediction instead: the regression line of lexical on semantic score over
    the texts in the query's language (``_expected_lexical``), floored at the mean. A translation
    as close in meaning as the best match in the query's language then stands near where its own
    words would put it; every other text in another language keeps the mean.

    ``stored`` holds each text's language as the store kept it at ingest (``main_language`` of
    the text, "" when it could not be told), None where it was not kept: only those are detected.
    """
    q = main_language(query)
    if q is None or not len(texts):
        return lexical
    if stored is None:
        langs = [main_language(t) for t in texts]
    else:
        langs = [main_language(t) if s is None else (s or None) for t, s in zip(texts, stored, strict=True)]
    same = [k for k, lang in enumerate(langs) if lang == q]
    other = [k for k, lang in enumerate(langs) if lang is not None and lang != q]
    if not same or not other:
        return lexical
    out = np.array(lexical, dtype=np.float64)
    if semantic is not None:
        out[other] = _expected_lexical(out[same], semantic[same], semantic[other])
        return out
    out[other] = float(out[same].mean())
    return out
