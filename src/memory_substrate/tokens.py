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
from pathlib import Path
from typing import Any

from memory_substrate.embed.wordpiece import WordPieceTokenizer

_VOCAB = Path(__file__).resolve().parent / "embed" / "data" / "vocab.txt"


@functools.cache
def _tokenizer() -> WordPieceTokenizer:
    return WordPieceTokenizer(_VOCAB.read_text(encoding="utf-8").splitlines())


def count_tokens(text: str) -> int:
    """Tokens of ``text`` (unknown pieces counted too: they still cost the reader)."""
    return len(_tokenizer().encode(text, drop_unknown=False))


def wire_json(value: Any) -> str:
    """The compact JSON text a tool result travels as (no indentation, UTF-8 kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
