"""Adding, replacing and removing whole tables of a TOML file (Codex's config.toml) as text.

Python reads TOML (tomllib) but writes none, and a set-up must leave the user's comments and
layout alone, so it edits text: a table it adds is appended after one blank line, and a table it
removes goes with the one blank line before it, which gives the original file back byte for byte.
Every edit is checked by parsing the result: it must equal the original with exactly that change,
or nothing is written.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from memory_substrate.errors import ValidationError
from memory_substrate.hooks.nested import drop_in, get_in

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject

Path_ = tuple[str, ...]
_BARE = re.compile(r"[A-Za-z0-9_-]+")


def parse(text: str | None, where: str) -> JsonObject:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(
            f"{where} is not valid TOML ({exc}); fix it, then run setup again. Nothing was changed",
            details={"path": where},
        ) from None


def value(v: object) -> str:
    """``v`` (a string, bool, int, list or dict of those) as a TOML value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }" if v else "{}"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def _string(s: str) -> str:
    out = []
    for ch in s:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def key(k: str) -> str:
    return k if _BARE.fullmatch(k) else _string(k)


def table(path: Path_, values: Mapping[str, object]) -> str:
    """``values`` as a ``[a.b]`` table, scalars and arrays one per line."""
    lines = ["[" + ".".join(key(p) for p in path) + "]"]
    lines += [f"{key(k)} = {value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def header_path(line: str) -> Path_ | None:
    """The key path of a ``[table]`` or ``[[array]]`` header line, or None for any other line."""
    s = line.strip()
    if not s.startswith("["):
        return None
    array = s.startswith("[[")
    i = 2 if array else 1
    parts: list[str] = []
    while True:
        while i < len(s) and s[i] in " \t":
            i += 1
        if i >= len(s):
            return None
        if s[i] == '"':
            j = i + 1
            while j < len(s) and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            if j >= len(s):
                return None
            try:
                parts.append(json.loads(s[i : j + 1]))
            except ValueError:
                return None
            i = j + 1
        elif s[i] == "'":
            j = s.find("'", i + 1)
            if j < 0:
                return None
            parts.append(s[i + 1 : j])
            i = j + 1
        else:
            m = _BARE.match(s, i)
            if not m:
                return None
            parts.append(m.group())
            i = m.end()
        while i < len(s) and s[i] in " \t":
            i += 1
        if i < len(s) and s[i] == ".":
            i += 1
            continue
        close = "]]" if array else "]"
        if not s.startswith(close, i):
            return None
        rest = s[i + len(close) :].strip()
        return tuple(parts) if not rest or rest.startswith("#") else None


def _blocks(lines: list[str]) -> list[tuple[Path_, int, int]]:
    """(path, first line, last content line) of every table header block, skipping lines inside
    multi-line strings."""
    heads: list[tuple[Path_, int]] = []
    in_string: str | None = None
    for n, line in enumerate(lines):
        if in_string is None:
            path = header_path(line)
            if path is not None:
                heads.append((path, n))
                continue
        for quote in ('"""', "'''"):
            if in_string in (None, quote) and line.count(quote) % 2 == 1:
                in_string = None if in_string == quote else quote
    out = []
    for k, (path, start) in enumerate(heads):
        end = heads[k + 1][1] - 1 if k + 1 < len(heads) else len(lines) - 1
        while end > start and not lines[end].strip():
            end -= 1
        out.append((path, start, end))
    return out


def _drop(text: str, doomed: Callable[[Path_, bool], bool]) -> str:
    """``text`` without the blocks ``doomed(path, has_content)`` picks, each with the blank line before it."""
    lines = text.splitlines(keepends=True)
    bare = [line.rstrip("\r\n") for line in lines]
    gone: set[int] = set()
    for path, start, end in _blocks(bare):
        content = any(
            bare[n].strip() and not bare[n].lstrip().startswith("#") for n in range(start + 1, end + 1)
        )
        if doomed(path, content):
            gone.update(range(start, end + 1))
            if start > 0 and not bare[start - 1].strip():
                gone.add(start - 1)
    return "".join(line for n, line in enumerate(lines) if n not in gone)


def _check(before: JsonObject, text: str, expected: JsonObject, where: str, what: str) -> None:
    try:
        got = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        got = None
    if got != expected:
        raise ValidationError(
            f"cannot {what} in {where} without touching the rest of it (its layout is "
            "not one this set-up edits); nothing was changed. Make that change by hand.",
            details={"path": where},
        )


def put(text: str | None, path: Path_, values: Mapping[str, object], where: str) -> str:
    """``text`` with the table at ``path`` set to ``values``: replaced in place when it is a table
    block of its own, appended after one blank line when absent."""
    before = parse(text, where)
    expected = copy.deepcopy(before)
    node = expected
    for part in path[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):  # a value, not a table, on the way: it cannot hold one
            raise TypeError(f"'{type(child).__name__}' object does not support item assignment")
        node = child
    node[path[-1]] = values
    block = table(path, values)
    if get_in(before, list(path)) is None:
        if not text:
            new = block
        else:
            base = text if text.endswith("\n") else text + "\n"
            new = base + "\n" + block
    else:
        lines = (text or "").splitlines(keepends=True)
        bare = [line.rstrip("\r\n") for line in lines]
        own = [(s, e) for p, s, e in _blocks(bare) if p == path]
        subs = [p for p, _, _ in _blocks(bare) if p[: len(path)] == path and len(p) > len(path)]
        if len(own) != 1 or subs:
            raise ValidationError(
                f"cannot update [{'.'.join(path)}] in {where}: it is not written as a table "
                "of its own; nothing was changed. Edit it by hand.",
                details={"path": where},
            )
        start, end = own[0]
        tail = "\n" if end + 1 < len(lines) or lines[end].endswith("\n") else ""
        new = "".join(lines[:start]) + block.rstrip("\n") + tail + "".join(lines[end + 1 :])
    _check(before, new, expected, where, f"write [{'.'.join(path)}]")
    return new


def drop(text: str | None, paths: list[Path_], where: str) -> str | None:
    """``text`` without the tables at ``paths`` (and the now empty tables that held them, when the
    file spells them as empty headers of their own); None when nothing else is left."""
    before = parse(text, where)
    present = [p for p in paths if get_in(before, list(p)) is not None]
    if not present or text is None:
        return text
    expected = before
    for p in present:
        expected = drop_in(expected, list(p))
    emptied = {p[:n] for p in present for n in range(1, len(p)) if get_in(expected, list(p[:n])) is None}
    new = _drop(
        text,
        lambda path, content: any(path[: len(p)] == p for p in present) or (path in emptied and not content),
    )
    _check(before, new, expected, where, "remove " + ", ".join("[" + ".".join(p) + "]" for p in present))
    return new if new.strip() else None
