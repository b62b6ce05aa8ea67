"""What every command module of the CLI shares: settings from the global options, opening a
``Memory``, reading JSON arguments, printing results and failing with the right exit code."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from memory_substrate.errors import MemorySubstrateError, ValidationError

EXIT_VALIDATION = 2
EXIT_ERROR = 1


def settings_of(ctx: click.Context) -> Any:
    from memory_substrate.settings import Settings

    overrides = {k: v for k, v in ctx.obj.items() if v is not None}
    return Settings(**overrides)


def open_memory(ctx: click.Context) -> Any:
    from memory_substrate.app import Memory

    return Memory(settings_of(ctx))


def load_json(value: str | None, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    text = value
    if value.startswith("@"):
        try:
            text = sys.stdin.read() if value == "@-" else Path(value[1:]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ValidationError(f"{what}: cannot read {value[1:] or 'stdin'}: {reason}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValidationError(f"{what} must be a JSON object")
    return data


def emit(result: Any, table: bool = False) -> None:
    if table and isinstance(result, dict) and isinstance(result.get("items"), list):
        from rich.console import Console
        from rich.table import Table

        t = Table(show_lines=False)
        for col in ("id", "object_type", "kind", "status", "title"):
            t.add_column(col)
        for item in result["items"]:
            t.add_row(*(str(item.get(c, item.get("segment_id", ""))) for c in ("id", "object_type", "kind", "status", "title")))
        Console().print(t)
        return
    click.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))


def fail(exc: MemorySubstrateError) -> None:
    click.echo(f"error [{exc.code}]: {exc.message}", err=True)
    sys.exit(EXIT_VALIDATION if isinstance(exc, ValidationError) else EXIT_ERROR)
