"""Python outline from the standard library, for installs without the tree-sitter grammar."""

from __future__ import annotations

import ast

from memory_substrate.ingest.adapters.outline import Outline, Symbol

_MAX = 300


def outline(text: str, module: str) -> Outline:
    """Outline Python source with ``ast``; a syntax error gives an empty outline, flagged."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return Outline(module=module, parser="ast", parse_errors=True)
    lines = text.split("\n")
    out = Outline(module=module, parser="ast")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.imports.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.imports.append("." * node.level + (node.module or ""))
    _collect(tree.body, None, lines, out)
    out.symbols.sort(key=lambda s: (s.line_start, s.line_end))
    return out


def _collect(
    body: list[ast.stmt],
    parent: str | None,
    lines: list[str],
    out: Outline,
    nested: bool = False,
    in_class: bool = False,
) -> None:
    for node in body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            # Definitions inside compound statements (``if TYPE_CHECKING:``, ``try:``) count too.
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    _collect(inner, parent, lines, out, nested, in_class)
            continue
        is_class = isinstance(node, ast.ClassDef)
        kind = "class" if is_class else ("method" if in_class else "function")
        name = f"{parent}.{node.name}" if parent else node.name
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        body_line = node.body[0].lineno if node.body else node.lineno
        sig = "\n".join(lines[node.lineno - 1 : max(node.lineno, body_line - 1)]).strip()
        doc = ast.get_docstring(node) or ""
        # As the tree-sitter outliner: inside a function body, only documented definitions.
        if not nested or doc:
            out.symbols.append(
                Symbol(
                    name=name,
                    kind=kind,
                    line_start=start,
                    line_end=node.end_lineno or node.lineno,
                    signature=sig[:_MAX],
                    doc=doc[:_MAX],
                )
            )
        _collect(node.body, name, lines, out, nested or not is_class, is_class)
