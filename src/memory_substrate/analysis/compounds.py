"""Compound heads for German, Dutch and Swedish, without a dictionary.

Germanic compounds put the head last ("Rechen|zentrum" is a Zentrum, "Knie|verletzung" a
Verletzung), so a question worded with the head alone, or with another compound of the same
head, should meet the compound. Without a word list the split point is unknown, so every
plausible head is offered: each suffix of a long word that leaves a modifier of at least
``MIN_MODIFIER`` letters and is itself at least ``MIN_HEAD`` letters long. The wrong splits
("echenzentrum", "henzentrum", ...) are strings no other word produces, so they add index
entries but never false matches between different words; the right one meets the head word.
(A dictionary-based splitter would be tighter; the one on the package index is GPL-3.0.)
"""

from __future__ import annotations

import re

MIN_WORD = 10  # shorter words are rarely compounds worth splitting
MIN_MODIFIER = 4
MIN_HEAD = 5
MAX_HEADS = 8  # the longest heads first: a long compound's short tails are rarely words
# Adjective and adverb endings: such words ("nächtlich", "wöchentlich") are rarely compounds worth
# splitting, and their tails ("tlich") would meet every other word with the same ending. Inflected
# forms too ("nächtlichen", "praktische", "vriendelijke", "roliga"): their tails stem to the same
# fragments. "-schaft" is a noun ("Landwirtschaft" is a Wirtschaft), not "-haft".
_ADJECTIVE = re.compile(r"(?<!sc)(?:lich|isch|ig|bar|sam|haft|lijk|isk|lig)(?:e|en|er|es|em|a|t)?$")


def compound_heads(word: str) -> list[str]:
    """Head candidates of ``word`` (lower-case), longest first; [] for a short word."""
    n = len(word)
    if n < MIN_WORD or not word.isalpha() or _ADJECTIVE.search(word):
        return []
    heads = [word[i:] for i in range(MIN_MODIFIER, n - MIN_HEAD + 1)]
    return heads[:MAX_HEADS]
