"""``memory-substrate modes``: the fields of each mode's input_data and options (docs/modes.md)."""

from __future__ import annotations

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
