"""The per-mode input reference (docs/modes.md and ``memory-substrate modes``), derived from the code.

Why derived rather than written: the models a mode validates its ``input_data`` and ``options``
with are chosen inside each service, and a hand-kept table drifts the first time a mode changes.
So each mode is run once against a throwaway store with the validation hook in
``validation.parse`` set: the hook records the model parsed for ``input_data`` and for
``options`` and stops the call before anything runs. The models' JSON schemas are then rendered
as tables. A mode added to a service's ``MODES`` appears here with no further work; one that
does not validate through ``parse`` is listed as undescribed (and the docs test fails).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from memory_substrate import validation

PARTS = ("input_data", "options")


@dataclass(frozen=True)
class ModeModels:
    tool: str
    mode: str
    input_model: type[BaseModel] | None
    options_model: type[BaseModel] | None


def tool_modes() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each envelope tool: the ``Memory`` method that serves it and its modes, in service order."""
    from memory_substrate.ingest.service import MODES as INGEST
    from memory_substrate.maintain.service import MODES as MAINTAIN
    from memory_substrate.query.service import MODES as QUERY
    from memory_substrate.remember.service import MODES as REMEMBER

    return {
        "memory_ingest": ("ingest", INGEST),
        "memory_query": ("query", QUERY),
        "memory_remember": ("remember", REMEMBER),
        "memory_maintain": ("maintain", MAINTAIN),
    }


class _Stop(Exception):
    pass


def _probe(call: Callable[[str, dict[str, Any], dict[str, Any]], Any], mode: str) -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}

    def observer(model: type[BaseModel], prefix: str) -> Any:
        if prefix not in PARTS or len(found) == len(PARTS):
            raise _Stop
        if prefix in found:
            # Seen on an earlier run: let the call go on (unvalidated) to reach the next part.
            return model.model_construct()
        found[prefix] = model
        raise _Stop

    previous = validation._observer
    validation._observer = observer
    try:
        for _ in PARTS:
            seen = len(found)
            # _Stop, or the unvalidated run tripping over a missing field.
            with contextlib.suppress(Exception):
                call(mode, {}, {})
            if len(found) in (seen, len(PARTS)):
                break
    finally:
        validation._observer = previous
    return found


def collect() -> list[ModeModels]:
    """Every (tool, mode) with the models it validates with, found by probing a throwaway store."""
    from memory_substrate.app import Memory

    out: list[ModeModels] = []
    with tempfile.TemporaryDirectory(prefix="memory-substrate-modes-") as root, Memory.open(
        root=root, namespace="modes-reference", embedder="none"
    ) as memory:
        for tool, (method, modes) in tool_modes().items():
            for mode in modes:
                found = _probe(getattr(memory, method), mode)
                out.append(ModeModels(tool, mode, found.get("input_data"), found.get("options")))
    return out


# --- rendering ------------------------------------------------------------------------------

_CONSTRAINTS = (
    ("minLength", "min length {}"),
    ("maxLength", "max length {}"),
    ("minimum", ">= {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "<= {}"),
    ("exclusiveMaximum", "< {}"),
    ("minItems", "min {} items"),
    ("maxItems", "max {} items"),
    ("pattern", "pattern `{}`"),
)


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        parts = [_type(s) for s in schema["anyOf"] if s.get("type") != "null"]
        nullable = any(s.get("type") == "null" for s in schema["anyOf"])
        return " \\| ".join(parts) + (" \\| null" if nullable else "")
    if "enum" in schema:
        return " \\| ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type")
    if kind == "array":
        return f"list[{_type(schema.get('items', {}))}]"
    if kind == "object":
        return "object"
    if kind == "string" and schema.get("format") == "date-time":
        return "datetime (ISO-8601)"
    return str(kind or "any")


def _constraints(schema: dict[str, Any]) -> str:
    found = [fmt.format(schema[key]) for key, fmt in _CONSTRAINTS if key in schema]
    for sub in schema.get("anyOf", []):
        found += [fmt.format(sub[key]) for key, fmt in _CONSTRAINTS if key in sub]
    if schema.get("type") == "object" and schema.get("additionalProperties") is not False and "properties" not in schema:
        found.append("any keys")
    return ", ".join(found)


