"""Read contract documents (YAML or JSON) and the shipped JSON Schemas; write documents back
deterministically (sorted keys, no flow style, no timestamps added)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from re import Pattern

import yaml

from memory_substrate.contracts.diagnostics import Diagnostic
from memory_substrate.json_types import JsonObject

_SafeLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):  # type: ignore[misc]
    """YAML without implicit timestamps: contracts carry timestamps as strings, as JSON does,
    so ``at: 2026-05-01T10:00:00Z`` stays the string the author wrote."""


# first character of a plain scalar (None: any) -> (tag, pattern) pairs tried in order
_resolvers: dict[str | None, list[tuple[str, Pattern[str]]]] = _SafeLoader.yaml_implicit_resolvers  # type: ignore[attr-defined]
_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in _resolvers.items()
}


class DocumentError(Exception):
    """A file that cannot be read as a contract document; carries one diagnostic."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def parse_text(text: str, *, name: str = "<input>") -> object:
    """JSON when the text is JSON, YAML otherwise (YAML is a superset, but JSON is much faster).
    Any JSON value: a contract document is an object only once ``validate`` says so.

    Raises ``DocumentError`` (code ``parse_error``).
    """
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass  # YAML flow style also starts with "{"; let the YAML parser judge
    try:
        document: object = yaml.load(text, Loader=_Loader)  # a safe loader subclass
        return document
    except yaml.YAMLError as exc:
        raise DocumentError(
            Diagnostic("parse_error", "$", f"{name} is not valid YAML or JSON: {exc}")
        ) from None


def load_document(path: Path) -> object:
    """Parse a YAML or JSON file. Raises ``DocumentError`` when it cannot be read or parsed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError(Diagnostic("reference_unresolved", "$", f"cannot read {path}: {exc}")) from None
    return parse_text(text, name=str(path))


@cache
def schema(contract_version: str) -> JsonObject:
    """The shipped JSON Schema of a contract version (e.g. ``markitect.memory.graph.v1``)."""
    text = (
        resources.files("memory_substrate.contracts")
        .joinpath("schemas", f"{contract_version}.json")
        .read_text("utf-8")
    )
    result: JsonObject = json.loads(text)
    return result


def dump_json(document: object) -> str:
    """Canonical pretty JSON: sorted keys, UTF-8 kept, trailing newline."""
    return json.dumps(document, sort_keys=True, ensure_ascii=False, indent=2) + "\n"


def dump_yaml(document: object) -> str:
    """Deterministic block-style YAML with sorted keys. Always the pure-Python emitter: the
    libyaml one is faster but need not be installed, and the bytes must not depend on it."""
    text: str = yaml.dump(
        document,
        Dumper=yaml.SafeDumper,
        sort_keys=True,
        allow_unicode=True,
        default_flow_style=False,
        width=100_000,
    )
    return text


def dump(document: object, fmt: str) -> str:
    return dump_yaml(document) if fmt == "yaml" else dump_json(document)
