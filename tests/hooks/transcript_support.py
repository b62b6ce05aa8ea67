"""Checks both transcript parsers' tests run on the recordings in tests/data/transcripts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_substrate.hooks.transcripts import Chunk, Turn

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
Reader = Callable[..., Chunk]


def contents(turns: list[Turn], kind: str | None = None) -> list[str]:
    return [t.content for t in turns if kind is None or t.metadata.get("kind") == kind]


def line_ends(path: Path) -> list[int]:
    data = path.read_bytes()
    return [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]


def assert_pieces_equal_whole(read: Reader, path: Path, tmp_path: Path) -> None:
    """Reading up to any line end, then on from the offset returned, gives the whole file's turns
    and metadata (the file as it grows under a hook that captures as it goes)."""
    whole = read(path)
    data = path.read_bytes()
    grown = tmp_path / path.name
    for end in line_ends(path):
        grown.write_bytes(data[:end])
        first = read(grown)
        assert first.end_offset == end
        grown.write_bytes(data)
        rest = read(grown, first.end_offset)
        assert first.turns + rest.turns == whole.turns, f"split at byte {end}"
        assert rest.meta == whole.meta, f"metadata read from byte {end}"
        assert rest.end_offset == len(data)


def assert_partial_line_left(read: Reader, path: Path, tmp_path: Path, line: dict[str, Any]) -> None:
    """A last line still being written is not consumed; once complete it is read from the offset."""
    data = path.read_bytes()
    encoded = json.dumps(line).encode()
    growing = tmp_path / path.name
    growing.write_bytes(data + encoded[: len(encoded) // 2])
    chunk = read(growing)
    assert chunk.end_offset == len(data)
    assert chunk.turns == read(path).turns
    growing.write_bytes(data + encoded + b"\n")
    more = read(growing, chunk.end_offset)
    assert more.end_offset == len(data) + len(encoded) + 1
    assert len(more.turns) == 1


def assert_bad_lines_skipped(read: Reader, path: Path, tmp_path: Path) -> None:
    """Unknown line types, corrupt JSON and non-object lines are passed over, and counted."""
    lines = path.read_bytes().splitlines(keepends=True)
    middle = len(lines) // 2
    noisy = tmp_path / path.name
    extra = [
        b'{"type":"a-line-type-from-a-later-version","payload":{"text":"never a turn"}}\n',
        b'{"type":"user","message":{"role":"user","content":"cut o\n',
        b"[1, 2, 3]\n",
        b"\n",
    ]
    noisy.write_bytes(b"".join(lines[:middle] + extra + lines[middle:]))
    chunk = read(noisy)
    assert chunk.turns == read(path).turns
    assert chunk.skipped == 3
    assert "never a turn" not in "\n".join(contents(chunk.turns))
