"""Outline one source file: module name, imports and symbols with line ranges.

Tree-sitter grammars come from the small per-language wheels (``tree-sitter-python``,
``-javascript``, ``-typescript``, ``-go``, ``-rust``, ``-java``, ``-kotlin``, ``-bash``).
``tree-sitter-language-pack`` is used for other languages only when it can hand out a parser
without a download (its 1.x releases fetch grammars from the network on first use; ingest must
stay offline). Python falls back to the standard ``ast`` module; anything else degrades to no
outline, and the repo capture keeps the head of such a file's text instead (repo.py).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from memory_substrate.ingest.adapters.outline import Outline, Symbol

_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "bash": ("tree_sitter_bash", "language"),
}
CLASS_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "record", "object"})
FUNCTION_KINDS = frozenset({"function", "method"})
_MAX_SIGNATURE = 300
_MAX_DOC = 300


@dataclass(frozen=True)
class _Spec:
    defs: dict[str, str]  # node type -> symbol kind
    containers: frozenset[str] = frozenset()  # defs whose "body" holds members
    wrappers: dict[str, str] = field(default_factory=dict)  # node type -> field holding the real def
    imports: frozenset[str] = frozenset()
    # Child node types holding a def's body where the grammar gives it no "body" field (Kotlin).
    bodies: frozenset[str] = frozenset()


_JS_DEFS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "method_definition": "function",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
}
_JS = _Spec(
    defs=_JS_DEFS,
    containers=frozenset({"class_declaration", "abstract_class_declaration"}),
    wrappers={"export_statement": "declaration"},
    imports=frozenset({"import_statement"}),
)
_SPECS: dict[str, _Spec] = {
    "python": _Spec(
        defs={"function_definition": "function", "class_definition": "class"},
        containers=frozenset({"class_definition"}),
        wrappers={"decorated_definition": "definition"},
        imports=frozenset({"import_statement", "import_from_statement"}),
    ),
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "go": _Spec(
        defs={"function_declaration": "function", "method_declaration": "method", "type_spec": "type"},
        imports=frozenset({"import_declaration"}),
    ),
    "rust": _Spec(
        defs={
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
        },
        containers=frozenset({"trait_item", "impl_item", "mod_item"}),
        imports=frozenset({"use_declaration"}),
    ),
    "java": _Spec(
        defs={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "record",
            "method_declaration": "function",
            "constructor_declaration": "function",
        },
        containers=frozenset(
            {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}
        ),
        imports=frozenset({"import_declaration"}),
    ),
    "kotlin": _Spec(
        defs={
            "class_declaration": "class",
            "object_declaration": "object",
            "companion_object": "object",
            "function_declaration": "function",
        },
        containers=frozenset({"class_declaration", "object_declaration", "companion_object"}),
        # "import_header" is the older grammars' name for an import.
        imports=frozenset({"import", "import_header"}),
        bodies=frozenset({"class_body", "enum_class_body", "function_body"}),
    ),
    # A script's ``source``/``.`` commands are its imports; other commands hold no definitions.
    "bash": _Spec(defs={"function_definition": "function"}, imports=frozenset({"command"})),
}
# For grammars we have no hand-written spec for: the common definition node names.
_GENERIC = _Spec(
    defs={
        "function_definition": "function",
        "function_declaration": "function",
        "method_declaration": "function",
        "method_definition": "function",
        "function_item": "function",
        "method": "function",
        "class_definition": "class",
        "class_declaration": "class",
        "class_specifier": "class",
        "struct_specifier": "struct",
        "interface_declaration": "interface",
        "class": "class",
        "module": "module",
    },
    containers=frozenset({"class_definition", "class_declaration", "class_specifier", "class", "module"}),
)


@functools.cache
def _parser(grammar: str) -> Any | None:
    """A tree-sitter parser for ``grammar``, or None when none is installed offline."""
    try:
        from tree_sitter import Language, Parser
    except ImportError:
        return None
    spec = _GRAMMARS.get(grammar)
    if spec:
        try:
            mod = importlib.import_module(spec[0])
            return Parser(Language(getattr(mod, spec[1])()))
        except (ImportError, AttributeError, ValueError):
            pass
    try:
        pack: Any = importlib.import_module("tree_sitter_language_pack")
    except ImportError:
        return None
    try:
        # 1.x downloads missing grammars; only take what is already on disk.
        if hasattr(pack, "downloaded_languages") and grammar not in pack.downloaded_languages():
            return None
        parser = pack.get_parser(grammar)
    except Exception:  # the pack raises its own error types for unknown or unloadable grammars
        return None
    return parser if isinstance(parser, Parser) else None


def module_name(rel_path: str, language: str) -> str:
    """A best-effort module name from the path (Python dotted names; others the path stem)."""
    p = PurePosixPath(rel_path)
    if language == "python":
        parts = list(p.with_suffix("").parts)
        if parts and parts[0] in ("src", "lib") and len(parts) > 1:
            parts = parts[1:]
        if parts and parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        return ".".join(parts)
    return str(p.with_suffix(""))


PARSE_BUDGET_S = 0.2  # plus PARSE_S_PER_BYTE per byte: a valid 1 MB file parses in ~0.25 s
PARSE_S_PER_BYTE = 1e-6


def _parse_bounded(parser: Any, src: bytes) -> Any | None:
    """Parse with a time budget; None when it runs out.

    ``parser.parse(bytes)`` holds the GIL for the whole parse, and tree-sitter's error recovery
    is slow on some text (a long run of '"' in Rust takes seconds), which stalled every other request of
    the server. Read through a callback with a progress callback, the parse returns to Python
    regularly (other threads run) and stops at the deadline.
    """
    deadline = time.monotonic() + PARSE_BUDGET_S + PARSE_S_PER_BYTE * len(src)

    def read(offset: int, _point: Any) -> bytes:
        return src[offset : offset + 65536]

    try:
        return parser.parse(read, progress_callback=lambda *_: time.monotonic() > deadline)
    except ValueError:  # "Parsing failed": the progress callback stopped it
        return None


def outline(text: str, rel_path: str, language: str, grammar: str | None = None) -> Outline:
    """Outline ``text``; never raises on bad source, it just says less."""
    grammar = grammar or language
    module = module_name(rel_path, language)
    parser = _parser(grammar)
    if parser is None:
        if language == "python":
            from memory_substrate.ingest.adapters import _ast_outline

            return _ast_outline.outline(text, module)
        return Outline(module=module, parser="none")
    src = text.encode("utf-8")
    tree = _parse_bounded(parser, src)
    if tree is None:  # past its time budget: the file is still captured, without an outline
        return Outline(module=module, parser="none", parse_errors=True)
    out = Outline(module=module, parser="tree-sitter", parse_errors=tree.root_node.has_error)
    _walk(tree.root_node, src, _SPECS.get(grammar, _GENERIC), grammar, out)
    out.symbols.sort(key=lambda s: (s.line_start, s.line_end))
    if grammar == "go":
        out.module = _package(tree.root_node, src, "package_clause") or module
    elif grammar in ("java", "kotlin"):
        pkg = _package(tree.root_node, src, "package_declaration" if grammar == "java" else "package_header")
        out.module = f"{pkg}.{PurePosixPath(rel_path).stem}" if pkg else module
    return out


def _text(node: Any, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


# Inside a function body only statements are walked (not expressions): nested definitions sit
# in blocks and compound statements, and skipping the expressions keeps the walk cheap.
_STATEMENT_HINTS = ("statement", "block", "clause", "body", "declaration", "definition")


def _walk(root: Any, src: bytes, spec: _Spec, grammar: str, out: Outline) -> None:
    # An explicit stack: generated code nests deep enough to hit Python's recursion limit.
    # Each entry: (node, qualified parent, wrapper node, whether it sits in a function body).
    stack: list[tuple[Any, str | None, Any | None, bool]] = [
        (c, None, None, False) for c in reversed(root.named_children)
    ]
    functions: set[str] = set()  # qualified names of the functions whose bodies are walked
    while stack:
        node, parent, outer, nested = stack.pop()
        t = node.type
        if t in spec.wrappers:
            inner = node.child_by_field_name(spec.wrappers[t])
            if inner is not None:
                stack.append((inner, parent, outer or node, nested))
            continue
        if t in spec.imports:
            if not nested:
                out.imports.extend(_imports(node, src, grammar))
            continue
        if t in ("lexical_declaration", "variable_declaration") and spec is _JS:
            if not nested:
                _js_function_vars(node, outer or node, src, parent, out)
            continue
        if t not in spec.defs:
            children = node.named_children
            if nested:
                children = [
                    c
                    for c in children
                    if c.type in spec.defs
                    or c.type in spec.wrappers
                    or any(h in c.type for h in _STATEMENT_HINTS)
                ]
            stack.extend((c, parent, None, nested) for c in reversed(children))
            continue
        name, kind = _name_and_kind(node, src, spec.defs[t], grammar)
        body = _body(node, spec)
        if parent and kind == "function" and parent not in functions:
            kind = "method"
        qualified = f"{parent}.{name}" if parent and name else name
        if kind != "impl" and name:
            sym = _symbol(node, outer or node, src, qualified, kind, grammar, body=body)
            # A definition inside a function body is part of that function, unless it was given a
            # purpose of its own: a documented one is outlined (``Syntax.highlight.line_tokenize``).
            if not nested or sym.doc:
                out.symbols.append(sym)
        if t in spec.containers:
            if body is not None:
                stack.extend((c, qualified or parent, None, nested) for c in reversed(body.named_children))
        elif kind in FUNCTION_KINDS and name and body is not None:
            functions.add(qualified)
            stack.extend((c, qualified, None, True) for c in reversed(body.named_children))


def _body(node: Any, spec: _Spec) -> Any | None:
    body = node.child_by_field_name("body")
    if body is None and spec.bodies:
        body = next((c for c in node.named_children if c.type in spec.bodies), None)
    return body


def _name_and_kind(node: Any, src: bytes, kind: str, grammar: str) -> tuple[str, str]:
    if grammar == "rust" and node.type == "impl_item":
        typ = node.child_by_field_name("type")
        return (_text(typ, src) if typ is not None else ""), kind
    if grammar == "go" and node.type == "type_spec":
        typ = node.child_by_field_name("type")
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(typ.type if typ else "", "type")
    if grammar == "kotlin" and node.type == "class_declaration":
        # One node type for all three; the keyword or the body type tells them apart.
        tokens = {c.type for c in node.children}
        kind = "interface" if "interface" in tokens else "enum" if "enum_class_body" in tokens else kind
    name_node = node.child_by_field_name("name")
    # C-like grammars bury the name in nested declarators.
    probe = node
    while name_node is None and probe is not None:
        probe = probe.child_by_field_name("declarator")
        if probe is not None and probe.type in ("identifier", "field_identifier", "type_identifier"):
            name_node = probe
    name = _text(name_node, src) if name_node is not None else ""
    if grammar == "go" and node.type == "method_declaration":
        recv = node.child_by_field_name("receiver")
        recv_type = (
            _text(recv, src).strip("()").split()[-1]
            if recv is not None and _text(recv, src).strip("()")
            else ""
        )
        recv_type = recv_type.lstrip("*").split("[")[0]
        if recv_type:
            name = f"{recv_type}.{name}"
    return name, kind


def _js_function_vars(decl: Any, outer: Any, src: bytes, parent: str | None, out: Outline) -> None:
    for d in decl.named_children:
        if d.type != "variable_declarator":
            continue
        value, name = d.child_by_field_name("value"), d.child_by_field_name("name")
        if value is None or name is None:
            continue
        if value.type in ("arrow_function", "function_expression", "function", "generator_function"):
            sym = _symbol(
                decl,
                outer,
                src,
                _text(name, src),
                "function",
                "javascript",
                body=value.child_by_field_name("body"),
            )
            out.symbols.append(sym)


def _symbol(
    node: Any, outer: Any, src: bytes, name: str, kind: str, grammar: str, body: Any = None
) -> Symbol:
    body = body if body is not None else node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    sig = src[node.start_byte : end].decode("utf-8", "replace").strip()
    if body is None:
        sig = sig.split("\n", 1)[0]
    doc = _python_docstring(body, src) if grammar == "python" else _doc_comment(outer, src)
    return Symbol(
        name=name,
        kind=kind,
        line_start=outer.start_point[0] + 1,
        line_end=outer.end_point[0] + 1,
        signature=sig.rstrip("{").strip()[:_MAX_SIGNATURE],
        doc=doc[:_MAX_DOC],
    )


def _python_docstring(body: Any, src: bytes) -> str:
    if body is None or not body.named_children:
        return ""
    first = body.named_children[0]
    if (
        first.type != "expression_statement"
        or not first.named_children
        or first.named_children[0].type != "string"
    ):
        return ""
    raw = _text(first.named_children[0], src)
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return ""
    return inspect.cleandoc(value) if isinstance(value, str) else ""


def _doc_comment(node: Any, src: bytes) -> str:
    """Comment lines directly above a definition (or above its declaration group)."""
    if node.prev_named_sibling is None and node.parent is not None and node.parent.parent is not None:
        node = node.parent
    lines: list[str] = []
    cur, row = node.prev_named_sibling, node.start_point[0]
    while cur is not None and "comment" in cur.type and cur.end_point[0] >= row - 1:
        if cur.start_point[0] == 0 and _text(cur, src).startswith("#!"):
            break  # a script's shebang line says how to run the file, not what a function does
        lines[:0] = _text(cur, src).split("\n")
        row = cur.start_point[0]
        cur = cur.prev_named_sibling
    cleaned = [ln.strip().lstrip("/*!#-").rstrip("*/").strip() for ln in lines]
    return "\n".join(c for c in cleaned if c)


def _imports(node: Any, src: bytes, grammar: str) -> list[str]:
    if grammar == "python":
        if node.type == "import_from_statement":
            mod = node.child_by_field_name("module_name")
            return [_text(mod, src)] if mod is not None else []
        names = []
        for c in node.named_children:
            target = c.child_by_field_name("name") if c.type == "aliased_import" else c
            if target is not None:
                names.append(_text(target, src))
        return names
    if grammar in ("javascript", "typescript", "tsx"):
        source = node.child_by_field_name("source")
        return [_text(source, src).strip("'\"`")] if source is not None else []
    if grammar == "go":
        found, stack = [], [node]
        while stack:
            n = stack.pop()
            if n.type == "import_spec" and n.child_by_field_name("path") is not None:
                found.append(_text(n.child_by_field_name("path"), src).strip('"`'))
            stack.extend(n.named_children)
        return sorted(found)
    if grammar == "rust":
        arg = node.child_by_field_name("argument")
        return [_text(arg, src)] if arg is not None else []
    if grammar == "kotlin":
        return [_text(node.named_children[0], src)] if node.named_children else []
    if grammar == "bash":
        name, arg = node.child_by_field_name("name"), node.child_by_field_name("argument")
        if name is None or arg is None or _text(name, src) not in ("source", "."):
            return []
        return [_text(arg, src).strip("'\"")]
    text = _text(node, src).strip().removeprefix("import").removesuffix(";").strip()
    return [text.removeprefix("static ").strip()] if text else []


def _package(root: Any, src: bytes, node_type: str) -> str | None:
    for c in root.named_children:
        if c.type == node_type and c.named_children:
            return _text(c.named_children[0], src)
    return None
