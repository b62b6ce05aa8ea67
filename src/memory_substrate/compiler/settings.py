"""Compile settings may come in ``input_data`` or ``options``; this merges them into one request."""

from __future__ import annotations

from dataclasses import dataclass

from memory_substrate.compiler.inputs import ContextInput, ContextOptions
from memory_substrate.errors import ValidationError

DEFAULT_TOKEN_BUDGET = 4096  # per-namespace budget unless configured
FIELDS = ("model", "format", "budget_tokens", "task_class")


@dataclass(frozen=True)
class CompileRequest:
    model: str | None
    format: str | None
    budget_tokens: int | None
    task_class: str | None


def resolve(data: ContextInput, opts: ContextOptions) -> CompileRequest:
    """One value per setting; raises ``ValidationError`` if input_data and options disagree."""
    values = {}
    for name in FIELDS:
        a, b = getattr(data, name), getattr(opts, name)
        if a is not None and b is not None and a != b:
            raise ValidationError(
                f"{name} given twice with different values (input_data {a!r}, options {b!r})",
                details={"field": name},
            )
        values[name] = b if b is not None else a
    return CompileRequest(**values)
