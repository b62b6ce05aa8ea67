"""Exact tokens in a query (IPs, versions, ticket ids, paths): the objects holding them verbatim.

Object search fuses its streams by rank (RRF), so a source that only the full-text stream finds,
even first, lost to sources both streams found lower down: an IP asked for exactly missed its
episode once a few conversations held similar numbers. The tokens a query states exactly are
looked up two ways, and the objects found form an ``exact`` stream of their own:

* the episode's specific facts (``graph/specific.py``, kept as ``spec:`` lookup keys at ingest):
  IPs, versions, ports, CLI invocations, resource names;
* any other token with a digit or a path separator (``OPS-1712``, ``/var/log/app.log``): the
  full-text segment hits whose text holds it verbatim (case-insensitive).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory_substrate.graph.specific import specific_facts
from memory_substrate.lookup_keys import specific_key
from memory_substrate.models import SegmentHit
from memory_substrate.storage.base import StoreSession

SCAN = 50  # full-text segment hits read to check for a verbatim token
_TOKEN = re.compile(r"[^\s\"'`,;()\[\]{}<>]+")
_TRIM = ".,:;!?"


def exact_tokens(text: str) -> list[str]:
    """Tokens stated exactly: 4+ characters holding a digit or a path separator, not a bare
    number (a year or a count is not an identifier)."""
    out = []
    for raw in _TOKEN.findall(text):
        tok = raw.strip(_TRIM)
        if len(tok) >= 4 and not tok.isdigit() and (any(ch.isdigit() for ch in tok) or "/" in tok.strip("/")):
            out.append(tok)
    return list(dict.fromkeys(out))


def exact_matches(session: StoreSession, text: str, seg_hits: Sequence[SegmentHit]) -> list[str]:
    """Ids of the objects (episodes, sources) that hold the query's exact tokens, best first."""
    found: list[str] = []
    keys = [specific_key(f["kind"], f["value"]) for f in specific_facts(text)]
    if keys:
        found.extend(oid for _, oid in session.find_keys(keys))
    tokens = [t.casefold() for t in exact_tokens(text)]
    if tokens and seg_hits:
        wanted = [(h.source_id, h.segment_id) for h in seg_hits[:SCAN]]
        rows = {(s.source_id, s.id): s for s in session.get_segments_by_keys(wanted)}
        for key in wanted:
            seg = rows.get(key)
            if seg is not None and any(t in seg.text.casefold() for t in tokens):
                found.append(seg.source_id)
    return list(dict.fromkeys(found))
