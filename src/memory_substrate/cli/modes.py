"""``memory-substrate modes``: the fields of each mode's input_data and options (docs/modes.md)."""

from __future__ import annotations

from typing import Any

import click


def tool_help(tool: str, what: str) -> str:
    """Help text of a tool command, with the modes the service lists today."""
    from memory_substrate.modes_reference import tool_modes

    modes = tool_modes()[f"memory_{tool}"][1]
    return (
        f"{what}\n\nMODE is one of: {', '.join(modes)}.\n\n"
        "INPUT_DATA is a JSON object, or @FILE to read it from a file, or @- for stdin (default {}). "
        f"`memory-substrate modes {tool} MODE` prints the fields of INPUT_DATA and --options for a mode "
        "(the same reference is docs/modes.md)."
    )


class ToolCommand(click.Command):
    """A tool command (``ingest``, ``query``...) whose help, which lists the modes, is made when shown.

    Listing the modes imports every service's declarations; a process that runs the command
    without asking for its help should not pay for that. Its one-line summary (in the group's
    help) is the first sentence of ``what``, as it is of the full help.
    """

    def __init__(self, *args: Any, tool: str, what: str, **kwargs: Any) -> None:
        self._tool, self._what = tool, what
        self._help: str | None = None
        super().__init__(*args, **kwargs)

    @property
    def help(self) -> str:
        if self._help is None:
            self._help = tool_help(self._tool, self._what)
        return self._help

    @help.setter
    def help(self, value: str | None) -> None:
        self._help = value

    def get_short_help_str(self, limit: int = 45) -> str:
        if self.short_help:
            return super().get_short_help_str(limit)
        return click.Command(self.name, help=self._what).get_short_help_str(limit)


@click.command(name="modes")
@click.argument("tool", required=False, type=click.Choice(["ingest", "query", "remember", "maintain"]))
@click.argument("mode", required=False)
def modes_command(tool: str | None, mode: str | None) -> None:
    """Print the input_data and options fields of every mode (of TOOL, or of one MODE), as Markdown."""
    from memory_substrate.modes_reference import collect, render, render_mode

    entries = collect()
    if tool is None:
        click.echo(render(entries))
        return
    chosen = [e for e in entries if e.tool == f"memory_{tool}" and (mode is None or e.mode == mode)]
    if not chosen:
        known = ", ".join(e.mode for e in entries if e.tool == f"memory_{tool}")
        raise click.UsageError(f"{tool} has no mode {mode!r}; modes: {known}")
    for entry in chosen:
        click.echo("\n".join(render_mode(entry, level="##")) + "\n")
