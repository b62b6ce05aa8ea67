"""What the outliners say about one source file: its module, imports and symbols."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict


class SymbolBrief(TypedDict):
    """A symbol as the repo map stores it: its name, kind and line range."""

    name: str
    kind: str
    line_start: int
    line_end: int


@dataclass
class Symbol:
    """One definition in a file; ``name`` is qualified by its container (``Class.method``)."""

    name: str
    kind: str
    line_start: int
    line_end: int
    signature: str
    doc: str = ""

    def brief(self) -> SymbolBrief:
        """The compact form stored in the repo map."""
        return {
            "name": self.name,
            "kind": self.kind,
            "line_start": self.line_start,
            "line_end": self.line_end,
        }


@dataclass
class Outline:
    """What the parser could say about one file."""

    module: str
    parser: str  # tree-sitter | ast | none
    imports: list[str] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)
    parse_errors: bool = False
