"""The graph toolset's response envelope and error codes.

Success: ``{"success": true, ...}``. Error: ``{"success": false, "error": message,
"error_code": code}``; the spec's validation example names the key ``code``, so both keys carry
the code. Every exception is caught at the tool boundary: domain errors keep their message;
anything unexpected is logged here with its traceback and the client gets a short message with
an incident id to find that log line, never the traceback.
"""

from __future__ import annotations

import logging
import uuid

from memory_substrate.errors import MemorySubstrateError, NotFoundError, StorageError, ValidationError
from memory_substrate.json_types import JsonObject

VALIDATION = "memory_validation_error"
NOT_FOUND = "memory_not_found"
SERVICE = "memory_service_error"
CONNECTION = "connection_error"
ERROR_CODES = (VALIDATION, NOT_FOUND, SERVICE, CONNECTION, "falkordb_error")

log = logging.getLogger("memory_substrate.graphmem")


class ConnectionFailed(MemorySubstrateError):
    """The store could not be reached."""

    code = CONNECTION


def ok(**body: object) -> JsonObject:
    return {"success": True, **body}


def fail(message: str, code: str) -> JsonObject:
    return {"success": False, "error": message, "error_code": code, "code": code}


def code_of(exc: MemorySubstrateError) -> str:
    if isinstance(exc, ValidationError):
        return VALIDATION
    if isinstance(exc, NotFoundError):
        return NOT_FOUND
    if isinstance(exc, ConnectionFailed):
        return CONNECTION
    if isinstance(exc, StorageError):
        return SERVICE
    # Conflicts and duplicates are requests that cannot be done as asked: invalid input here.
    # An ambiguous short id (ids.py) too: the message names the objects it matches.
    return (
        VALIDATION if exc.code in ("memory_conflict", "memory_duplicate", "memory_ambiguous_id") else SERVICE
    )


def from_exception(exc: BaseException, tool: str) -> JsonObject:
    if isinstance(exc, MemorySubstrateError):
        return fail(exc.message, code_of(exc))
    incident = uuid.uuid4().hex[:12]
    log.error("graph tool %s failed (incident %s)", tool, incident, exc_info=exc)
    return fail(
        f"{tool} failed: internal error {type(exc).__name__} (incident {incident}, see server log)", SERVICE
    )
