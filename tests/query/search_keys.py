"""The ranked list of a search answer as (source id, segment id) or object ids, in either detail."""

from __future__ import annotations

from typing import Any


def ranked_keys(out: dict[str, Any]) -> list[Any]:
    if out.get("result_unit") == "segment":
        return [(i["source_id"], i["segment_id"]) for i in out["items"]]
    return [i["id"] for i in out["items"]]
