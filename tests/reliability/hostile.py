"""Hypothesis strategies for hostile input: the values an attacker or a confused agent sends.

Generic over the server: tool names, modes and field names are read from what the server lists
and from the models each mode validates with, so tools and modes added later are fuzzed too.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

FTS_AND_QUERY_SYNTAX = [
    "AND",
    "OR",
    "NOT",
    "NEAR(a b, 2)",
    '"',
    '""',
    '"unclosed',
    "*",
    "a*",
    "^a",
    "col:x",
    "title:x",
    "(",
    ")",
    "((a)",
    "-a",
    "+a",
    "{a b}",
    "a:*",
    "!a",
    "a & b",
    "a | b",
    "a <-> b",
    "a' & 'b",
    "\\",
    "%",
    "_",
    "%_%",
    "$1",
    "?",
    ":name",
    "@@",
    "~",
    "^",
]
SQL_LOOKING = [
    "'; DROP TABLE objects; --",
    "1 OR 1=1",
    "' OR ''='",
    '" OR ""="',
    "x'); DELETE FROM segments; --",
    "know:x' UNION SELECT * FROM tokens --",
    "/* */",
    "-- comment",
    "\\x00",
    "E'\\\\'",
    "$$ body $$",
]
ODD_TEXT = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "\ufeff",
    "\u202e evil",
    "\n\r\t",
    "🙂" * 50,
    "名前",
    "x" * 100_001,
    "know:",
    "src:",
    "seg-0",
    "seg-999999",
    "scope:",
    "scope:x",
    "node:" + "a" * 400,
    "../../../../etc/passwd",
    "/proc/self/environ",
    "~root",
    "%2e%2e%2f",
]
NUMBERS = [
    0,
    -1,
    1,
    2**31,
    2**63,
    -(2**63) - 1,
    10**30,
    1e308,
    -0.0,
    float("inf"),
    float("nan"),
    True,
    False,
    None,
]


# Free-form keys never spell "path" or "url": those get the safe values of ``field_values``.
KEYS = st.text(max_size=8).filter(lambda k: k not in ("path", "url"))


def texts() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(FTS_AND_QUERY_SYNTAX + SQL_LOOKING + ODD_TEXT),
        st.text(max_size=40),
        st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3),
        st.builds(
            lambda a, b: a + " " + b, st.sampled_from(FTS_AND_QUERY_SYNTAX), st.sampled_from(SQL_LOOKING)
        ),
    )


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        texts(), st.sampled_from(NUMBERS), st.integers(), st.floats(allow_nan=True, allow_infinity=True)
    )


def nested(depth: int, leaf: Any = "x") -> Any:
    value: Any = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def values() -> st.SearchStrategy[Any]:
    json_like = st.recursive(
        scalars(),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
        max_leaves=12,
    )
    # The SDK client cannot serialize much deeper (pydantic stops at its own limit); the raw JSON-RPC
    # test sends deeper documents.
    deep = st.integers(min_value=20, max_value=120).map(nested)
    wide = st.integers(min_value=1000, max_value=20_000).map(lambda n: ["x"] * n)
    return st.one_of(json_like, json_like, json_like, deep, wide)


def safe_path_values(tmp_files: list[str]) -> st.SearchStrategy[Any]:
    """Paths that exercise refusals without ever walking a big tree ("/" or "." are never drawn)."""
    return st.one_of(
        st.sampled_from(
            [
                *tmp_files,
                "/nonexistent/x.md",
                "../../../../etc/shadow",
                "/dev/null",
                "/proc/self/mem",
                "/etc/passwd\x00.md",
                "~nosuchuser/x",
                "",
                " ",
                "\ud800",
            ]
        ),
        st.sampled_from(NUMBERS),
    )


# Never a host name: a name means a DNS lookup, and the tests run offline.
URL_VALUES = [
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://0/",
    "http://0.0.0.0:80/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://[fc00::1]/",
    "http://224.0.0.1/",
    "http://[::]/",
    "file:///etc/passwd",
    "ftp://127.0.0.1/",
    "gopher://127.0.0.1:25/",
    "javascript:alert(1)",
    "http://",
    "http://[::1",
    "//127.0.0.1/",
    "http://user:pass@127.0.0.1/",
    "http://127.0.0.1:99999/",
    "\x00",
    "",
]


def field_values(name: str, tmp_files: list[str]) -> st.SearchStrategy[Any]:
    if name == "path":
        return safe_path_values(tmp_files)
    if name == "url":
        return st.sampled_from(URL_VALUES)
    # Half the time a string, the type most fields want, so the value gets past type checks.
    return st.one_of(texts(), values())


def typed(annotation: Any, ids: list[str], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values of roughly the annotated type, hostile inside: they pass type checks and go deeper."""
    import datetime
    import types
    import typing

    from pydantic import BaseModel

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if depth > 3:
        return values()
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([typed(a, ids, depth + 1) for a in args if a is not type(None)] or [st.none()])
    if origin is typing.Annotated:
        return typed(args[0], ids, depth)
    if origin in (list, tuple, set, frozenset):
        return st.lists(typed(args[0] if args else Any, ids, depth + 1), min_size=1, max_size=3)
    if origin is dict or annotation is dict:
        return st.dictionaries(KEYS, values(), max_size=3)
    if annotation is str:
        return st.one_of(texts(), st.sampled_from(ids)) if ids else texts()
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return st.one_of(st.integers(min_value=-5, max_value=1000), st.sampled_from(NUMBERS))
    if annotation is float:
        return st.floats(allow_nan=True, allow_infinity=True)
    if annotation is datetime.datetime:
        return st.sampled_from(
            ["2026-01-01T00:00:00+00:00", "2026-13-45", "0001-01-01T00:00:00", "9999-12-31T23:59:59Z", "now"]
        )
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return st.fixed_dictionaries(
            {
                n: typed(f.annotation, ids, depth + 1)
                for n, f in annotation.model_fields.items()
                if f.is_required()
            },
            optional={
                n: typed(f.annotation, ids, depth + 1)
                for n, f in annotation.model_fields.items()
                if not f.is_required()
            },
        )
    return values()
