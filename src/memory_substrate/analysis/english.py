"""The English path's folding and light stemmer, shared by every language path: ``fold`` (lower
case, accents stripped) and ``stem`` (plural / -ing / -ed / -ly). ``retrieval.terms`` builds its
terms with them; the other languages' stopwords are folded the same way."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache


@lru_cache(maxsize=1)
def _strip_marks() -> dict[int, None]:
    """``str.translate`` table deleting every combining mark (canonical combining class above 0)
    except the kana voicing marks (U+3099, U+309A). Built once, on the first non-ASCII text
    (it tries every code point of the first two planes; none beyond them has a class)."""
    return {
        cp: None
        for cp in range(0x300, 0x20000)
        if unicodedata.combining(chr(cp)) and cp not in (0x3099, 0x309A)
    }


def fold(text: str) -> str:
    """The one normalisation of every lexical term (full-text rows, queries, the ranker's terms):
    lower case, compatibility forms unified (full-width letters, ligatures: NFKC) and accents
    stripped. The voicing marks of kana are part of the letter and stay (が is not か), and Hangul
    syllables stay whole (NFKD takes them apart into jamo; NFC puts them back)."""
    text = text.lower()
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", unicodedata.normalize("NFKD", text).translate(_strip_marks()))


_VOWEL = re.compile(r"[aeiouy]")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A light, conservative English suffix stemmer (plural / -ing / -ed / -ly).

    Not Porter: it only folds inflections so that "paintings", "painting", "painted" and "paint"
    meet, and leaves short words, numbers and non-Latin words alone.
    """
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    w = word
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and _VOWEL.search(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if len(w) >= 3 and w[-1] == w[-2] and w[-1] not in "lsz":  # running -> run
                w = w[:-1]
            elif w.endswith(("at", "bl", "iz")):  # created -> create
                w = w + "e"
            break
    if w.endswith("ly") and len(w) > 5:
        w = w[:-2]
    if w.endswith("e") and len(w) >= 4:  # create/creat, hike/hik meet
        w = w[:-1]
    return w
