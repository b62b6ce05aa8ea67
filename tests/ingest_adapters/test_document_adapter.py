"""file / markdown capture: segments, locators, fingerprints and typed refusals."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from memory_substrate.errors import MemorySubstrateError
from memory_substrate.ingest.adapters.document import capture_file, capture_markdown
from memory_substrate.ingest.adapters.errors import CaptureError

Put = Callable[[str, str | bytes], Path]
GH_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

DOC = f"""---
title: "Release Guide"
---
# Releasing

Steps follow.

## Tokens

Use the CI secret, never {GH_TOKEN} in files.
"""


def test_markdown_capture_segments_and_metadata(put: Put) -> None:
    path = put("docs/release.md", DOC)
    src = capture_markdown(path)
    assert src.kind == "markdown"
    assert src.title == "Release Guide"
    assert src.uri == str(path.resolve())
    assert src.fingerprint == hashlib.sha256(path.read_bytes()).hexdigest()
    assert src.adapter_name == "markdown_adapter"
    assert "document_chunker.v1" in src.declared_transformations
    assert src.origin_classification == "local_file"
    kinds = [s.metadata["chunk_kind"] for s in src.segments]
    assert kinds == ["frontmatter", "section", "section"]
    tokens = src.segments[2]
    assert tokens.locator == {
        "kind": "line",
        "path": str(path.resolve()),
        "line_start": 8,
        "line_end": 10,
        "heading_path": ["Releasing", "Tokens"],
    }
    assert src.payload["line_count"] == 10


def test_markdown_token_is_redacted_and_reported(put: Put) -> None:
    path = put("guide.md", DOC)
    src = capture_markdown(path)
    joined = "\n".join(s.text for s in src.segments)
    assert GH_TOKEN not in joined
    assert "[REDACTED:github_token]" in joined
    assert src.withheld == [
        {"path": str(path.resolve()), "reason": "secret_redacted", "kind": "github_token", "line": 10}
    ]
    # The fingerprint still tracks the real file, so a changed token means a changed source.
    assert src.fingerprint == hashlib.sha256(path.read_bytes()).hexdigest()


def test_capture_file_plain_text_and_markdown_by_suffix(put: Put) -> None:
    txt = put("notes.txt", "alpha\nbeta\n\ngamma\n")
    src = capture_file(txt)
    assert src.kind == "file" and src.title == "notes.txt"
    assert [(s.locator["line_start"], s.locator["line_end"]) for s in src.segments] == [(1, 4)]
    assert src.segments[0].metadata["chunk_kind"] == "paragraph"
    md = capture_file(put("readme.md", "# Hello\nworld\n"))
    assert md.kind == "file" and md.title == "Hello"
    assert md.segments[0].locator["heading_path"] == ["Hello"]


def test_empty_file_captures_with_warning(put: Put) -> None:
    src = capture_file(put("empty.txt", ""))
    assert src.segments == [] and src.warnings


@pytest.mark.parametrize(
    ("name", "content", "code"),
    [
        ("blob.txt", b"abc\x00\x01\x02", "binary_file"),
        ("latin.txt", "caf\xe9".encode("latin-1"), "undecodable_text"),
        (".env", "API_KEY=abc\n", "secret_file"),
        (".env.production", "API_KEY=abc\n", "secret_file"),
        (
            "server.pem",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n",
            "secret_file",
        ),
    ],
)
def test_refusals_are_typed(put: Put, name: str, content: str | bytes, code: str) -> None:
    path = put(name, content)
    with pytest.raises(CaptureError) as info:
        capture_file(path)
    assert info.value.reason == code and info.value.code == f"memory_capture_{code}"
    assert isinstance(info.value, MemorySubstrateError)
    assert info.value.to_dict()["code"] == f"memory_capture_{code}"


def test_too_large_and_missing(put: Put, tmp_path: Path) -> None:
    path = put("big.txt", "x" * 2000)
    with pytest.raises(CaptureError) as info:
        capture_file(path, max_bytes=1000)
    assert info.value.code == "memory_capture_file_too_large"
    assert capture_file(path, max_bytes=5000).payload["size_bytes"] == 2000
    with pytest.raises(CaptureError) as info:
        capture_markdown(tmp_path / "nope.md")
    assert info.value.code == "memory_capture_not_found"
    with pytest.raises(CaptureError) as info:
        capture_file(tmp_path)
    assert info.value.code == "memory_capture_not_a_file"


def test_env_example_is_captured_but_its_tokens_are_not(put: Put) -> None:
    path = put(".env.example", "AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\nREGION=eu\n")
    src = capture_file(path)
    assert "AKIAABCDEFGHIJKLMNOP" not in src.segments[0].text
    assert "REGION=eu" in src.segments[0].text
    assert [w["kind"] for w in src.withheld] == ["aws_access_key"]


def test_utf8_bom_is_accepted(put: Put) -> None:
    src = capture_markdown(put("bom.md", b"\xef\xbb\xbf# Title\nbody\n"))
    assert src.title == "Title"
