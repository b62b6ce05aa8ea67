"""A few hundred client transcripts for timing ``memory-substrate backfill``, made from the ones
recorded from the real clients (tests/data/transcripts/): every line keeps its real shape, and
each copy gets new session and message ids, a project of its own among ``projects``, and other
real text (LoCoMo utterances) in place of its prompts and answers, so no two copies are alike.

    from backfill_corpus import write_claude, write_codex
    write_claude(out / ".claude" / "projects", 300)   # Claude Code's folder layout
    write_codex(out / ".codex" / "sessions", 100)     # Codex's
"""

from __future__ import annotations

import itertools
import json
import random
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hook_store import DATA, sessions

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "transcripts"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
RECORDED_PROJECT = "/home/dev/shop"


def utterances(data: Path = DATA) -> Iterator[str]:
    """LoCoMo's turns, in order, forever."""
    texts = [m["content"] for _, messages in sessions(data) for m in messages]
    return itertools.cycle(texts)


def _said(turn_texts: list[tuple[str, str]]) -> set[str]:
    return {content for kind, content in turn_texts if kind in ("prompt", "text")}


def _rewrite(value: Any, texts: dict[str, str], words: Iterator[str]) -> Any:
    """Every string equal to a prompt or an answer replaced (the same text the same way)."""
    if isinstance(value, str):
        if value in texts:
            if not texts[value]:
                texts[value] = next(words)
            return texts[value]
        return value
    if isinstance(value, dict):
        return {k: _rewrite(v, texts, words) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, texts, words) for v in value]
    return value


def _copy(
    lines: list[str],
    said: set[str],
    ids: dict[str, str],
    project: str,
    words: Iterator[str],
    rng: random.Random,
) -> list[str]:
    texts = dict.fromkeys(said, "")
    out = []
    for line in lines:
        if not line.strip():
            continue
        line = _UUID.sub(
            lambda m: ids.setdefault(m[0], str(uuid.UUID(int=rng.getrandbits(128), version=4))), line
        )
        line = line.replace(RECORDED_PROJECT, project).replace(_dashed(RECORDED_PROJECT), _dashed(project))
        try:
            rec = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        out.append(json.dumps(_rewrite(rec, texts, words), ensure_ascii=False))
    return out


def _dashed(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _copies(
    templates: list[Path], read: Callable[[Path], Any], count: int, projects: int, seed: int
) -> Iterator[tuple[Path, str, dict[str, str], list[str], Callable[[Path], list[str]]]]:
    """(template, project, id map, rewritten lines, rewrite) of each of ``count`` copies; ``rewrite``
    gives another file of the same session (a subagent's) with the same ids and project."""
    rng = random.Random(seed)
    words = utterances()
    for i in range(count):
        template = templates[i % len(templates)]
        project = f"/home/dev/project-{i % projects:02d}"
        ids: dict[str, str] = {}

        def rewrite(path: Path, project: str = project, ids: dict[str, str] = ids) -> list[str]:
            said = _said([(t.metadata.get("kind", ""), t.content) for t in read(path).turns])
            return _copy(path.read_text().splitlines(), said, ids, project, words, rng)

        yield template, project, ids, rewrite(template), rewrite


def write_claude(folder: Path, count: int, projects: int = 20, seed: int = 7) -> list[Path]:
    """``count`` Claude Code sessions under ``folder`` (``~/.claude/projects``), subagents beside them."""
    from memory_substrate.hooks.transcripts import read_claude_code

    templates = sorted((RECORDED / "claude-code").glob("*.jsonl"))
    written = []
    for template, project, ids, lines, rewrite in _copies(templates, read_claude_code, count, projects, seed):
        session = json.loads(lines[-1]).get("sessionId") or next(iter(ids.values()))
        dest = folder / _dashed(project) / f"{session}.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text("\n".join(lines) + "\n")
        written.append(dest)
        for sub in sorted((template.with_suffix("") / "subagents").glob("*.jsonl")):
            sub_dest = dest.with_suffix("") / "subagents" / sub.name
            sub_dest.parent.mkdir(parents=True, exist_ok=True)
            sub_dest.write_text("\n".join(rewrite(sub)) + "\n")
    return written


def write_codex(folder: Path, count: int, projects: int = 20, seed: int = 11) -> list[Path]:
    """``count`` Codex rollouts under ``folder`` (``$CODEX_HOME/sessions``), dated folders as Codex keeps them."""
    from memory_substrate.hooks.transcripts import read_codex

    templates = [RECORDED / "codex" / "debug-session.jsonl", RECORDED / "codex" / "subagent-main.jsonl"]
    written = []
    for _, _, _, lines, _ in _copies(templates, read_codex, count, projects, seed):
        meta = json.loads(lines[0])["payload"]
        stamp = str(meta.get("timestamp") or "2026-12-01T10:00:00")[:19].replace(":", "-")
        day = stamp[:10].split("-")
        dest = folder / day[0] / day[1] / day[2] / f"rollout-{stamp}-{meta['id']}.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text("\n".join(lines) + "\n")
        written.append(dest)
    return written
