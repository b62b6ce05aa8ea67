"""One exception family with stable codes, shared by every surface."""

from __future__ import annotations

from memory_substrate.json_types import JsonObject


class MemorySubstrateError(Exception):
    """Base error. ``code`` is stable and machine-readable; ``details`` is JSON-safe."""

    code = "memory_error"

    def __init__(self, message: str, *, details: JsonObject | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: JsonObject = details or {}

    def to_dict(self) -> JsonObject:
        return {"code": self.code, "message": self.message, "details": self.details}


class ValidationError(MemorySubstrateError, ValueError):
    """Input failed validation; nothing was written."""

    code = "memory_validation_error"


class UnsupportedModeError(ValidationError):
    """The mode is not one the tool accepts."""

    code = "memory_unsupported_mode"


class NotFoundError(MemorySubstrateError, LookupError):
    """A referenced object does not exist in this namespace. The message names the id."""

    code = "memory_not_found"


class AmbiguousIdError(MemorySubstrateError, LookupError):
    """A short id (ids.py) names several objects of this namespace; ``details.matches`` lists
    their full ids. Nothing was read or written under it."""

    code = "memory_ambiguous_id"


class DuplicateError(MemorySubstrateError):
    """An exact structured duplicate of an existing claim."""

    code = "memory_duplicate"


class EvidenceError(ValidationError):
    """An evidence ref points at a missing source/segment or mismatches its locator/hash."""

    code = "memory_evidence_error"


class ConflictError(MemorySubstrateError):
    """The requested lifecycle transition is not allowed from the object's current state."""

    code = "memory_conflict"


class NotAvailableError(MemorySubstrateError):
    """The mode or backend exists in the contract but is not available in this build or install."""

    code = "memory_not_available"


class BatchEntryError(MemorySubstrateError):
    """One entry of an atomic batch failed; nothing from the batch was written."""

    code = "memory_batch_failed"


class RateLimitedError(MemorySubstrateError):
    """This namespace already has as much slow work (captures, extraction, reindex) running and
    waiting as the server admits; nothing was done. Retry when some of it has finished."""

    code = "memory_rate_limited"


class ForbiddenError(MemorySubstrateError):
    """The caller's bearer token does not reach the namespace it asked for."""

    code = "memory_forbidden"


class StorageError(MemorySubstrateError):
    """The store could not complete an operation."""

    code = "memory_storage_error"


class BackendError(MemorySubstrateError):
    """A derived backend (FalkorDB, Kùzu, LanceDB) failed; canonical data is unaffected."""

    code = "memory_backend_error"
