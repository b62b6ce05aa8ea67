"""Background extraction for ``serve``: when a model is configured, a daemon thread drains the
queue a few episodes at a time, so ingest never waits for a model and nothing is left behind."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from memory_substrate.graph.extract import configured_extractor, drain
from memory_substrate.runtime import Runtime

log = logging.getLogger(__name__)
BATCH = 5


def start_background_extraction(rt: Runtime, *, interval_s: float = 15.0) -> Callable[[], None] | None:
    """Start draining when a model is configured (and background extraction is on). Returns a stop
    function, or None when nothing was started."""
    settings = rt.settings
    extractor = configured_extractor(settings)
    if extractor is None or not settings.extract_in_background:
        return None
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval_s):
            try:
                while not stop.is_set():
                    result = drain(rt, extractor, episode_ids=None, limit=BATCH, apply=True)
                    if not result["episodes"]:
                        break
            except Exception:  # the server must outlive a failing model; the failure is in the job's trace
                log.exception("background extraction failed")

    threading.Thread(target=loop, name="memory-substrate-extract", daemon=True).start()
    return stop.set
