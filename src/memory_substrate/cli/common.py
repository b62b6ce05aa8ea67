"""What every command module of the CLI shares: settings from the global options, opening a
``Memory``, reading JSON arguments, printing results and failing with the right exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memory_substrate.errors import MemorySubstrateError, ValidationError
from memory_substrate.json_types import JsonObject

if TYPE_CHECKING:
    from memory_substrate.app import Memory
    from memory_substrate.settings import Settings

EXIT_VALIDATION = 2
EXIT_ERROR = 1


def settings_of(ctx: click.Context) -> Settings:
    from memory_substrate.settings import Settings

    overrides = {k: v for k, v in ctx.obj.items() if v is not None}
    return Settings(**overrides)


def open_memory(ctx: click.Context) -> Memory:
    """The store of a one-shot command. Such a process ends when its command does, so no
    background worker of its own would live on to make the vectors a capture defers
    (graph/deferred.py): it makes every vector during capture (``serve`` keeps the worker)."""
    from memory_substrate.app import Memory

    settings = settings_of(ctx)
    if "embed_in_background" not in settings.model_fields_set:
        settings = settings.model_copy(update={"embed_in_background": False})
    return Memory(settings)


def load_json(value: str | None, what: str) -> JsonObject:
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


def _table_rows(result: Mapping[str, object]) -> list[tuple[str, str, str]] | None:
    """(id, kind, text) per entry of a list answer: its items, or a compact segment search's lines
    (id ``SOURCE_ID#seg-N``). None when the answer has no list to show."""
    sources, items = result.get("sources"), result.get("items")
    if isinstance(sources, list):
        rows = []
        for source in sources:
            for line in source.get("lines", []):
                number, _, text = str(line).partition(" ")
                ref = f"{source['id']}#seg-{number}" if number.isdigit() else str(source["id"])
                rows.append((ref, str(source.get("kind", "conversation")), text))
        return rows
    if isinstance(items, list):
        rows = []
        for item in items:
            ref = item.get("id") or f"{item.get('source_id', '')}#{item.get('segment_id', '')}"
            kind = " ".join(str(item[k]) for k in ("kind", "status") if item.get(k))
            rows.append((str(ref), kind, str(item.get("title") or item.get("excerpt") or "")))
        return rows
    return None


def emit(result: object, table: bool = False) -> None:
    rows = _table_rows(result) if table and isinstance(result, dict) else None
    if rows is not None:
        from rich.console import Console
        from rich.table import Table

        # Ids are shown whole (never cut with an ellipsis) so they can be copied into the next
        # command; the text column wraps in what is left of the terminal.
        t = Table(show_lines=False)
        t.add_column("id", no_wrap=True, min_width=max((len(r[0]) for r in rows), default=2))
        t.add_column("kind")
        t.add_column("title / text", overflow="fold")
        for row in rows:
            t.add_row(*row)
        Console().print(t)
        return
    click.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))


def emit_outcome(result: object, table: bool = False) -> None:
    """``emit``, for a tool's result: one whose work failed (``status`` ``failed`` or ``partial``)
    is said first, as ``error [CODE]: ...`` on stderr, and exits 1 after its JSON is printed."""
    status = result.get("status") if isinstance(result, dict) else None
    if status in ("failed", "partial") and isinstance(result, dict):  # a status is only read from a dict
        error = result.get("error") or {}
        click.echo(
            f"error [{error.get('code', 'memory_error')}]: {status}: {error.get('message', '')}", err=True
        )
    emit(result, table)
    if status in ("failed", "partial"):
        sys.exit(EXIT_ERROR)


def fail(exc: MemorySubstrateError) -> None:
    click.echo(f"error [{exc.code}]: {exc.message}", err=True)
    sys.exit(EXIT_VALIDATION if isinstance(exc, ValidationError) else EXIT_ERROR)
