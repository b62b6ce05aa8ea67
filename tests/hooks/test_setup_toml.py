"""The text edits of Codex's config.toml (hooks/toml_tables.py) on layouts users write: every
edit gives back a file that parses to the original plus exactly that change, or none at all."""

from __future__ import annotations

import tomllib

import pytest

from memory_substrate.errors import ValidationError
from memory_substrate.hooks import toml_tables

OURS = ("mcp_servers", "memory-substrate")
TABLE = {
    "command": "C:\\Program Files\\ms\\memory-substrate.exe",
    "args": ["serve", "--root", 'a "b"\tc\x7f'],
}


@pytest.mark.parametrize(
    "original",
    [
        "",
        'model = "o3"',  # no final newline
        'model = "o3"\n\n\n',  # blank lines at the end are the user's
        "# only a comment\n",
        "a = 1\r\n[t]\r\nb = 2\r\n",  # Windows line ends
        'notes = """\n[not a table]\n"""\n[x]\ny = 1\n',  # a header-like line inside a string
    ],
)
def test_add_then_remove_gives_the_file_back(original: str) -> None:
    added = toml_tables.put(original, OURS, TABLE, "config.toml")
    parsed = tomllib.loads(added)
    assert parsed["mcp_servers"]["memory-substrate"] == TABLE
    assert {k: v for k, v in parsed.items() if k != "mcp_servers"} == tomllib.loads(original)
    removed = toml_tables.drop(added, [OURS], "config.toml")
    expected = original if original.endswith("\n") or not original else original + "\n"
    assert (removed or "") == expected


def test_update_in_place_keeps_neighbours_and_subtables_go_with_their_table() -> None:
    text = (
        '[mcp_servers.memory-substrate]\ncommand = "/old"\nargs = ["serve"]\n\n'
        '[mcp_servers.other]\ncommand = "x"\n'
    )
    updated = toml_tables.put(text, OURS, TABLE, "c")
    assert updated.endswith('[mcp_servers.other]\ncommand = "x"\n')
    assert tomllib.loads(updated)["mcp_servers"]["memory-substrate"] == TABLE
    with_env = text.replace(
        'args = ["serve"]\n', 'args = ["serve"]\n\n[mcp_servers.memory-substrate.env]\nA = "1"\n'
    )
    assert tomllib.loads(toml_tables.drop(with_env, [OURS], "c") or "") == {
        "mcp_servers": {"other": {"command": "x"}}
    }
    with pytest.raises(ValidationError, match="by hand"):
        toml_tables.put(with_env, OURS, TABLE, "c")  # a subtable the new table would not hold


def test_trust_entries_with_dotted_quoted_keys_and_their_empty_parents_go() -> None:
    key = "/home/me/.codex/hooks.json:session_start:0:0"
    text = (
        f'model = "o3"\n\n[hooks.state]\n\n[hooks.state."{key}"]\ntrusted_hash = "sha256:ab"\n\n'
        '[hooks.state."/other:stop:0:0"]\ntrusted_hash = "sha256:cd"\n'
    )
    kept = toml_tables.drop(text, [("hooks", "state", key)], "c") or ""
    assert tomllib.loads(kept)["hooks"]["state"] == {"/other:stop:0:0": {"trusted_hash": "sha256:cd"}}
    alone = toml_tables.drop(kept, [("hooks", "state", "/other:stop:0:0")], "c")
    assert alone == 'model = "o3"\n'


def test_a_layout_it_cannot_edit_is_refused() -> None:
    inline = '[mcp_servers]\nmemory-substrate = { command = "x" }\n'
    with pytest.raises(ValidationError):
        toml_tables.drop(inline, [OURS], "c")
    dotted = 'mcp_servers.memory-substrate.command = "x"\n'
    with pytest.raises(ValidationError):
        toml_tables.put(dotted, OURS, TABLE, "c")
    with pytest.raises(ValidationError, match="not valid TOML"):
        toml_tables.put("a = [", OURS, TABLE, "c")
