"""What a short command imports: `--version` and `--help` load no compiler, settings or numpy,
and a lazily registered command loads its own module only (cli/lazy.py). Timings are a
benchmark (bench/cli_startup_bench.py), not asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

import click
import pytest

from memory_substrate.cli.lazy import LazyCommands, LazyGroup

HEAVY = (
    "numpy",
    "pydantic",
    "pydantic_settings",
    "memory_substrate.app",
    "memory_substrate.compiler",
    "memory_substrate.settings",
    "memory_substrate.runtime",
    "memory_substrate.storage.sqlite",
    "mcp",
)

PROBE = """
import json, sys
from memory_substrate.cli.main import main
try:
    main(sys.argv[1:], prog_name="memory-substrate")
except SystemExit:
    pass
print("\\n@@" + json.dumps(sorted(sys.modules)))
"""


def _modules_after(*args: str) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    output, _, modules = done.stdout.rpartition("\n@@")
    return output, set(json.loads(modules))


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["-h"]])
def test_short_commands_import_nothing_heavy(args: list[str]) -> None:
    output, modules = _modules_after(*args)
    assert output.strip()
    assert not modules.intersection(HEAVY), sorted(modules.intersection(HEAVY))
    # --help lists every command without importing what any of them runs.
    if args != ["--version"]:
        for name in ("serve", "query", "token", "namespace", "inspect", "import-from", "contracts", "modes"):
            assert f"\n  {name} " in output


def test_version_is_the_packages() -> None:
    output, modules = _modules_after("--version")
    assert output.strip() == f"memory-substrate, version {version('memory-substrate')}"
    assert "importlib.metadata" not in modules


def test_a_command_loads_its_own_module_only() -> None:
    output, modules = _modules_after("token", "--help")
    assert "memory_substrate.cli.tokens" in modules and "Manage bearer tokens" in output
    assert (
        "memory_substrate.cli.namespaces" not in modules and "memory_substrate.cli.contracts" not in modules
    )
    assert not modules.intersection(HEAVY)


def test_a_tool_commands_help_still_lists_its_modes() -> None:
    output, _ = _modules_after("query", "--help")
    assert "MODE is one of:" in output and "context" in output


def test_lazy_commands_get_what_the_group_prepares_once_loaded() -> None:
    @click.group(cls=LazyGroup)
    def group() -> None:
        """A group."""

    @group.command()
    def eager() -> None:
        """Defined here."""

    group.lazy("lazy-one", "memory_substrate.cli.modes:modes_command")
    seen: list[str] = []
    assert isinstance(group.commands, LazyCommands)
    group.commands.add_prepare(lambda command: seen.append(str(command.name)))
    assert seen == [] and sorted(group.commands) == ["eager", "lazy-one"] and "lazy-one" in group.commands
    assert (
        group.commands["lazy-one"].name == "modes"
        and group.commands["lazy-one"] is group.commands["lazy-one"]
    )
    assert group.commands["eager"].name == "eager"
    assert seen == ["modes", "eager"]  # each prepared once, when first handed out
    group.lazy("broken", "memory_substrate.cli.modes:tool_help")
    with pytest.raises(TypeError, match="not a click command"):
        group.commands["broken"]
