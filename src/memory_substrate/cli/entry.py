"""The ``memory-substrate`` script: a hook event goes straight to the hook runner, every other
command line to the click group (cli/main.py).

A hook runs on every prompt the user types, and through a running ``serve`` its memory work takes
about 30 ms; importing click and the group's modules would cost the prompt as much again. So a
command line of the one shape the hooks that ``setup`` writes use (``[--root R]
[--database-url U] [--embedder E] hook CLIENT``) is read here, with the same meaning the group
gives it, and anything else (help, an option this does not know, a word after the client) goes
to the group, which answers it as before.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

# The group's global options a hook uses, with the environment variables that stand for them.
_VALUED = {
    "--root": ("root", "MEMORY_SUBSTRATE_ROOT"),
    "--database-url": ("database_url", "MEMORY_SUBSTRATE_DATABASE_URL"),
    "--embedder": ("embedder", "MEMORY_SUBSTRATE_EMBEDDER"),
    "--namespace": ("namespace", "MEMORY_SUBSTRATE_NAMESPACE"),  # hooks take the project's: ignored
}


def hook_call(argv: list[str], environ: dict[str, str] | None = None) -> tuple[str, dict[str, Any]] | None:
    """``(client, overrides)`` for a plain hook command line, as the group would pass them to
    ``hooks.run.run``; None for any other command line."""
    env = os.environ if environ is None else environ
    given: dict[str, str] = {}
    words = list(argv)
    while words and words[0].startswith("-"):
        name, eq, value = words.pop(0).partition("=")
        if name not in _VALUED:
            return None
        if not eq:
            if not words:
                return None
            value = words.pop(0)
        given[_VALUED[name][0]] = value
    if len(words) != 2 or words[0] != "hook" or words[1].startswith("-"):
        return None
    # A command-line value wins over its environment variable; an empty variable is unset.
    values = {key: given.get(key) or env.get(var) or None for key, var in _VALUED.values()}
    root: Path | None = None
    if values["root"] is not None:
        try:
            root = Path(values["root"]).expanduser()
        except RuntimeError:  # "~someone" for a user this machine does not have: the default root
            root = None
    overrides = {
        "root": root,
        "namespace": None,
        "database_url": values["database_url"],
        "embedder": values["embedder"],
    }
    return words[1], overrides


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
