"""Shared builders for adapter tests: files in tmp_path, hand-made PDFs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def write(root: Path, rel: str, content: str | bytes) -> Path:
    """Write ``content`` at ``root/rel``, creating parent folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str | None], title: str | None = None) -> bytes:
    """A minimal valid PDF: one Helvetica text line per input line; ``None`` makes a blank page."""
    kids = [4 + 2 * i for i in range(len(pages))]
    objs: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, text in enumerate(pages):
        objs.append(
            (
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
            ).encode()
        )
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        ops += [f"({_pdf_escape(line)}) Tj T*" for line in (text.split("\n") if text else [])]
        stream = "\n".join([*ops, "ET"]).encode("latin-1") if text else b""
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info_ref = ""
    if title:
        objs.append(f"<< /Title ({_pdf_escape(title)}) >>".encode("latin-1"))
        info_ref = f" /Info {len(objs)} 0 R"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R{info_ref} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


@pytest.fixture(name="make_pdf")
def make_pdf_fixture() -> Callable[..., bytes]:
    """The hand-made PDF builder."""
    return make_pdf


@pytest.fixture
def put(tmp_path: Path) -> Callable[[str, str | bytes], Path]:
    """Write a file under ``tmp_path``: ``put("a/b.md", "text")``."""
    return lambda rel, content: write(tmp_path, rel, content)
