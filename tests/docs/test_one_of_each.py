"""One definition of each rule the package states once (issue 39): the source is read, not run.

A second definition of any of these (a copy that drifts) fails here, named with its place.
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "memory_substrate"


def _defining(pattern: str) -> list[str]:
    rx = re.compile(pattern, re.MULTILINE)
    return sorted(f"{p.relative_to(SRC)}:{s.count(chr(10), 0, m.start()) + 1}"
                  for p in SRC.rglob("*.py") for s in [p.read_text(encoding="utf-8")] for m in rx.finditer(s))


def _files(pattern: str) -> list[str]:
    return sorted({d.split(":")[0] for d in _defining(pattern)})


def test_one_graph_walk_and_one_path_search():
    # Walks take an ``edges_of`` read and keep a frontier: only these two modules may.
    assert _files(r"^def \w+\(edges_of\b") == ["derived/pathsearch.py", "derived/traversal.py"]
    assert _files(r"^(?!\s*#).*\bfrontiers?\b") == ["derived/pathsearch.py", "derived/traversal.py"]
    assert _files(r"^def (neighbourhood|shortest_paths|find_paths)\(\s*edges_of") == [
        "derived/pathsearch.py", "derived/traversal.py"]


def test_the_sdk_is_used_through_its_public_api():
    assert _defining(r"\._tool_manager\b") == []
