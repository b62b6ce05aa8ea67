"""Commands imported on first use, so that a command loads only its own module.

A process runs one command, and some commands (``hook``, run on every prompt of an agent) must
start in a fraction of a second; importing every command's module for each run would load the
compiler, the settings and numpy whichever command runs. A group's ``commands`` is therefore a
mapping that holds a ``"module:attribute"`` name for each lazy command and imports it the first
time the command is looked up (click's own lazy-loading pattern, kept behind the same
``group.commands`` mapping so that anything reading it sees every command).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from importlib import import_module

import click

Prepare = Callable[[click.Command], None]


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands: loaded ones, and ones named by ``module:attribute`` until first looked up.

    ``prepare`` callbacks run once on every command as it is first handed out (a lazy one once
    imported), so that what a group adds to its commands applies to lazy ones too.
    """

    def __init__(self) -> None:
        self._commands: dict[str, click.Command] = {}
        self._specs: dict[str, str] = {}
        self._prepared: set[str] = set()
        self._prepare: list[Prepare] = []

    def add_lazy(self, name: str, spec: str) -> None:
        if ":" not in spec:
            raise ValueError(f"a lazy command is named 'module:attribute', not {spec!r}")
        self._commands.pop(name, None)
        self._prepared.discard(name)
        self._specs[name] = spec

    def add_prepare(self, prepare: Prepare) -> None:
        """Run ``prepare`` on each command when first handed out (at once on those already handed out)."""
        self._prepare.append(prepare)
        for name in self._prepared:
            prepare(self._commands[name])

    def _load(self, name: str) -> click.Command:
        module, _, attribute = self._specs.pop(name).partition(":")
        command = getattr(import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module}:{attribute} is not a click command")
        self._commands[name] = command
        return command

    def __getitem__(self, name: str) -> click.Command:
        command = self._load(name) if name in self._specs else self._commands[name]
        if name not in self._prepared:
            self._prepared.add(name)
            for prepare in self._prepare:
                prepare(command)
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._specs.pop(name, None)
        self._prepared.discard(name)
        self._commands[name] = command

    def __delitem__(self, name: str) -> None:
        if self._specs.pop(name, None) is None:
            del self._commands[name]
        self._prepared.discard(name)

    def __iter__(self) -> Iterator[str]:
        # A snapshot: walking the items loads lazy commands, which moves them between the two.
        return iter([*self._commands, *self._specs])

    def __len__(self) -> int:
        return len(self._commands) + len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._commands or name in self._specs


class LazyGroup(click.Group):
    """A click group whose commands may be registered by name and imported when first used."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        commands = LazyCommands()
        for name, command in self.commands.items():
            commands[name] = command
        self.commands = commands

    def lazy(self, name: str, spec: str) -> None:
        """Register the command ``name`` as ``"module:attribute"``, imported when first used."""
        assert isinstance(self.commands, LazyCommands)
        self.commands.add_lazy(name, spec)
