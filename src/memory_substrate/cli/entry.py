"""The ``memory-substrate`` script: a hook event goes straight to the hook runner, every other
command line to the click group (cli/main.py).

A hook runs on every prompt the user types, and through a running ``serve`` its memory work takes
about 30 ms; importing click and the group's modules would cost the prompt as much again. So a
command line of the shape the hooks that ``setup`` writes use (``hook CLIENT``, with ``--root``,
``--database-url`` or ``--embedder`` before or after) is read here, with the meaning the group
gives it, and anything else (help, an option this does not know, another word) goes to the
group, which answers it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory_substrate.cli.output_types import HookOverrides

# The group's global options a hook uses, with the environment variables that stand for them.
_VALUED = {
    "--root": ("root", "MEMORY_SUBSTRATE_ROOT"),
    "--database-url": ("database_url", "MEMORY_SUBSTRATE_DATABASE_URL"),
    "--embedder": ("embedder", "MEMORY_SUBSTRATE_EMBEDDER"),
    "--namespace": ("namespace", "MEMORY_SUBSTRATE_NAMESPACE"),  # hooks take the project's: ignored
}


def _options(words: list[str]) -> dict[str, str] | None:
    """The global options in ``words`` (``--root R`` or ``--root=R`` ...), or None for any other word."""
    given: dict[str, str] = {}
    while words:
        name, eq, value = words.pop(0).partition("=")
        if name not in _VALUED or _VALUED[name][0] in given:
            return None
        if not eq:
            if not words:
                return None
            value = words.pop(0)
        given[_VALUED[name][0]] = value
    return given


def hook_call(argv: list[str], environ: dict[str, str] | None = None) -> tuple[str, HookOverrides] | None:
    """``(client, overrides)`` for a plain hook command line, as the group would pass them to
    ``hooks.run.run``; None for any other command line."""
    env = os.environ if environ is None else environ
    try:
        at = argv.index("hook")
    except ValueError:
        return None
    before, after = _options(list(argv[:at])), _options(list(argv[at + 2 :]))
    if before is None or after is None or len(argv) < at + 2 or argv[at + 1].startswith("-"):
        return None
    # After the command, the group checks each value (cli/global_options.py) and refuses one it
    # cannot take: those few lines are left to it.
    if "namespace" in after:
        return None
    # A value after the command wins over one before it, which wins over its environment
    # variable; an empty variable is unset.
    values = {key: after.get(key) or before.get(key) or env.get(var) or None for key, var in _VALUED.values()}
    root: Path | None = None
    if values["root"] is not None:
        try:
            root = Path(values["root"]).expanduser()
        except RuntimeError:  # "~someone" for a user this machine does not have
            if "root" in after:
                return None  # refused by the group
            root = None  # before the command: the hooks' default root, as the group does
    overrides: HookOverrides = {
        "root": root,
        "namespace": None,
        "database_url": values["database_url"],
        "embedder": values["embedder"],
    }
    return argv[at + 1], overrides


def main() -> Any:
    call = hook_call(sys.argv[1:])
    if call is not None:
        # Before numpy loads, if it does (as the group does for a hook: cli/main.py).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from memory_substrate.hooks.run import run

        run(*call)  # never returns: the hook runner ends the process with exit 0
    from memory_substrate.cli.main import main as group

    return group()


if __name__ == "__main__":
    main()
