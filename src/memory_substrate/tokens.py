"""Token counts of text an agent receives, without a network or a model download.

``tiktoken`` is installable here but its encodings are fetched from the network on first use, so
it cannot count offline. We count with the BERT WordPiece vocabulary that ships with the default
embedder (30,522 pieces): every punctuation character is a token of its own and rare words split
into several pieces, so on JSON this runs *higher* than the cl100k/o200k tokenizers that agents
use (about 10-30% on our responses). Budgets checked with it are therefore conservative.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from memory_substrate.embed.wordpiece import WordPieceTokenizer, basic_split

_VOCAB = Path(__file__).resolve().parent / "embed" / "data" / "vocab.txt"


@functools.cache
def _tokenizer() -> WordPieceTokenizer:
    return WordPieceTokenizer(_VOCAB.read_text(encoding="utf-8").splitlines())


_PIECES = re.compile(r"[^\W_]+|\S", re.UNICODE)


def count_tokens(text: str) -> int:
    """Tokens of ``text`` (unknown pieces counted too: they still cost the reader).

    Same count as encoding the whole text, faster: ASCII words go straight to the tokenizer's
    per-word cache, and only words with other characters (accents, CJK, symbols such as "…")
    take the character-by-character BERT split.
    """
    cache = _PIECE_TOKENS
    n = 0
    for piece in _PIECES.findall(text.lower()):
        c = cache.get(piece)
        if c is None:
            c = _piece_tokens(piece)
            if len(cache) < 200_000:  # bounded: pieces of pathological inputs are not kept forever
                cache[piece] = c
        n += c
    return n


_PIECE_TOKENS: dict[str, int] = {}  # piece -> token count; responses are shaped query after query


def _piece_tokens(piece: str) -> int:
    tok = _tokenizer()
    if piece.isascii():
        return 1 if len(piece) == 1 and not piece.isalnum() else len(tok.word_ids(piece))
    return sum(len(tok.word_ids(w)) for w in basic_split(piece))


def wire_json(value: Any) -> str:
    """The compact JSON text a tool result travels as (no indentation, UTF-8 kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
