"""`memory-substrate contracts ...`: validate and pack portable-contract documents. Opens no store.

Exit codes: 0 valid (warnings allowed), 1 invalid (diagnostics printed), 2 usage error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import click

from memory_substrate.json_types import JsonObject

if TYPE_CHECKING:
    from memory_substrate.app import Memory
    from memory_substrate.contracts.diagnostics import Diagnostic
    from memory_substrate.errors import MemorySubstrateError
    from memory_substrate.settings import Settings

EXIT_INVALID = 1

FileArg = click.Path(exists=True, dir_okay=False, path_type=Path)
JSON_HELP = "Print a JSON document (valid, diagnostics, counts) instead of text."


class ReportExtra(TypedDict, total=False):
    counts: dict[str, int]  # a graph snapshot's nodes, edges and events


def _diag_line(diag: Mapping[str, object], file: str) -> str:
    where = diag.get("file") or file
    return f"{where}:{diag['path']}: {diag['severity']} [{diag['code']}] {diag['message']}"


def _report(
    file: Path,
    contract: str,
    diagnostics: list[Diagnostic],
    as_json: bool,
    extra: ReportExtra | None = None,
) -> None:
    from memory_substrate.contracts.diagnostics import has_errors
    from memory_substrate.contracts.vocab import CONTRACTS

    valid = not has_errors(diagnostics)
    found = [d.to_dict() for d in diagnostics]
    if as_json:
        doc = {
            "file": str(file),
            "contract": CONTRACTS[contract],
            "valid": valid,
            "diagnostics": found,
            **(extra or {}),
        }
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True))
    else:
        for diag in found:
            click.echo(_diag_line(diag, str(file)))
        counts = ", ".join(f"{v} {k}" for k, v in (extra or {}).get("counts", {}).items())
        verdict = "valid" if valid else "invalid"
        click.echo(f"{file}: {verdict} {CONTRACTS[contract]}" + (f" ({counts})" if counts else ""))
    if not valid:
        sys.exit(EXIT_INVALID)


def _validate_file(file: Path, contract: str, as_json: bool) -> None:
    from memory_substrate.contracts.loader import DocumentError, load_document
    from memory_substrate.contracts.validate import validate

    try:
        document = load_document(file)
    except DocumentError as exc:
        _report(file, contract, [exc.diagnostic], as_json)
        return
    diagnostics = validate(document, contract)
    extra: ReportExtra = {}
    if contract == "graph" and isinstance(document, dict):
        extra["counts"] = {
            k: len(v) for k in ("nodes", "edges", "events") if isinstance(v := document.get(k, []), list)
        }
    _report(file, contract, diagnostics, as_json, extra)


@click.group(name="contracts")
def contracts() -> None:
    """Portable memory contracts: validate profiles and graph snapshots, pack selections."""


@contracts.group()
def profile() -> None:
    """markitect.memory.profile.v1 documents."""


@profile.command(name="validate")
@click.argument("file", type=FileArg)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def profile_validate(file: Path, as_json: bool) -> None:
    """Validate a profile FILE (YAML or JSON); exit 1 with diagnostics when it is invalid."""
    _validate_file(file, "profile", as_json)


@profile.command(name="plan")
@click.argument("file", type=FileArg)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def profile_plan(file: Path, as_json: bool) -> None:
    """Explain what this runtime provides for each memory kind and store FILE declares. Launches nothing."""
    from memory_substrate.contracts.loader import DocumentError, load_document
    from memory_substrate.contracts.plan import plan, render

    try:
        document = load_document(file)
    except DocumentError as exc:
        _report(file, "profile", [exc.diagnostic], as_json)
        return
    result = plan(document)
    if as_json:
        click.echo(json.dumps({"file": str(file), **result}, indent=2, ensure_ascii=False, sort_keys=True))
    else:
        for diag in result["diagnostics"]:
            click.echo(_diag_line(diag, str(file)))
        click.echo(render(result))
    if not result["valid"]:
        sys.exit(EXIT_INVALID)


@contracts.group()
def graph() -> None:
    """markitect.memory.graph.v1 snapshots and markitect.memory.selection.v1 selections."""


@graph.command(name="validate")
@click.argument("file", type=FileArg)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def graph_validate(file: Path, as_json: bool) -> None:
    """Validate a graph snapshot FILE (YAML or JSON); exit 1 with diagnostics when it is invalid."""
    _validate_file(file, "graph", as_json)


@graph.command(name="pack")
@click.argument("selection", type=FileArg)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["yaml", "json"]),
    default="json",
    show_default=True,
    help="Serialisation of the ContextPackage.",
)
@click.option(
    "--profile",
    "profile_path",
    type=FileArg,
    default=None,
    help="Profile FILE whose activation limits apply (instead of the selection's own profile).",
)
@click.option("--max-items", type=click.IntRange(min=1), default=None, help="Override activation.max_items.")
@click.option(
    "--max-tokens", type=click.IntRange(min=1), default=None, help="Override activation.max_tokens."
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the package to FILE (default: stdout).",
)
@click.option("--json", "as_json", is_flag=True, help="Print diagnostics of an invalid selection as JSON.")
def graph_pack(
    selection: Path,
    fmt: str,
    profile_path: Path | None,
    max_items: int | None,
    max_tokens: int | None,
    output: Path | None,
    as_json: bool,
) -> None:
    """Resolve SELECTION's graph and profile, validate all three, and print a deterministic ContextPackage."""
    from memory_substrate.contracts.loader import dump
    from memory_substrate.contracts.pack import pack_file

    package, diagnostics = pack_file(
        selection, profile_path=profile_path, override={"max_items": max_items, "max_tokens": max_tokens}
    )
    if package is None:
        _report(selection, "selection", diagnostics, as_json)
        return
    for diag in diagnostics:  # warnings only
        click.echo(_diag_line(diag.to_dict(), str(selection)), err=True)
    text = dump(package, fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")


# --- store <-> graph.v1 (called by the top-level export / import commands) -------------------
def export_graph(
    ctx: click.Context,
    output: Path | None,
    query: str | None,
    settings_of: Callable[[click.Context], Settings],
    fail: Callable[[MemorySubstrateError], None],
) -> None:
    """Write the namespace, or the objects a search returns, as a graph.v1 snapshot; YAML when
    the output file ends in .yaml/.yml, JSON otherwise. The report goes to stderr."""
    from memory_substrate.app import Memory
    from memory_substrate.contracts.loader import dump
    from memory_substrate.contracts.snapshot_export import export_snapshot
    from memory_substrate.errors import MemorySubstrateError, ValidationError
    from memory_substrate.transfer import REPAIR
    from memory_substrate.validation import input_problems

    try:
        with Memory(settings_of(ctx)) as memory:
            ids = None
            if query is not None:
                found = memory.query("search", {"query": query}, {"max_items": 200})
                ids = [item["id"] for item in found["items"]]
            with memory.runtime.read_with_expired() as session:
                snapshot, report = export_snapshot(session, ids=ids)
    except MemorySubstrateError as exc:
        fail(exc)
        return
    if numbers := input_problems(snapshot, "", strings=False):  # import would refuse the file: write none
        fields = [path for path, _, _ in numbers]
        fail(
            ValidationError(
                f"cannot export: {', '.join(fields)} must be a finite number (stored by an older "
                f"release); run `{REPAIR}`, which rewrites them as null, then export again",
                details={"fields": fields},
            )
        )
        return
    fmt = "yaml" if output is not None and output.suffix in (".yaml", ".yml") else "json"
    text = dump(snapshot, fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
    click.echo(json.dumps(report, ensure_ascii=False, sort_keys=True), err=True)


def is_graph_snapshot(file: Path) -> bool:
    """True unless FILE starts like a JSON Lines export (whose first line names its format).
    Raises ValidationError, one clear line, for an empty file and for a JSON Lines export whose
    header is not its first line (reordered or damaged), instead of a parser error about YAML."""
    from memory_substrate.errors import ValidationError

    expected = "expected a memory-substrate JSON Lines export or a graph.v1 snapshot"
    with file.open(encoding="utf-8", errors="replace") as fh:
        first = fh.readline()
        if '"memory-substrate.export"' in first:
            return False
        if not first.strip() and not fh.read(4096).strip():
            raise ValidationError(f"{file} is empty: nothing to import ({expected})")
        if _json_object(first):
            for number, line in enumerate(fh, start=2):
                if '"memory-substrate.export"' in line and _json_object(line):
                    raise ValidationError(
                        f"{file} is a JSON Lines export whose header is on line {number}, not line 1: "
                        "the file is reordered or damaged; import the export as it was written"
                    )
    return True


def _json_object(line: str) -> bool:
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def import_graph(
    ctx: click.Context,
    file: Path,
    scopes: tuple[str, ...],
    reason: str | None,
    memory_of: Callable[[click.Context], Memory],
    emit: Callable[[object], None],
    fail: Callable[[MemorySubstrateError], None],
) -> None:
    """Import a graph.v1 snapshot through memory_remember ``graph_snapshot`` (one patch)."""
    from memory_substrate.contracts.loader import DocumentError, load_document
    from memory_substrate.errors import MemorySubstrateError, ValidationError

    try:
        try:
            snapshot = load_document(file)
        except DocumentError as exc:
            raise ValidationError(
                exc.diagnostic.message, details={"diagnostics": [exc.diagnostic.to_dict()]}
            ) from None
        data: JsonObject = {"snapshot": snapshot}
        if scopes:
            data["scope_refs"] = list(scopes)
        if reason:
            data["reason"] = reason
        with memory_of(ctx) as memory:
            result = memory.remember("graph_snapshot", data)
    except MemorySubstrateError as exc:
        fail(exc)
        return
    emit(result)
