"""A maintenance run's outcome, said first: ``status`` is ``failed`` when none of its work was
done, ``partial`` when some was, and then ``error`` names the first failure; the counts say the
same as the runs and the queue. The CLI exits 1 on either status, and over MCP a failed run is an
``isError`` result (wire.py), so no caller takes a run that did nothing for a success.
"""

from __future__ import annotations

from typing import Any


def settle_extract(result: dict[str, Any]) -> dict[str, Any]:
    """``extract``'s result with its status from its runs. The counts use the queue's words:
    ``done``; ``retrying``, episodes this run could not extract that are queued again (in the
    queue's ``pending``); ``failed``, those that have used their attempts (the queue's ``failed``)."""
    runs = result.get("runs")
    if result.get("status") != "applied" or not runs:
        return result
    failed = [r for r in runs if r.get("status") != "done"]
    result["counts"] = {
        "done": len(runs) - len(failed),
        "failed": sum(r.get("status") == "failed" for r in failed),
        "retrying": sum(r.get("status") != "failed" for r in failed),
    }
    rest = {k: v for k, v in result.items() if k != "status"}
    if not failed:
        return {"status": "applied", **rest}
    first = failed[0].get("error") or {}
    status = "failed" if len(failed) == len(runs) else "partial"
    error = {
        "code": first.get("code", "memory_error"),
        "message": f"{len(failed)} of {len(runs)} episodes could not be extracted; the first: "
                   f"{first.get('message', 'no message')}",
        "details": {"episode_id": failed[0].get("episode_id"), "trace_id": failed[0].get("trace_id")},
    }
    return {"status": status, "error": error, **rest}
