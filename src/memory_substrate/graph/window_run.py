"""Ask the model about one extraction window, and keep what its answer holds.

Per window: one request with ``max_tokens`` sized to the window; the answer read item by item
(``graph/salvage.py``); an answer cut at the token cap keeps its complete items and the window is
asked again in two halves; an answer that yields nothing valid gets one repair request quoting
what was wrong. Every failure, whatever raised it, ends as the window's ``error``: nothing a
model does ends a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from memory_substrate.errors import MemorySubstrateError
from memory_substrate.graph import extraction_prompt as prompt
from memory_substrate.graph.extraction_trace import WindowTrace
from memory_substrate.graph.salvage import Reading, read_answer, repair_messages
from memory_substrate.graph.schemas import Extraction, extraction_json_schema
from memory_substrate.json_types import JsonObject
from memory_substrate.llm.base import Completion, LLMOutputError, LLMTruncatedError

MAX_DROPPED_IN_TRACE = 50


class Extractor(Protocol):
    name: str

    def complete(
        self,
        messages: list[dict[str, str]],
        schema: JsonObject,
        *,
        schema_name: str,
        max_tokens: int | None = None,
    ) -> Completion: ...


@dataclass
class WindowResult:
    trace: WindowTrace
    extractions: list[Extraction] = field(default_factory=list)

    @property
    def error(self) -> JsonObject | None:
        return self.trace.get("error")


def _ask(extractor: Extractor, messages: list[dict[str, str]], max_tokens: int) -> Completion:
    return extractor.complete(
        messages, extraction_json_schema(), schema_name="extraction", max_tokens=max_tokens
    )


def _failure(exc: BaseException) -> JsonObject:
    if isinstance(exc, MemorySubstrateError):
        return exc.to_dict()
    return {"code": "memory_llm_error", "message": f"{type(exc).__name__}: {exc}", "details": {}}


def _note(entry: WindowTrace, answer: Completion, reading: Reading) -> None:
    entry["attempts"] = entry.get("attempts", 0) + answer.attempts
    if answer.errors:
        entry.setdefault("retried", []).extend(answer.errors)
    entry["finish_reason"] = answer.finish_reason
    entry["prompt_tokens"] = entry.get("prompt_tokens", 0) + answer.usage.get("prompt_tokens", 0)
    entry["completion_tokens"] = entry.get("completion_tokens", 0) + answer.usage.get("completion_tokens", 0)
    entry["items"] = entry.get("items", 0) + reading.items
    entry.setdefault("dropped", []).extend(reading.dropped[:MAX_DROPPED_IN_TRACE])
    entry.setdefault("grounding", []).extend(reading.grounding[:MAX_DROPPED_IN_TRACE])
    if reading.truncated:
        entry["truncated"] = True


def run_window(
    extractor: Extractor, window: prompt.Window, *, max_output_tokens: int, depth: int = 0
) -> WindowResult:
    """The window's extractions and its trace entry (``error`` set when nothing usable came back)."""
    max_tokens = window.max_tokens(max_output_tokens)
    entry: WindowTrace = {
        "part": list(window.part),
        "segments": [window.segment_ids[0], window.segment_ids[-1]] if window.segment_ids else [],
        "turns": len(window.rows),
        "max_tokens": max_tokens,
    }
    result = WindowResult(entry)
    messages = window.messages()
    try:
        answer = _ask(extractor, messages, max_tokens)
        reading = read_answer(
            answer.text, truncated=answer.truncated, prompt=prompt.SYSTEM, segments=window.segments()
        )
        _note(entry, answer, reading)
        if reading.items:
            result.extractions.append(reading.extraction)
        if reading.truncated:
            _split(extractor, window, result, reading, max_output_tokens=max_output_tokens, depth=depth)
        elif not reading.items and (reading.error or reading.schema_errors):
            _repair(extractor, messages, answer.text, reading, result, max_tokens, window.segments())
    except Exception as exc:  # the model's trouble, whatever raised it, is this window's error
        entry["error"] = _failure(exc)
    return result


def _split(
    extractor: Extractor,
    window: prompt.Window,
    result: WindowResult,
    reading: Reading,
    *,
    max_output_tokens: int,
    depth: int,
) -> None:
    """A truncated answer: ask again in two halves (once); the window fails only if nothing came back."""
    halves = window.halves() if depth == 0 else []
    subs = [
        run_window(extractor, half, max_output_tokens=max_output_tokens, depth=depth + 1) for half in halves
    ]
    if subs:
        result.trace["split"] = [s.trace for s in subs]
    for sub in subs:
        result.extractions.extend(sub.extractions)
    if not result.extractions and all(s.error for s in subs):
        result.trace["error"] = LLMTruncatedError(
            f"the answer was cut at max_tokens={result.trace['max_tokens']} (finish_reason: length)"
            + (" and so were both halves of the window" if subs else "")
            + "; nothing complete was kept",
            details={"max_tokens": result.trace["max_tokens"], "dropped": reading.dropped[:10]},
        ).to_dict()


def _repair(
    extractor: Extractor,
    messages: list[dict[str, str]],
    text: str,
    reading: Reading,
    result: WindowResult,
    max_tokens: int,
    segments: dict[str, str],
) -> None:
    """Nothing valid: one more request quoting the validation errors, before the window fails."""
    answer = _ask(extractor, repair_messages(messages, text, reading), max_tokens)
    again = read_answer(answer.text, truncated=answer.truncated, prompt=prompt.SYSTEM, segments=segments)
    result.trace["repair"] = {"items": again.items, "finish_reason": answer.finish_reason}
    _note(result.trace, answer, again)
    if again.items:
        result.extractions.append(again.extraction)
        return
    why = again.error or reading.error or f"{reading.schema_errors} items did not fit the schema"
    result.trace["error"] = LLMOutputError(
        f"{extractor.name}: no valid item in the answer nor in the repaired one ({why})",
        details={"dropped": (reading.dropped + again.dropped)[:20], "raw": text[:2000]},
    ).to_dict()
