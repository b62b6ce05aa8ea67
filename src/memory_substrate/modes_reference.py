"""The per-mode input reference (docs/modes.md and ``memory-substrate modes``), read from the mode
declarations (``validation.Mode``, one table per service in ``<service>/modes.py``).

The services dispatch on the same declarations, so the models shown here are the models each
mode validates its ``input_data`` and ``options`` with; nothing is run to find them. A mode
declared in a service's table appears here with no further work.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel

from memory_substrate.json_types import JsonObject
from memory_substrate.validation import Mode

PARTS = ("input_data", "options")


@dataclass(frozen=True)
class ModeModels:
    tool: str
    mode: str
    input_model: type[BaseModel] | None
    options_model: type[BaseModel] | None
    help: str = ""
    writes: bool = True


def declared() -> dict[str, tuple[Mode, ...]]:
    """Each envelope tool's mode declarations, in service order."""
    from memory_substrate.ingest.modes import MODES_DECLARED as INGEST
    from memory_substrate.maintain.modes import MODES_DECLARED as MAINTAIN
    from memory_substrate.query.modes import MODES_DECLARED as QUERY
    from memory_substrate.remember.modes import MODES_DECLARED as REMEMBER

    return {
        "memory_ingest": INGEST,
        "memory_query": QUERY,
        "memory_remember": REMEMBER,
        "memory_maintain": MAINTAIN,
    }


def tool_modes() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each envelope tool: the ``Memory`` method that serves it and its modes, in service order."""
    return {
        tool: (tool.removeprefix("memory_"), tuple(m.name for m in modes))
        for tool, modes in declared().items()
    }


def collect() -> list[ModeModels]:
    """Every (tool, mode) with the models it validates with, as declared."""
    return [
        ModeModels(m.tool, m.name, m.input_model, m.options_model, m.help, m.writes)
        for modes in declared().values()
        for m in modes
    ]


def required_fields(model: type[BaseModel]) -> list[str]:
    """The fields of ``model`` a call must give, in the model's order."""
    return [str(f) for f in model.model_json_schema().get("required", [])]


def required_by_mode(modes: tuple[Mode, ...] | list[Mode]) -> str:
    """Each mode's required ``input_data`` fields, read from its input model: modes that require
    the same fields share one entry (``expand/page: id``); a mode that requires none is left out.
    Published in the MCP tool schema, where every field of every model would not fit the size an
    agent loads on each session (tests/mcp/test_tool_list_size.py); docs/modes.md has them all."""
    groups: dict[str, list[str]] = {}
    for mode in modes:
        required = ", ".join(required_fields(mode.input_model))
        if required:
            groups.setdefault(required, []).append(mode.name)
    return "; ".join(f"{'/'.join(names)}: {fields}" for fields, names in groups.items())


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


# A JSON schema from pydantic holds its subschemas as objects and its lists (anyOf, enum,
# required) as lists: these read them so, as the schema's own types.
def _object(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _schemas(value: object) -> list[JsonObject]:
    return [s for s in _list(value) if isinstance(s, dict)]


def _type(schema: JsonObject) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        options = _schemas(schema["anyOf"])
        parts = [_type(s) for s in options if s.get("type") != "null"]
        nullable = any(s.get("type") == "null" for s in options)
        return " \\| ".join(parts) + (" \\| null" if nullable else "")
    if "enum" in schema:
        return " \\| ".join(json.dumps(v) for v in _list(schema["enum"]))
    if "const" in schema:
        return json.dumps(schema["const"])
    kind = schema.get("type")
    if kind == "array":
        return f"list[{_type(_object(schema.get('items', {})))}]"
    if kind == "object":
        return "object"
    if kind == "string" and schema.get("format") == "date-time":
        return "datetime (ISO-8601)"
    return str(kind or "any")


def _constraints(schema: JsonObject) -> str:
    found = [fmt.format(schema[key]) for key, fmt in _CONSTRAINTS if key in schema]
    for sub in _schemas(schema.get("anyOf", [])):
        found += [fmt.format(sub[key]) for key, fmt in _CONSTRAINTS if key in sub]
    if (
        schema.get("type") == "object"
        and schema.get("additionalProperties") is not False
        and "properties" not in schema
    ):
        found.append("any keys")
    return ", ".join(found)


def _table(schema: JsonObject) -> list[str]:
    props = _object(schema.get("properties", {}))
    if not props:
        extra = schema.get("additionalProperties")
        return ["`{}`: no fields." if extra is False or extra is None else "Any keys (free-form object)."]
    required = set(_list(schema.get("required", [])))
    lines = ["| field | type | required | default | constraints |", "|---|---|---|---|---|"]
    for name, value in props.items():
        prop = _object(value)
        default = "" if "default" not in prop else f"`{json.dumps(prop['default'], ensure_ascii=False)}`"
        lines.append(
            f"| `{name}` | {_type(prop)} | {'yes' if name in required else ''} | {default} | {_constraints(prop)} |"
        )
    if schema.get("additionalProperties") is not False:
        lines.append("")
        lines.append("Keys other than these are accepted and kept.")
    return lines


def _refs(schema: object) -> list[str]:
    found: list[str] = []
    if isinstance(schema, dict):
        if "$ref" in schema:
            found.append(str(schema["$ref"]).rsplit("/", 1)[-1])
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
    defs = _object(schema.get("$defs", {}))
    lines = [
        f"`{part}` (`{model.__name__}`)"
        + (f": {schema['description'].strip()}" if schema.get("description") else "")
    ]
    lines += ["", *_table(schema)]
    seen: list[str] = []
    queue = _refs(schema.get("properties", {}))
    while queue:
        name = queue.pop(0)
        if name in seen or name not in defs:
            continue
        seen.append(name)
        sub = _object(defs[name])
        if "enum" in sub:
            lines += [
                "",
                f"`{name}`: one of " + ", ".join(f"`{json.dumps(v)}`" for v in _list(sub["enum"])) + ".",
            ]
            continue
        desc = f": {str(sub['description']).strip()}" if sub.get("description") else ""
        lines += ["", f"`{name}`{desc}", "", *_table(sub)]
        queue += _refs(sub.get("properties", {}))
    return lines


def render_mode(entry: ModeModels, level: str = "###") -> list[str]:
    lines = [f"{level} `{entry.mode}`", ""]
    if entry.help:
        lines += [
            f"{entry.help[0].upper()}{entry.help[1:]} ({'writes' if entry.writes else 'read-only'}).",
            "",
        ]
    lines += render_model(entry.input_model, "input_data")
    lines += [""]
    lines += render_model(entry.options_model, "options")
    return lines


def render(entries: list[ModeModels]) -> str:
    """docs/modes.md, whole."""
    lines = [
        "# Inputs of every mode",
        "",
        "<!-- Generated by `python scripts/gen_modes_doc.py` from the mode declarations (<service>/modes.py);",
        "     tests/docs/test_modes_doc.py fails when this file differs. Do not edit by hand. -->",
        "",
        'Every envelope tool takes `{"args": {"mode", "input_data", "options"}}`. Below, for each',
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
