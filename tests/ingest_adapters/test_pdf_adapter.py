"""pdf capture: pages as segments, and the ways a PDF can fail to yield text."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path

import pypdf
import pytest

from memory_substrate.ingest.adapters.errors import CaptureError
from memory_substrate.ingest.adapters.pdf import capture_pdf

MakePdf = Callable[..., bytes]


def _save(tmp_path: Path, data: bytes, name: str = "doc.pdf") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _encrypt(data: bytes, user_password: str) -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(data)))
    # RC4 needs no optional crypto library, so the test runs on any pypdf install.
    writer.encrypt(user_password=user_password, owner_password="owner-pw", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_pages_become_segments_with_page_locators(tmp_path: Path, make_pdf: MakePdf) -> None:
    data = make_pdf(["Quarterly report\nRevenue grew (a lot)", None, "Appendix page"], title="Q3 Report")
    path = _save(tmp_path, data)
    calls: list[tuple[int, int, str]] = []
    src = capture_pdf(path, progress=lambda d, t, p: calls.append((d, t, p)))
    assert src.kind == "pdf" and src.title == "Q3 Report"
    assert src.fingerprint == hashlib.sha256(data).hexdigest()
    assert [s.locator for s in src.segments] == [{"kind": "page", "page": 1}, {"kind": "page", "page": 3}]
    assert src.segments[0].text == "Quarterly report\nRevenue grew (a lot)"
    assert src.segments[1].text == "Appendix page"
    assert src.warnings == ["page 2 has no extractable text (scanned image or empty page?)"]
    assert src.payload["page_count"] == 3 and src.payload["pages_with_text"] == 2
    assert src.adapter_name == "pdf_adapter" and src.declared_transformations
    assert [c[0] for c in calls] == [1, 2, 3] and all(c[1] == 3 for c in calls)


def test_pdf_without_any_text_is_an_error(tmp_path: Path, make_pdf: MakePdf) -> None:
    with pytest.raises(CaptureError) as info:
        capture_pdf(_save(tmp_path, make_pdf([None, None])))
    assert info.value.code == "memory_capture_pdf_no_text"


def test_encrypted_pdf_is_refused(tmp_path: Path, make_pdf: MakePdf) -> None:
    path = _save(tmp_path, _encrypt(make_pdf(["top secret plans"]), user_password="pw"))
    with pytest.raises(CaptureError) as info:
        capture_pdf(path)
    assert info.value.code == "memory_capture_pdf_encrypted"
    # With the password the same file opens.
    assert capture_pdf(path, password="pw").segments[0].text == "top secret plans"


def test_owner_only_encryption_still_captures(tmp_path: Path, make_pdf: MakePdf) -> None:
    path = _save(tmp_path, _encrypt(make_pdf(["readable by anyone"]), user_password=""))
    src = capture_pdf(path)
    assert src.payload["encrypted"] is True
    assert src.segments[0].text == "readable by anyone"


@pytest.mark.parametrize(
    "data",
    [
        b"this is not a pdf at all",
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer\n<< >>\n%%EOF\n",
        b"%PDF-1.7\n" + bytes(range(256)) * 4,
    ],
)
def test_corrupt_pdf_is_refused(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(CaptureError) as info:
        capture_pdf(_save(tmp_path, data))
    assert info.value.code == "memory_capture_pdf_corrupt"


def test_truncated_pdf_is_corrupt_not_empty_success(tmp_path: Path, make_pdf: MakePdf) -> None:
    data = make_pdf(["some text here"])
    with pytest.raises(CaptureError) as info:
        capture_pdf(_save(tmp_path, data[: len(data) // 3]))
    assert info.value.code == "memory_capture_pdf_corrupt"


def test_long_page_is_split_into_parts(tmp_path: Path, make_pdf: MakePdf) -> None:
    lines = [f"Paragraph line {i} with several words of filler text" for i in range(120)]
    src = capture_pdf(_save(tmp_path, make_pdf(["\n".join(lines)])), max_segment_chars=1000)
    assert len(src.segments) > 1
    assert [s.locator for s in src.segments] == [
        {"kind": "page", "page": 1, "part": k} for k in range(1, len(src.segments) + 1)
    ]
    assert all(len(s.text) <= 1000 for s in src.segments)
    joined = "\n".join(s.text for s in src.segments)
    assert all(line in joined for line in lines)


def test_size_cap_and_tokens(tmp_path: Path, make_pdf: MakePdf) -> None:
    data = make_pdf(["key AKIAIOSFODNN7EXAMPLE here"])
    path = _save(tmp_path, data)
    with pytest.raises(CaptureError) as info:
        capture_pdf(path, max_bytes=100)
    assert info.value.code == "memory_capture_file_too_large"
    src = capture_pdf(path)
    assert "AKIAIOSFODNN7EXAMPLE" not in src.segments[0].text
    assert src.withheld[0]["kind"] == "aws_access_key" and src.withheld[0]["page"] == 1
