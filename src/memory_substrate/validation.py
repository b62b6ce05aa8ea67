"""Strict input models: unknown fields fail with "Extra inputs are not permitted"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from memory_substrate.errors import ValidationError

M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def describe(err: PydanticValidationError, prefix: str) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(p) for p in (prefix, *e["loc"]) if p != "")
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


# Set only while the mode reference is derived (modes_reference.py): told of every model parsed.
_observer: Callable[[type[BaseModel], str], Any] | None = None


def parse(model: type[M], data: Any, prefix: str) -> M:
    """Validate ``data`` into ``model`` or raise ``ValidationError`` naming each failing field."""
    if _observer is not None:
        observed = _observer(model, prefix)
        if observed is not None:
            return cast(M, observed)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValidationError(f"{prefix} must be an object")
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        raise ValidationError(describe(exc, prefix), details={"errors": exc.errors(include_url=False, include_input=False)}) from None


class NoOptions(Strict):
    """Modes that take no options."""
