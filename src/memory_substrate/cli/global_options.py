"""The global options (``--root``, ``--namespace``, ``--database-url``, ``--embedder``) are
accepted after the subcommand too: ``memory-substrate ingest conversation ... --namespace x``
means what ``memory-substrate --namespace x ingest conversation ...`` does.

Click reads a group's options only before the subcommand's name, so each command gets a copy
of them that writes into the same settings the group's callback made (``ctx.obj``). A value
given after the subcommand wins over one given before it or in the environment. A command with
an option of its own under the same name (``token create --namespace``) keeps its meaning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

GLOBAL_PARAMS = ("root", "namespace", "database_url", "embedder")


def checked(name: str, value: Any) -> Any:
    """A global option's value as the settings take it; ``click.BadParameter`` when it cannot be."""
    if value is None:
        return None
    if name == "root":
        try:
            return Path(value).expanduser()
        except RuntimeError as exc:  # "~someone" for a user this machine does not have
            raise click.BadParameter(str(exc), param_hint="--root") from None
    if name == "namespace":
        from memory_substrate.validation import is_namespace, namespace_problem

        if not is_namespace(str(value)):  # the one rule of every surface (validation.py)
            raise click.BadParameter(namespace_problem(str(value)), param_hint="--namespace")
    return value


def _store(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is None or param.name is None:
        return
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    root.obj[param.name] = checked(param.name, value)


def _copy(option: click.Option) -> click.Option:
    return click.Option(
        option.opts,
        type=option.type,
        default=None,
        expose_value=False,
        callback=_store,
        help=f"{option.help} Global: also accepted before the command.",
    )


def accept_after_subcommands(group: click.Group) -> None:
    """Give every command under ``group`` (recursively) a copy of the group's global options.

    A command registered lazily (cli/lazy.py) gets them when it is first loaded, so that this
    imports no command's module."""
    from memory_substrate.cli.lazy import LazyCommands

    globals_ = [p for p in group.params if isinstance(p, click.Option) and p.name in GLOBAL_PARAMS]
    if isinstance(group.commands, LazyCommands):
        group.commands.add_prepare(lambda command: _add_to(command, globals_))
        return
    _add(group, globals_)


def _add(group: click.Group, options: list[click.Option]) -> None:
    for command in group.commands.values():
        _add_to(command, options)


def _add_to(command: click.Command, options: list[click.Option]) -> None:
    if isinstance(command, click.Group):
        _add(command, options)
        return
    taken = {opt for p in command.params for opt in getattr(p, "opts", [])}
    command.params.extend(_copy(o) for o in options if not taken.intersection(o.opts))