def _table(schema: dict[str, Any]) -> list[str]:
    props: dict[str, Any] = schema.get("properties", {})
    if not props:
        extra = schema.get("additionalProperties")
        return ["`{}`: no fields." if extra is False or extra is None else "Any keys (free-form object)."]
    required = set(schema.get("required", []))
    lines = ["| field | type | required | default | constraints |", "|---|---|---|---|---|"]
    for name, prop in props.items():
        default = "" if "default" not in prop else f"`{json.dumps(prop['default'], ensure_ascii=False)}`"
        lines.append(
            f"| `{name}` | {_type(prop)} | {'yes' if name in required else ''} | {default} | {_constraints(prop)} |"
        )
    if schema.get("additionalProperties") is not False:
        lines.append("")
        lines.append("Keys other than these are accepted and kept.")
    return lines


def _refs(schema: Any) -> list[str]:
    found: list[str] = []
    if isinstance(schema, dict):
        if "$ref" in schema:
            found.append(schema["$ref"].rsplit("/", 1)[-1])
        for value in schema.values():
            found += _refs(value)
    elif isinstance(schema, list):
        for value in schema:
            found += _refs(value)
    return found


def render_model(model: type[BaseModel] | None, part: str) -> list[str]:
    """One model as markdown: its description, a field table, then the nested models it uses."""
    if model is None:
        return [f"`{part}`: not described by a schema."]
    schema = model.model_json_schema()
    defs: dict[str, Any] = schema.get("$defs", {})
    lines = [f"`{part}` (`{model.__name__}`)" + (f": {schema['description'].strip()}" if schema.get("description") else "")]
    lines += ["", *_table(schema)]
    seen: list[str] = []
    queue = _refs(schema.get("properties", {}))
    while queue:
        name = queue.pop(0)
        if name in seen or name not in defs:
            continue
        seen.append(name)
        sub = defs[name]
        if "enum" in sub:
            lines += ["", f"`{name}`: one of " + ", ".join(f"`{json.dumps(v)}`" for v in sub["enum"]) + "."]
            continue
        desc = f": {sub['description'].strip()}" if sub.get("description") else ""
        lines += ["", f"`{name}`{desc}", "", *_table(sub)]
        queue += _refs(sub.get("properties", {}))
    return lines


def render_mode(entry: ModeModels, level: str = "###") -> list[str]:
    lines = [f"{level} `{entry.mode}`", ""]
    lines += render_model(entry.input_model, "input_data")
    lines += [""]
    lines += render_model(entry.options_model, "options")
    return lines


def render(entries: list[ModeModels]) -> str:
    """docs/modes.md, whole."""
    lines = [
        "# Inputs of every mode",
        "",
        "<!-- Generated by `python scripts/gen_modes_doc.py` from the models each mode validates with;",
        "     tests/docs/test_modes_doc.py fails when this file differs. Do not edit by hand. -->",
        "",
        "Every envelope tool takes `{\"args\": {\"mode\", \"input_data\", \"options\"}}`. Below, for each",
        "mode, the fields of `input_data` and of `options`. Unknown fields are refused with",
        "`memory_validation_error` naming the field (`input_data.<field>: Extra inputs are not permitted`).",
        "Rules that span several fields (for instance `resolve_duplicates` needing",
        "`canonical_knowledge_id` when `outcome` is `supersede`) are checked too and named in the error.",
        "The same reference is printed by `memory-substrate modes TOOL [MODE]`.",
        "",
    ]
    by_tool: dict[str, list[ModeModels]] = {}
    for entry in entries:
        by_tool.setdefault(entry.tool, []).append(entry)
    for tool, modes in by_tool.items():
        lines += [f"## {tool}", "", "Modes: " + ", ".join(f"`{m.mode}`" for m in modes) + ".", ""]
        for entry in modes:
            lines += [*render_mode(entry), ""]
    return "\n".join(lines).rstrip() + "\n"


def undescribed(entries: list[ModeModels]) -> list[str]:
    """``tool.mode`` for each mode whose input or options model could not be found."""
    return [f"{e.tool}.{e.mode}" for e in entries if e.input_model is None or e.options_model is None]
