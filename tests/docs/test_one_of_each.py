"""One definition of each rule the package states once (issue 39): the source is read, not run.

A second definition of any of these (a copy that drifts) fails here, named with its place.
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "memory_substrate"


def _defining(pattern: str) -> list[str]:
    rx = re.compile(pattern, re.MULTILINE)
    return sorted(
        f"{p.relative_to(SRC)}:{s.count(chr(10), 0, m.start()) + 1}"
        for p in SRC.rglob("*.py")
        for s in [p.read_text(encoding="utf-8")]
        for m in rx.finditer(s)
    )


def _files(pattern: str) -> list[str]:
    return sorted({d.split(":")[0] for d in _defining(pattern)})


def test_one_graph_walk_and_one_path_search() -> None:
    # Walks take an ``edges_of`` read and keep a frontier: only these two modules may.
    assert _files(r"^def \w+\(edges_of\b") == ["derived/pathsearch.py", "derived/traversal.py"]
    assert _files(r"^(?!\s*#).*\bfrontiers?\b") == ["derived/pathsearch.py", "derived/traversal.py"]
    assert _files(r"^def (neighbourhood|shortest_paths|find_paths)\(\s*edges_of") == [
        "derived/pathsearch.py",
        "derived/traversal.py",
    ]


def test_the_sdk_is_used_through_its_public_api() -> None:
    assert _defining(r"\._tool_manager\b") == []


def test_one_token_counter() -> None:
    assert _defining(r"^def count_tokens\(") == [
        "tokens.py:" + _defining(r"^def count_tokens\(")[0].split(":")[1]
    ]
    assert _files(r"^def (count_tokens|part_tokens|wire_json)\(") == ["tokens.py"]


def test_one_stopword_list_per_language_and_one_query_terms() -> None:
    assert _files(r"^\w*STOPWORDS\w*(: [^=]+)? = ") == ["analysis/cjk.py", "analysis/stopwords.py"]
    assert _files(r"^ENGLISH(: [^=]+)? = frozenset") == ["analysis/stopwords.py"]
    assert _files(r"^def query_terms\(") == ["text.py"]


def test_each_script_range_is_defined_once() -> None:
    # Written as characters or as code points, a range's first character appears in scripts.py
    # only. embed/wordpiece.py keeps BERT's own definition of a Chinese character: part of that
    # tokenizer's contract with its vocabulary, not the package's notion of a script.
    starts = ["3040", "3400", "4e00", "ac00", "f900", "ff66", "0400", "1100", "2e80", "a960", "ff00"]
    rx = "|".join([*(rf"\\u{s}-|0x{s}\b" for s in starts), r"\\U00020000-"])
    assert _files(rf"(?i){rx}") == ["analysis/scripts.py", "embed/wordpiece.py"]


def test_no_comment_names_a_round_or_an_old_schema_version() -> None:
    # Code says why, never when: "round 6", "before v8", "schema v12" belong in the logs and the
    # migrations' own numbering, not in comments.
    found = _defining(r"(?i)\bround \d+\b|\bbefore (schema )?v\d+\b|\bschema v\d+\b|\bfrom before v\d+\b")
    assert found == []


def test_no_unused_alias_or_parameter_left() -> None:
    assert _defining(r"^Segment = RankSegment") == []
    assert _defining(r"\bembedder_name\b") == []


def test_no_function_over_80_lines() -> None:
    # A function longer than a screen and a half does several things: cut it along its stages
    # into named helpers. Counted from the ``def`` line to the body's last line.
    import ast

    long = []
    for p in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 80:
                    long.append(f"{p.relative_to(SRC)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []
