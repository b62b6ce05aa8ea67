"""repo capture: scope (skips, .gitignore, patterns, preflight), repo map and segments."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from memory_substrate.indexing import segment_embedding_text
from memory_substrate.ingest.adapters import _ast_outline, code_symbols
from memory_substrate.ingest.adapters.code_symbols import outline
from memory_substrate.ingest.adapters.errors import CaptureError
from memory_substrate.ingest.adapters.repo import capture_repo
from memory_substrate.ingest.adapters.repo_map import (
    CodeFile,
    CodeModule,
    DocFile,
    DocSection,
    PreflightReport,
)
from memory_substrate.ingest.captured import CapturedSource
from tests.ingest_adapters.conftest import write

BODY_MARKER = "BODY_ONLY_MARKER_7f3a"
SHAPES_PY = f'''"""Geometry helpers."""

import math
from dataclasses import dataclass


@dataclass
class Circle:
    """A circle."""

    radius: float
    def area(self) -> float:
        """Area of the circle."""
        {BODY_MARKER} = math.pi
        return {BODY_MARKER} * self.radius**2


def unit_circle() -> Circle:
    """The unit circle."""
    return Circle(1.0)


def total_area(circles: list[Circle]) -> float:
    areas = [c.area() for c in circles]
    return sum(areas)
'''
APP_TS = """import { fmt } from "./util";

export interface Shape {
  area(): number;
}

export class Square implements Shape {
  side = 2;
  area(): number {
    return this.side * this.side;
  }
}

export function render(s: Shape): string {
  return fmt(s.area());
}

