"""Reading one local file as text, with the checks every file adapter shares."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from memory_substrate.ingest.adapters.errors import CaptureError

# A NUL in the first block is how git and grep decide "binary"; text encodings never need one
# (UTF-16 files do, and are rare enough in source trees to be skipped as binary).
_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class TextFile:
    """A decoded text file and the hash of its exact bytes."""

    path: Path
    raw: bytes
    text: str
    sha256: str


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def read_bytes_checked(path: Path, max_bytes: int) -> bytes:
    """Read a regular file of at most ``max_bytes``.

    Raises ``CaptureError`` with ``not_found``, ``not_a_file`` or ``file_too_large``.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        raise CaptureError("not_found", f"no such file: {path}") from None
    except OSError as exc:
        raise CaptureError("not_found", f"cannot stat {path}: {exc.strerror}") from None
    if not path.is_file():
        raise CaptureError("not_a_file", f"not a regular file: {path}")
    if st.st_size > max_bytes:
        raise CaptureError(
            "file_too_large",
            f"{path} is {st.st_size} bytes, over the {max_bytes}-byte limit",
            details={"size_bytes": st.st_size, "max_bytes": max_bytes},
        )
    try:
        with open(path, "rb") as fh:
            # Read one byte past the cap: the file may have grown since stat.
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise CaptureError("not_found", f"cannot read {path}: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise CaptureError("file_too_large", f"{path} is over the {max_bytes}-byte limit")
    return data


def decode_text(data: bytes, label: str) -> str:
    """Decode UTF-8 text (BOM allowed). Raises ``CaptureError`` ``binary_file``/``undecodable_text``."""
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise CaptureError("binary_file", f"{label} looks binary (NUL byte)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CaptureError(
            "undecodable_text",
            f"{label} is not valid UTF-8 (byte {exc.start})",
            details={"offset": exc.start},
        ) from None


def read_text_file(path: Path, max_bytes: int) -> TextFile:
    """Read, size-check and decode a text file; raises ``CaptureError`` as the two helpers do."""
    raw = read_bytes_checked(path, max_bytes)
    return TextFile(path=path, raw=raw, text=decode_text(raw, os.fspath(path)), sha256=sha256_hex(raw))
