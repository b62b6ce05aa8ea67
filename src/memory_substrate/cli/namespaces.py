"""``memory-substrate namespace list | delete NAME``: see and remove whole namespaces.

Deletion removes every row of the namespace in every table of the store (objects, segments,
indexes, vectors, history, config, jobs, traces, tokens) in one transaction. It asks for
confirmation unless ``--yes`` is given, and the ``default`` namespace is protected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from memory_substrate.errors import ConflictError, MemorySubstrateError, NotFoundError

if TYPE_CHECKING:
    from memory_substrate.storage.base import Store

PROTECTED = frozenset({"default"})


def _open(ctx: click.Context) -> Store:
    from memory_substrate.cli.common import settings_of as _settings
    from memory_substrate.storage.factory import open_store

    return open_store(_settings(ctx))


@click.group()
def namespace() -> None:
    """List namespaces, or delete one with everything in it."""


@namespace.command(name="list")
@click.option("--table", is_flag=True, help="Print a table instead of JSON.")
@click.pass_context
def list_command(ctx: click.Context, table: bool) -> None:
    """Every namespace in the store with its object and segment counts."""
    from memory_substrate.cli.common import emit as _emit
    from memory_substrate.cli.common import fail as _fail
    from memory_substrate.cli.common import settings_of as _settings
    from memory_substrate.runtime import Runtime

    try:
        store = _open(ctx)
        try:
            rows = []
            for name in store.namespaces():
                with Runtime(store, name, _settings(ctx)).read_with_expired() as session:
                    objects = sum(n for *_, n in session.count_objects())
                    segments = session.count_segments()
                rows.append(
                    {
                        "namespace": name,
                        "objects": objects,
                        "segments": segments,
                        "protected": name in PROTECTED,
                    }
                )
        finally:
            store.close()
    except MemorySubstrateError as exc:
        _fail(exc)
        return
    if table:
        from rich.console import Console
        from rich.table import Table

        t = Table()
        for col in ("namespace", "objects", "segments", "protected"):
            t.add_column(col)
        for r in rows:
            t.add_row(*(str(r[c]) for c in ("namespace", "objects", "segments", "protected")))
        Console().print(t)
        return
    _emit({"namespaces": rows, "count": len(rows)})


@namespace.command(name="delete")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
@click.pass_context
def delete_command(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete namespace NAME and every row of it, in every table. Cannot be undone."""
    from memory_substrate.cli.common import emit as _emit
    from memory_substrate.cli.common import fail as _fail

    try:
        if name in PROTECTED:
            raise ConflictError(
                f"namespace {name!r} is protected and cannot be deleted", details={"namespace": name}
            )
        store = _open(ctx)
        try:
            if name not in store.namespaces():
                raise NotFoundError(f"namespace {name!r} not found", details={"namespace": name})
            if not yes and not click.confirm(
                f"Delete namespace {name!r} and everything in it?", default=False, err=True
            ):
                click.echo("aborted: nothing deleted", err=True)
                ctx.exit(1)
            counts = store.delete_namespace(name)
        finally:
            store.close()
    except MemorySubstrateError as exc:
        _fail(exc)
        return
    _emit(
        {"deleted": name, "rows": {k: v for k, v in counts.items() if v}, "total_rows": sum(counts.values())}
    )
