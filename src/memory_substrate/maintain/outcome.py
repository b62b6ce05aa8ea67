"""A maintenance run's outcome, said first: ``status`` is ``failed`` when none of its work was
done, ``partial`` when some was, and then ``error`` names the first failure; the counts say the
same as the runs and the queue. The CLI exits 1 on either status, and over MCP a failed run is an
``isError`` result (wire.py), so no caller takes a run that did nothing for a success.
"""

from __future__ import annotations

from memory_substrate.json_types import JsonObject


def _object(value: object) -> JsonObject:
    """A nested object of the extract document, or an empty one where it has none."""
    return value if isinstance(value, dict) else {}


def settle_extract(result: JsonObject) -> JsonObject:
    """``extract``'s result with its status first and the counts in the queue's words: ``done``
    and ``partial`` (some windows failed, the rest applied) by the episode's outcome; an episode
    that could not be extracted is ``retrying`` while its job is queued again (the queue's
    ``retrying``) and ``failed`` once it has used its attempts (the queue's ``failed``)."""
    # graph/extract.py's document: ``runs`` is a list of one object per episode.
    listed = result.get("runs")
    runs = [_object(r) for r in listed] if isinstance(listed, list) else []
    if result.get("status") not in ("applied", "partial", "failed") or not runs:
        return result
    lost = [r for r in runs if r.get("outcome") == "failed"]
    result["counts"] = {
        "done": sum(r.get("outcome") == "done" for r in runs),
        "partial": sum(r.get("outcome") == "partial" for r in runs),
        "retrying": sum(r.get("status") != "failed" for r in lost),
        "failed": sum(r.get("status") == "failed" for r in lost),
    }
    status = result["status"]
    rest = {k: v for k, v in result.items() if k != "status"}
    short = [r for r in runs if r.get("outcome") != "done"]
    if not short:
        return {"status": status, **rest}
    first = _object(short[0].get("error"))
    error = {
        "code": first.get("code", "memory_error"),
        "message": f"{len(short)} of {len(runs)} episodes were not fully extracted; the first: "
        f"{first.get('message', 'no message')}",
        "details": {"episode_id": short[0].get("episode_id"), "trace_id": short[0].get("trace_id")},
    }
    return {"status": status, "error": error, **rest}