export const double = (n: number): number => n * 2;
"""
GUIDE_MD = "---\ntitle: Shapes Guide\n---\n# Shapes\nIntro.\n## Usage\nCall `unit_circle()`.\nThen area.\n"
FILES: dict[str, str | bytes] = {
    ".gitignore": "logs/\n*.tmp\n!keep.tmp\n",
    "logs/run.txt": "log line\n",
    "scratch.tmp": "scratch\n",
    "keep.tmp": "kept\n",
    ".codex/state.json": "{}\n",
    ".worktrees/feature/README.md": "# Feature\n",
    "node_modules/left/index.js": "module.exports = 1;\n",
    "dist/bundle.js": "var a = 1;\n",
    "target/debug/x.rs": "fn main() {}\n",
    "pkg/__pycache__/m.py": "x = 1\n",
    "web/app.ts": APP_TS,
    "web/generated/.gitignore": "*.ts\n*.md\n",
    "web/generated/out.ts": "export const gen = 1;\n",
    "web/generated/README.md": "# Generated\n",
    "src/shapes/__init__.py": "",
    "src/shapes/geometry.py": SHAPES_PY,
    "src/settings.py": 'REGION = "eu"\nKEY = "AKIAIOSFODNN7EXAMPLE"\n',
    "docs/guide.md": GUIDE_MD,
    "docs/long.md": "# Long\n" + "word " * 200 + "\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "data/blob.bin": b"\x00\x01\x02",
    "data/blob.dat": b"abc\x00def",
    "data/latin1.txt": "caf\xe9\n".encode("latin-1"),
    "data/huge.txt": "y" * 5000,
    ".env": "SECRET=1\n",
    "deploy/key.pem": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
}


def build_repo(root: Path) -> Path:
    for rel, content in FILES.items():
        write(root, rel, content)
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_repo(tmp_path / "proj")


# capture_repo builds the payload's lists and the preflight report with these types (repo_map.py);
# the capture holds them as free-form JSON.
def _code_index(src: CapturedSource) -> list[CodeFile]:
    return cast(list[CodeFile], src.payload["code_index"])


def _code_modules(src: CapturedSource) -> list[CodeModule]:
    return cast(list[CodeModule], src.payload["code_modules"])


def _doc_index(src: CapturedSource) -> list[DocFile]:
    return cast(list[DocFile], src.payload["doc_index"])


def _sections(src: CapturedSource) -> list[DocSection]:
    return cast(list[DocSection], src.payload["document_sections"])


def _preflight(src: CapturedSource) -> PreflightReport:
    return cast(PreflightReport, src.metadata["preflight"])


def _paths(src: CapturedSource, key: str) -> list[str]:
    entries = _code_index(src) if key == "code_index" else _doc_index(src)
    return [e["path"] for e in entries]


def test_scope_skips_generated_ignored_and_agent_state(repo: Path) -> None:
    src = capture_repo(repo)
    seen = _paths(src, "code_index") + _paths(src, "doc_index")
    assert "src/shapes/geometry.py" in seen and "web/app.ts" in seen and "docs/guide.md" in seen
    for gone in ("node_modules/left/index.js", "dist/bundle.js", "logs/run.txt", "scratch.tmp",
                 ".codex/state.json", "target/debug/x.rs", "web/generated/out.ts", "pkg/__pycache__/m.py"):  # fmt: skip
        assert gone not in seen, gone
    assert "keep.tmp" in seen  # re-included by "!keep.tmp"
    assert "web/generated/README.md" not in seen  # nested .gitignore applies below its folder


def test_preflight_reports_agent_state(repo: Path) -> None:
    src = capture_repo(repo)
    pre = _preflight(src)
    assert pre["excluded_by_preflight"] == [".codex", ".worktrees"]
    assert pre["pending_decisions"][0] == {
        "path": ".codex",
        "kind": "local_agent_state",
        "reason": pre["pending_decisions"][0]["reason"],
        "suggested_action": "exclude",
    }
    assert pre["pending_decisions"][0]["reason"]
    assert pre["suggested_exclude_patterns"] == [".codex", ".worktrees"]
    assert pre["requires_decision"] is True
    assert len(pre["warnings"]) == 1 and ".codex" in pre["warnings"][0]
    assert not any(".codex" in w for w in src.warnings)  # reported once, via the preflight


def test_force_captures_agent_state(repo: Path) -> None:
    src = capture_repo(repo, force=True)
    assert ".codex/state.json" in _paths(src, "code_index")
    assert ".worktrees/feature/README.md" in _paths(src, "doc_index")
    pre = _preflight(src)
    assert pre["excluded_by_preflight"] == [] and pre["pending_decisions"] == []
    assert pre["forced"] == [".codex", ".worktrees"]


def test_explicit_exclude_is_not_a_pending_decision(repo: Path) -> None:
    src = capture_repo(repo, exclude_patterns=[".codex", ".worktrees/"])
    assert _preflight(src)["pending_decisions"] == []
    assert _preflight(src)["requires_decision"] is False


def test_include_and_exclude_patterns_match_paths_and_basenames(repo: Path) -> None:
    only_py = capture_repo(repo, include_patterns=["*.py"])
    assert _paths(only_py, "code_index") == [
        "src/settings.py",
        "src/shapes/__init__.py",
        "src/shapes/geometry.py",
    ]
    assert _doc_index(only_py) == []
    no_web = capture_repo(repo, exclude_patterns=["web", "geometry.py"])
    paths = _paths(no_web, "code_index")
    assert not any(p.startswith("web/") for p in paths)
    assert "src/shapes/geometry.py" not in paths and "src/shapes/__init__.py" in paths
    by_rel = capture_repo(repo, exclude_patterns=["src/shapes/*"])
    by_rel_paths = _paths(by_rel, "code_index")
    assert "src/settings.py" in by_rel_paths
    assert not any(p.startswith("src/shapes/") for p in by_rel_paths)


def test_python_module_outline_line_ranges(repo: Path) -> None:
    src = capture_repo(repo)
    mod = next(m for m in _code_modules(src) if m["path"] == "src/shapes/geometry.py")
    assert mod["module"] == "shapes.geometry" and mod["language"] == "python"
    assert mod["imports"] == ["math", "dataclasses"]
    assert [(c["name"], c["line_start"], c["line_end"]) for c in mod["classes"]] == [("Circle", 7, 15)]
    assert [(f["name"], f["line_start"], f["line_end"]) for f in mod["functions"]] == [
        ("Circle.area", 12, 15),
        ("unit_circle", 18, 20),
        ("total_area", 23, 25),
    ]
    index = next(e for e in _code_index(src) if e["path"] == "src/shapes/geometry.py")
    assert index["line_count"] == len(SHAPES_PY.splitlines()) and len(index["hash"]) == 64


def test_typescript_outline(repo: Path) -> None:
    pytest.importorskip("tree_sitter_typescript")
    src = capture_repo(repo)
    mod = next(m for m in _code_modules(src) if m["path"] == "web/app.ts")
    names = {(s["name"], s["kind"], s["line_start"], s["line_end"]) for s in mod["symbols"]}
    assert names == {
        ("Shape", "interface", 3, 5),
        ("Square", "class", 7, 12),
        ("Square.area", "method", 9, 11),
        ("render", "function", 14, 16),
        ("double", "function", 18, 18),
    }
    assert mod["imports"] == ["./util"]


def test_symbol_segments_are_short_excerpts(repo: Path) -> None:
    src = capture_repo(repo)
    symbol_segments = [s for s in src.segments if s.metadata["segment_kind"] == "code_symbol"]
    area = next(s for s in symbol_segments if s.locator.get("symbol") == "Circle.area")
    assert area.locator == {"kind": "line", "path": "src/shapes/geometry.py", "line_start": 12,
                            "line_end": 15, "symbol": "Circle.area", "symbol_kind": "method"}  # fmt: skip
    assert "def area(self) -> float:" in area.text and "Area of the circle." in area.text
    assert all(BODY_MARKER not in s.text for s in src.segments)


def test_a_symbol_vector_is_made_of_its_header_and_docstring(repo: Path) -> None:
    """The parameter list stays in the text (and the full-text index), not in the vector."""
    src = capture_repo(repo)
    area = next(s for s in src.segments if s.locator.get("symbol") == "Circle.area")
    header = area.text.split("\n", 1)[0]
    assert segment_embedding_text(area.text, area.metadata) == f"{header}\nArea of the circle."
    assert "def area" not in segment_embedding_text(area.text, area.metadata)
    undocumented = next(
        s
        for s in src.segments
        if s.metadata.get("segment_kind") == "code_symbol" and "doc_at" not in s.metadata
    )
    assert segment_embedding_text(undocumented.text, undocumented.metadata) == undocumented.text
    assert segment_embedding_text("a turn", {"name": "ann"}) == "a turn"


def test_document_sections_and_doc_index(repo: Path) -> None:
    src = capture_repo(repo)
    doc = next(d for d in _doc_index(src) if d["path"] == "docs/guide.md")
    assert doc["title"] == "Shapes Guide"
    sections = [s for s in _sections(src) if s["path"] == "docs/guide.md"]
    assert [s["chunk_kind"] for s in sections] == ["frontmatter", "section", "section"]
    usage = sections[2]
    assert usage["heading_path"] == ["Shapes", "Usage"] and (usage["line_start"], usage["line_end"]) == (6, 8)
    assert all(len(s["excerpt"]) <= 240 for s in _sections(src))
    long = [s for s in _sections(src) if s["path"] == "docs/long.md"]
    assert long and len(long[0]["excerpt"]) == 240 and long[0]["excerpt"].endswith("…")
    seg = next(s for s in src.segments if s.locator.get("heading_path") == ["Shapes", "Usage"])
    assert seg.text == usage["excerpt"] and seg.locator["path"] == "docs/guide.md"


def test_skipped_and_withheld(repo: Path) -> None:
    src = capture_repo(repo, max_file_bytes=4000)
    skipped = {s["path"]: s["reason"] for s in src.skipped}
    assert skipped["assets/logo.png"] == "binary_file"
    assert skipped["data/blob.bin"] == "binary_file"
    assert skipped["data/blob.dat"] == "binary_file"
    assert skipped["data/latin1.txt"] == "undecodable_text"
    assert skipped["data/huge.txt"] == "file_too_large"
    withheld = src.withheld
    assert {"path": ".env", "reason": "secret_file", "kind": "env_file"} in withheld
    assert {"path": "deploy/key.pem", "reason": "secret_file", "kind": "private_key"} in withheld
    token = next(w for w in withheld if w.get("kind") == "aws_access_key")
    assert token == {
        "path": "src/settings.py",
        "reason": "secret_redacted",
        "kind": "aws_access_key",
        "line": 2,
    }
    assert "src/settings.py" in _paths(src, "code_index")


def test_fingerprint_and_progress(repo: Path) -> None:
    calls: list[tuple[int, int, str]] = []
    first = capture_repo(repo, progress=lambda d, t, p: calls.append((d, t, p)))
    assert calls and calls[-1][0] == calls[-1][1] == len(calls)
    assert [c[0] for c in calls] == list(range(1, len(calls) + 1))
    assert capture_repo(repo).fingerprint == first.fingerprint
    (repo / "web" / "app.ts").write_text("export const x = 1;\n")
    assert capture_repo(repo).fingerprint != first.fingerprint


def test_errors_for_bad_root(tmp_path: Path) -> None:
    with pytest.raises(CaptureError) as info:
        capture_repo(tmp_path / "missing")
    assert info.value.code == "memory_capture_not_found"
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(CaptureError) as info:
        capture_repo(tmp_path / "f.txt")
    assert info.value.code == "memory_capture_not_a_directory"


@pytest.mark.parametrize(
    ("rel", "source", "expected"),
    [
        ("srv/server.go", "package srv\n\nimport \"fmt\"\n\n// Server serves.\ntype Server struct{}\n\n"
         "func (s *Server) Run() error {\n\tfmt.Println()\n\treturn nil\n}\n",
         {("Server", "struct", 6, 6), ("Server.Run", "method", 8, 11)}),
        ("src/lib.rs", "use std::io;\n\npub struct A;\n\nimpl A {\n    pub fn new() -> A {\n        A\n    }\n}\n",
         {("A", "struct", 3, 3), ("A.new", "method", 6, 8)}),
        ("src/C.java", "package com.x;\n\npublic class C {\n  void m() {\n  }\n}\n",
         {("C", "class", 3, 6), ("C.m", "method", 4, 5)}),
        ("lib/util.js", "function a() {}\nclass B {\n  c() {}\n}\n",
         {("a", "function", 1, 1), ("B", "class", 2, 4), ("B.c", "method", 3, 3)}),
    ],
)  # fmt: skip
def test_other_language_outlines(rel: str, source: str, expected: set[tuple[str, str, int, int]]) -> None:
    lang = {"go": "go", "rs": "rust", "java": "java", "js": "javascript"}[rel.rsplit(".", 1)[1]]
    pytest.importorskip(f"tree_sitter_{lang}")
    out = outline(source, rel, lang)
    assert out.parser == "tree-sitter"
    assert {(s.name, s.kind, s.line_start, s.line_end) for s in out.symbols} == expected


def test_ast_fallback_agrees_with_tree_sitter() -> None:
    pytest.importorskip("tree_sitter_python")
    ts = outline(SHAPES_PY, "src/shapes/geometry.py", "python")
    fallback = _ast_outline.outline(SHAPES_PY, "shapes.geometry")
    brief = [(s.name, s.kind, s.line_start, s.line_end, s.signature, s.doc) for s in ts.symbols]
    assert brief == [(s.name, s.kind, s.line_start, s.line_end, s.signature, s.doc) for s in fallback.symbols]
    assert ts.imports == fallback.imports


def test_without_grammars_python_falls_back_to_ast(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_symbols, "_parser", lambda grammar: None)
    src = capture_repo(repo)
    modules = {m["path"]: m for m in _code_modules(src)}
    geo = modules["src/shapes/geometry.py"]
    assert geo["parser"] == "ast"
    assert [(f["name"], f["line_start"], f["line_end"]) for f in geo["functions"]] == [
        ("Circle.area", 12, 15),
        ("unit_circle", 18, 20),
        ("total_area", 23, 25),
    ]
    assert "web/app.ts" not in modules and "web/app.ts" in _paths(src, "code_index")


def test_unknown_language_degrades_without_error() -> None:
    out = outline("const x = 1;\n", "a.zig", "zig")
    assert out.module == "a" and out.parser in ("none", "tree-sitter")


NESTED_PY = '''def render(code: str) -> list[str]:
    """Render code."""
    if code:

        def tokenize() -> list[str]:
            """Split tokens to one per line."""

            def deeper() -> None:
                """Deeper still."""

            return []

    def undocumented() -> None:
        pass

    class Local:
        """A local class."""

        def method(self) -> None:
            """Its method."""

    return tokenize()
'''


def test_documented_nested_definitions_are_outlined() -> None:
    """A definition inside a function body is outlined when it has a docstring (a purpose of its
    own), named by its enclosing function; the undocumented ones stay part of their function."""
    expected = [
        ("render", "function", 1, 22),
        ("render.tokenize", "function", 5, 11),
        ("render.tokenize.deeper", "function", 8, 9),
        ("render.Local", "class", 16, 20),
        ("render.Local.method", "method", 19, 20),
    ]
    fallback = _ast_outline.outline(NESTED_PY, "m")
    assert [(s.name, s.kind, s.line_start, s.line_end) for s in fallback.symbols] == expected
    assert fallback.symbols[1].doc == "Split tokens to one per line."
    pytest.importorskip("tree_sitter_python")
    ts = outline(NESTED_PY, "m.py", "python")
    brief = [(s.name, s.kind, s.line_start, s.line_end, s.signature, s.doc) for s in ts.symbols]
    assert brief == [(s.name, s.kind, s.line_start, s.line_end, s.signature, s.doc) for s in fallback.symbols]


def test_nested_js_functions_need_a_doc_comment() -> None:
    pytest.importorskip("tree_sitter_javascript")
    source = "function outer() {\n  /** Inner helper. */\n  function inner() {}\n  function plain() {}\n}\n"
    out = outline(source, "lib/a.js", "javascript")
    assert [(s.name, s.kind, s.doc) for s in out.symbols] == [
        ("outer", "function", ""),
        ("outer.inner", "function", "Inner helper."),
    ]
