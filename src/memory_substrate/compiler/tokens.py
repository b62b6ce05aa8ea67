"""An offline token counter that needs no vocabulary file.

``tiktoken`` installs here but fetches its encodings from the network on first use, which the
hot path may not do, and the tokenizers of Claude and Llama 3 are not available offline at all.
So the compiler counts with an approximation of byte-pair encoders: the text is split the way
cl100k/o200k pre-tokenise it (words with their leading space, runs of up to three digits,
punctuation runs, whitespace), and each piece costs what BPE vocabularies typically charge for
it: one token for a short word, more for long or rare-looking words, about one per character
outside Latin script. It is calibrated to over-count slightly, so a package that fits by this
count fits the real tokenizers too in nearly every case; docs/context-compiler.md gives the
measured ratio to cl100k, o200k and the Claude tokenizer.
"""

from __future__ import annotations

import math
import re

_PIECE = re.compile(
    r"'(?:s|t|re|ve|m|ll|d)\b"  # English contractions
    r"| ?[^\W\d_]+"  # a word (letters of any script) with its leading space
    r"|\d{1,3}"  # numbers in runs of up to three digits
    r"| ?[^\s\w]+"  # punctuation and symbols with a leading space
    r"|\s+"  # whitespace
    r"|_+",
    re.UNICODE,
)
WORD_CHARS_PER_TOKEN = 4.0  # beyond the first token, a long word costs one token per ~4 letters
SHORT_WORD = 7  # letters a common word can have and still be one token
MARGIN = 1.0  # calibrated safety factor (see module docstring)


def _word_cost(word: str) -> float:
    letters = word.lstrip(" ")
    if not letters.isascii():
        # CJK and other non-Latin scripts: about one token per character in BPE vocabularies
        return float(sum(1 if ord(ch) < 0x3000 else 1.2 for ch in letters)) * 0.9
    n = len(letters)
    if n <= SHORT_WORD:
        return 1.0 if not (letters[:1].isupper() and n > 4 and not letters.isupper()) else 1.2
    return 1.0 + (n - SHORT_WORD) / WORD_CHARS_PER_TOKEN


def _piece_cost(piece: str) -> float:
    ch = piece.lstrip(" ")[:1]
    if not ch:
        return 1.0  # a run of spaces
    if ch.isspace():
        return float(max(1, piece.count("\n")))
    if ch.isalpha():
        return _word_cost(piece)
    if ch.isdigit():
        return 1.0
    if ch == "_":
        return 1.0
    sym = piece.lstrip(" ")
    return float(max(1, math.ceil(len(sym) / 2))) if sym.isascii() else float(len(sym))


def count_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (see the module docstring for how close it is)."""
    if not text:
        return 0
    return math.ceil(MARGIN * sum(_piece_cost(p) for p in _PIECE.findall(text)))
