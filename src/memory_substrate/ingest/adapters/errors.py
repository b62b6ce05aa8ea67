"""The one error type adapters raise: a capture that could not produce evidence."""

from __future__ import annotations

from typing import Any

from memory_substrate.errors import MemorySubstrateError, NotAvailableError

# Stable codes; callers branch on these, so they never change meaning.
CAPTURE_ERROR_CODES = frozenset(
    {
        "not_found",
        "not_a_file",
        "not_a_directory",
        "binary_file",
        "undecodable_text",
        "file_too_large",
        "secret_file",
        "pdf_encrypted",
        "pdf_corrupt",
        "pdf_no_text",
        "web_invalid_url",
        "web_blocked_address",
        "web_fetch_failed",
        "web_too_large",
        "web_unsupported_content",
        "web_no_text",
    }
)


class CaptureError(MemorySubstrateError):
    """An adapter could not capture its input; ``code`` says why (see ``CAPTURE_ERROR_CODES``)."""

    code = "capture_error"

    def __init__(self, code: str, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details=details)
        # Per-instance code: one class, many stable reasons.
        self.code = code

    def __repr__(self) -> str:
        return f"CaptureError({self.code!r}, {self.message!r})"


def missing_dependency(package: str, feature: str) -> NotAvailableError:
    """The error for an adapter whose library is not installed; it names what to install."""
    return NotAvailableError(
        f"{feature} needs the '{package}' package: pip install {package}",
        details={"package": package},
    )
