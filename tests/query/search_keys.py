"""The ranked list of a search answer, read as an agent reads it, in either detail.

Segments come back as ``(source id, segment id)``; objects as their ids. The compact segment
shape lists each source once with its ``lines`` (``"N ..."``: segment ``seg-N``) and their
``ranks`` in the whole answer (docs/responses.md).
"""

from __future__ import annotations

import re
from typing import Any


def ranked_keys(out: dict[str, Any]) -> list[Any]:
    if out.get("result_unit") != "segment":
        return [i["id"] for i in out["items"]]
    if "items" in out:
        return [(i["source_id"], i["segment_id"]) for i in out["items"]]
    ranked: list[tuple[int, tuple[str, str]]] = []
    for source in out["sources"]:
        assert len(source["ranks"]) == len(source["lines"])
        for rank, line in zip(source["ranks"], source["lines"], strict=True):
            m = re.match(r"(\d+) ", line)
            assert m, line
            ranked.append((rank, (source["id"], f"seg-{m.group(1)}")))
    ranked.sort()
    assert [r for r, _ in ranked] == list(range(1, len(ranked) + 1))
    return [key for _, key in ranked]
