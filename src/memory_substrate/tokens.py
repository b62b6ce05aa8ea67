"""The package's one token counter: every budget (the context compiler's packing, the response
budget of every tool) and every reported size is counted here, offline, with no vocabulary file.

``tiktoken`` installs here but fetches its encodings from the network on first use, which the
hot path may not do, and the tokenizers of Claude and Llama 3 are not available offline at all.
So text is counted with an approximation of byte-pair encoders, which split text the way
cl100k/o200k pre-tokenise it (words with their leading space, runs of up to three digits,
punctuation runs, whitespace) and then charge each piece what BPE vocabularies typically charge:
one token for a word of up to seven letters, one more per four letters beyond, a little more
for a long capitalised word (names split more often), two punctuation characters per token,
about one token per CJK character, 0.6 per Cyrillic letter, 1.4 per letter of other scripts. Each class of piece is counted by one
regular-expression pass (C speed), not piece by piece. docs/context-compiler.md gives the
measured ratio to cl100k, o200k and the Claude tokenizer: it over-counts English prose by a few
per cent, so a package that fits by this count fits the real tokenizers too in nearly every case.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from typing import Any

from memory_substrate.analysis import DETECTED, MIN_LETTERS, scripts

SHORT_WORD = 7  # letters a common word can have and still be one token
LETTERS_PER_EXTRA_TOKEN = 4.0
CAPITALISED_EXTRA = 0.2  # long capitalised words (names) split a little more often
# Text in another language written in Latin script (German, Spanish...): BPE vocabularies learnt
# mostly from English hold fewer of its words whole, so words split sooner and into more pieces.
OTHER_SHORT_WORD = 3
OTHER_LETTERS_PER_EXTRA_TOKEN = 2.5
CJK_PER_CHAR = 1.2  # Han, kana, hangul: about a token a character, more for rare characters
CYRILLIC_PER_CHAR = 0.6  # a Russian word of several letters is a few pieces
# Greek, Hebrew, Arabic, Indic, Thai...: byte-level vocabularies hold few pieces of them, about a
# token a letter (cl100k), more in Claude's (docs/context-compiler.md, "Counting tokens offline")
OTHER_SCRIPT_PER_CHAR = 1.4
ASTRAL_EXTRA = 1.7  # a character beyond the first plane (emoji): four bytes, two or three tokens
MARGIN = 1.02  # a little over, so prose that fits here fits the Claude tokenizer too

_ASCII_WORD = re.compile(r"[A-Za-z]+")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{4,}")
_CONTRACTION = re.compile(r"'(?:s|t|re|ve|m|ll|d)\b")  # one token, not a quote plus a word
_DIGITS = re.compile(r"\d{1,3}")
_PUNCT = re.compile(r"[^\w\s]+")
_CJK = re.compile(f"[{scripts.CJK}{scripts.HALFWIDTH_KANA}]")
_OTHER_SCRIPT = re.compile(f"[^\\x00-\u024f\\s\\d\\W{scripts.CJK}{scripts.HALFWIDTH_KANA}]")
_CYRILLIC = re.compile(f"[{scripts.CYRILLIC_LETTERS}]")  # letters only: a subset of _OTHER_SCRIPT
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_UNDERSCORES = re.compile(r"_+")
_SPACE_RUNS = re.compile(r" {2,}")


# Where a piece of a package ends for the word rule: after a line, after a JSON string that
# another follows (``",`` before ``"``: a quote inside a string is escaped), and between two
# objects of a list (``},`` before ``{``). The last cut keeps an object's last field a piece of its
# own, the same piece its part (``part_tokens``) was told by, so the package's count finds it told
# instead of running the detector on it again with the next object's first key attached. The
# punctuation run it cuts (``"},{"``) counts the same in two pieces; where the language of the
# two sides differs, each side now takes its own word rule, so a package mixing languages counts
# closer to the sum of its parts than before (an English one counts the same).
_PIECE_END = re.compile(r'\n|",(?=")|\},(?=\{)')  # a piece ends after the match


def _pieces(text: str) -> list[str]:
    """``text`` cut after each ``_PIECE_END`` (the last piece may be empty): a consuming pattern
    and slices, several times faster than ``re.split`` on lookbehinds over a whole package."""
    out: list[str] = []
    start = 0
    for m in _PIECE_END.finditer(text):
        out.append(text[start : m.end()])
        start = m.end()
    out.append(text[start:])
    return out


def _estimate(text: str) -> float:
    """The estimate, with the word rule (English, or another Latin-script language) told per line
    and per JSON string: told once for a whole package, a German turn at its top counted every
    English line after it by the German rule (a quarter more), so a package's count depended on
    which turn came first and was not the sum of the parts packing weighs."""
    if "\n" not in text and '",' not in text and "},{" not in text:
        return _estimate_as(text, _is_other_latin(text))
    pieces = _pieces(text)
    # a piece shorter than the detector's minimum of letters has no language (the English rule)
    other = [len(p) >= MIN_LETTERS and _is_other_latin(p) for p in pieces]
    if not any(other):
        return _estimate_as(text, False)
    if all(other):
        return _estimate_as(text, True)
    return _estimate_as(
        "".join(p for p, o in zip(pieces, other, strict=True) if not o), False
    ) + _estimate_as("".join(p for p, o in zip(pieces, other, strict=True) if o), True)


def _estimate_as(text: str, other_latin: bool) -> float:
    if not other_latin:
        lengths = [len(w) for w in _ASCII_WORD.findall(text)]
        short, per_extra = SHORT_WORD, LETTERS_PER_EXTRA_TOKEN
    else:
        lengths = [len(w) for w in _LATIN_WORD.findall(text)]
        short, per_extra = OTHER_SHORT_WORD, OTHER_LETTERS_PER_EXTRA_TOKEN
    total = len(lengths) + sum(n - short for n in lengths if n > short) / per_extra
    total += CAPITALISED_EXTRA * len(_CAPITALISED.findall(text))
    total += len(_DIGITS.findall(text)) - len(_CONTRACTION.findall(text))
    total += sum(math.ceil(len(run) / 2) if run.isascii() else len(run) for run in _PUNCT.findall(text))
    total += text.count("\n")
    # two passes that mostly find nothing: skipped when a substring search says so
    total += (len(_SPACE_RUNS.findall(text)) if "  " in text else 0) + (
        len(_UNDERSCORES.findall(text)) if "_" in text else 0
    )
    if not text.isascii():
        cyrillic = len(_CYRILLIC.findall(text))
        total += CJK_PER_CHAR * len(_CJK.findall(text)) + CYRILLIC_PER_CHAR * cyrillic
        total += OTHER_SCRIPT_PER_CHAR * (len(_OTHER_SCRIPT.findall(text)) - cyrillic) + ASTRAL_EXTRA * len(
            _ASTRAL.findall(text)
        )
    return total


def _is_other_latin(text: str) -> bool:
    """Whether ``text`` is in a language other than English that is written in Latin script."""
    from memory_substrate.analysis import language_of  # light: the detector loads on first use

    known = _KNOWN.get(text)
    if known is not None:
        return known
    lang = language_of(text[:2000])
    return lang is not None and lang not in ("en", "ru")


@lru_cache(maxsize=65_536)
def _cached(text: str) -> int:
    return math.ceil(MARGIN * _estimate(text))


@lru_cache(maxsize=65_536)
def _cached_part(text: str) -> float:
    return MARGIN * _estimate(text)


@lru_cache(maxsize=65_536)
def _cached_part_as(text: str, other_latin: bool) -> float:
    return MARGIN * _estimate_as(text, other_latin)


def part_tokens(text: str, language: str | None = None) -> float:
    """What ``text`` adds to a longer text's count, unrounded: the estimate is a sum over the
    text's pieces, so the parts of a package (its lines and elements) add up to the whole's count
    to within its final rounding, where rounding every part up overstates the whole by about half
    a token a part (20-30 tokens in a package of 1,500).

    ``language``: the language of the text as the store kept it (a turn's, ``Segment.language``;
    "" when none could be told), which then picks the word rule instead of the detector (about
    50 turns a compile whose lines the detector had not seen: a few ms at 10k segments)."""
    if not text:
        return 0.0
    if len(text) <= 2_000:
        # One piece only (a turn of one line): the package's count splits a turn of several lines
        # into its lines and tells each one's rule apart, and a part must weigh what it adds.
        if language is not None and sum(1 for p in _pieces(text) if p) == 1:
            other = language in OTHER_LATIN
            # The package's count reads this part again as one of its pieces: it is told too.
            if len(_KNOWN) >= _KNOWN_LIMIT:
                _KNOWN.clear()
            _KNOWN[text] = other
            return _cached_part_as(text, other)
        return _cached_part(text)
    return float(count_tokens(text))


# The languages whose text takes the other-Latin word rule (``_is_other_latin``).
OTHER_LATIN = frozenset(DETECTED) - {"en", "ru"}
# Parts whose rule is known from the store (``part_tokens(text, language)``): a package's count
# splits it into the same pieces (a turn's line) and asks ``_is_other_latin`` of each.
_KNOWN: dict[str, bool] = {}
_KNOWN_LIMIT = 8_192


def count_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (see the module docstring for how close it is)."""
    if not text:
        return 0
    if len(text) <= 2_000:  # item-sized strings recur across compiles (the same turns, facts)
        return _cached(text)
    if len(text) <= PIECE_CHARS:
        return math.ceil(MARGIN * _estimate(text))
    # In pieces: one findall over a 200,000-character turn held the GIL for tens of ms, during
    # which no other request of the server ran. Cuts fall after whitespace where there is some;
    # a cut can only add a token (a split punctuation run), so the count stays an upper bound.
    total = 0.0
    start = 0
    while start < len(text):
        end = min(len(text), start + PIECE_CHARS)
        if end < len(text):
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            if cut > start:
                end = cut + 1
        total += _estimate(text[start:end])
        start = end
    return math.ceil(MARGIN * total)


PIECE_CHARS = 16_384


def wire_json(value: Any) -> str:
    """The compact JSON text a tool result travels as (no indentation, UTF-8 kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
