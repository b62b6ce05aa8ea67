"""The one error type adapters raise: a capture that could not produce evidence."""

from __future__ import annotations

from memory_substrate.errors import MemorySubstrateError, NotAvailableError
from memory_substrate.json_types import JsonObject

# Stable reasons; the error code is ``memory_capture_<reason>`` (see ``CAPTURE_CODE_PREFIX``), and
# the bare reason is what a repo capture reports for a file it skipped. Never change a meaning.
CAPTURE_CODE_PREFIX = "memory_capture_"
CAPTURE_REASONS = frozenset(
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


CAPTURE_ERROR_CODES = frozenset(CAPTURE_CODE_PREFIX + reason for reason in CAPTURE_REASONS)


class CaptureError(MemorySubstrateError):
    """An adapter could not capture its input.

    ``reason`` is the short stable cause (``not_found``, ``web_blocked_address``, ...); ``code`` is
    ``memory_capture_<reason>`` so that every error a client sees belongs to the ``memory_`` family.
    """

    code = "memory_capture_error"

    def __init__(self, reason: str, message: str, *, details: JsonObject | None = None) -> None:
        super().__init__(message, details={"reason": reason, **(details or {})})
        # Per-instance code: one class, many stable reasons.
        self.reason = reason
        self.code = CAPTURE_CODE_PREFIX + reason

    def __repr__(self) -> str:
        return f"CaptureError({self.reason!r}, {self.message!r})"


def missing_dependency(package: str, feature: str) -> NotAvailableError:
    """The error for an adapter whose library is not installed; it names what to install."""
    return NotAvailableError(
        f"{feature} needs the '{package}' package: pip install {package}",
        details={"package": package},
    )
