"""How stored text is written where a reader reads it: the context package, search answers'
segment lines and the inspector. Stored data is kept as sent; only what a reader sees changes.

* ``continued``: every line break a reader may split on (``str.splitlines``'s; an XML parser
  reads a CR as a newline) continues the text on a line that starts with a space, so no stored
  text can open a line of its own (a ``## `` episode header, an ``N speaker:`` turn).
* ``label``: a speaker name bare when it is plain (one line, no colon, quote or backslash, not
  opening with ``[``), else a JSON string literal; ``quoted``: a title as a JSON string literal,
  always. Either way the text up to the first ``": "`` of a turn line is the whole speaker, and a
  header's title ends at its first unescaped quote.
* ``visible``: bidirectional controls (which reorder what a reader sees), zero-width characters
  and tag characters (which hide text from a person but not from a model) written as
  ``[U+202E]``. A zero-width joiner or non-joiner between two non-ASCII characters is kept: it
  belongs to the spelling of Persian, Indic scripts and emoji sequences.
"""

from __future__ import annotations

import json
import re

LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
# Bidi embeddings, overrides and isolates, the LRM/RLM/ALM marks; zero-width space, joiners,
# word joiner and BOM; the tag block (invisible ASCII look-alikes).
INVISIBLE = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b-\u200d\u2060\ufeff\U000e0000-\U000e007f]"
)
JOINERS = "\u200c\u200d"
PLAIN_NAME = re.compile(r'[^\[:"\\][^:"\\]*')


def continued(text: str) -> str:
    """``text`` with each line break followed by a space: continuation lines, never a line's start."""
    return LINE_BREAK.sub("\n ", text)


def quoted(value: str) -> str:
    """``value`` on one line (whitespace runs collapsed) as a JSON string literal."""
    return json.dumps(" ".join(value.split()), ensure_ascii=False)


def label(name: str) -> str:
    """A speaker name as a turn line writes it: bare when plain, else ``quoted``."""
    one = " ".join(name.split())
    return one if one and PLAIN_NAME.fullmatch(one) else quoted(one)


def _spelling(text: str, start: int, end: int) -> bool:
    """A joiner at ``text[start:end]`` between two visible non-ASCII characters."""
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    return all(c and not c.isascii() and not c.isspace() and not INVISIBLE.match(c) for c in (before, after))


def _shown(m: re.Match[str]) -> str:
    c = m.group()
    if c in JOINERS and _spelling(m.string, m.start(), m.end()):
        return c
    return f"[U+{ord(c):04X}]"


def visible(text: str) -> str:
    """``text`` with its invisible controls written as ``[U+XXXX]`` (see the module's note)."""
    return INVISIBLE.sub(_shown, text) if INVISIBLE.search(text) else text
