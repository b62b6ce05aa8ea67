"""Kotlin and shell outlines, and the plain segments of files no outline covers."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_substrate.ingest.adapters.chunker import ChunkLimits
from memory_substrate.ingest.adapters.code_symbols import outline
from memory_substrate.ingest.adapters.repo import HEAD_CHUNKS, capture_repo
from tests.ingest.test_repo_languages import DEPLOY_SH, UTIL_KT
from tests.ingest_adapters.conftest import write


def test_kotlin_outline() -> None:
    pytest.importorskip("tree_sitter_kotlin")
    out = outline(UTIL_KT, "app/src/Util.kt", "kotlin")
    assert (out.parser, out.parse_errors, out.module) == ("tree-sitter", False, "com.example.geometry.Util")
    assert out.imports == ["kotlin.math.PI"]
    assert [(s.name, s.kind, s.line_start, s.line_end, s.doc) for s in out.symbols] == [
        ("circleArea", "function", 6, 6, "Computes the area of a circle from its radius."),
        ("Square", "class", 11, 20, "A square with a side length."),
        ("Square.perimeter", "method", 13, 15, "Perimeter of the square, four sides."),
        ("Square.unit", "method", 18, 18, ""),
    ]
    assert out.symbols[0].signature == "fun circleArea(radius: Double): Double"


def test_kotlin_interfaces_enums_and_objects() -> None:
    pytest.importorskip("tree_sitter_kotlin")
    source = "interface Shape {\n    fun area(): Double\n}\n\nenum class Color {\n    RED\n}\n\nobject Registry {\n    fun all() = 1\n}\n"
    out = outline(source, "a.kt", "kotlin")
    assert [(s.name, s.kind) for s in out.symbols] == [
        ("Shape", "interface"), ("Shape.area", "method"), ("Color", "enum"), ("Registry", "object"),
        ("Registry.all", "method"),
    ]  # fmt: skip


def test_shell_outline() -> None:
    pytest.importorskip("tree_sitter_bash")
    out = outline(DEPLOY_SH, "scripts/deploy.sh", "bash")
    assert (out.parser, out.parse_errors) == ("tree-sitter", False)
    assert out.imports == ["./lib.sh"]
    assert [(s.name, s.kind, s.line_start, s.line_end, s.signature, s.doc) for s in out.symbols] == [
        (
            "deploy_release",
            "function",
            6,
            8,
            "deploy_release()",
            "Upload the release bundle to the staging host.",
        ),
        ("rollback_release", "function", 10, 12, "function rollback_release", ""),
    ]
    # A shebang right above a function is not its documentation.
    assert outline("#!/bin/sh\nf() {\n  true\n}\n", "x.sh", "bash").symbols[0].doc == ""


def test_files_without_symbols_get_their_path_and_head(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write(root, "conf/app.toml", '[server]\nport = 8080\ntoken = "AKIAIOSFODNN7EXAMPLE"\n')
    write(root, "pkg/consts.py", "RETRIES = 3\n")  # an outlined language, but no definitions
    write(root, "pkg/__init__.py", "")  # no text: nothing to find in it
    write(root, "data/big.csv", "".join(f"row {i},value {i}\n" for i in range(5000)))
    src = capture_repo(root, limits=ChunkLimits(max_lines=20, max_chars=400, overlap_lines=2))
    heads = [s for s in src.segments if s.metadata["segment_kind"] == "file_head"]
    toml = next(s for s in heads if s.locator["path"] == "conf/app.toml")
    assert toml.text.startswith("file conf/app.toml (toml, lines 1-3)\n[server]")
    assert "AKIAIOSFODNN7EXAMPLE" not in toml.text  # the head is the redacted text
    assert toml.locator == {"kind": "line", "path": "conf/app.toml", "line_start": 1, "line_end": 3,
                            "heading_path": []}  # fmt: skip
    assert any(s.locator["path"] == "pkg/consts.py" and "RETRIES = 3" in s.text for s in heads)
    assert not any(s.locator["path"] == "pkg/__init__.py" for s in src.segments)
    big = [s for s in heads if s.locator["path"] == "data/big.csv"]
    assert len(big) == HEAD_CHUNKS and big[0].locator["line_start"] == 1
    assert all(len(s.text.split("\n", 1)[1]) <= 400 for s in big)


def test_size_and_binary_rules_hold_for_unknown_extensions(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write(root, "a.zzq", "x" * 3000)
    write(root, "b.zzq", b"text\x00with a NUL")
    write(root, "c.zzq", "small enough\n")
    src = capture_repo(root, max_file_bytes=1000)
    assert {s.locator["path"] for s in src.segments} == {"c.zzq"}
    assert {e["path"] for e in src.skipped} == {"a.zzq", "b.zzq"}
