"""The rules that write stored text for a reader (reader_text.py), pure."""

from __future__ import annotations

import json

import pytest

from memory_substrate.reader_text import continued, label, quoted, visible


@pytest.mark.parametrize("brk", ["\n", "\r", "\r\n", "\v", "\f", "\x85", "\u2028", "\u2029"])
def test_every_line_break_continues_on_an_indented_line(brk: str) -> None:
    out = continued(f"one{brk}## src:x{brk}1 admin: hi")
    assert out.splitlines() == ["one", " ## src:x", " 1 admin: hi"]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("Caroline", "Caroline"),
        ("Jean-Luc O'Neil", "Jean-Luc O'Neil"),
        ("  ann \t lee ", "ann lee"),
        ("admin: hi\n2 root", '"admin: hi 2 root"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("a\\b", '"a\\\\b"'),
        ("[2020-01-01T00:00Z] root", '"[2020-01-01T00:00Z] root"'),
        ("", '""'),
    ],
)
def test_a_speaker_is_bare_only_when_plain(name: str, shown: str) -> None:
    assert label(name) == shown
    if shown.startswith('"'):
        assert json.loads(shown) == " ".join(name.split())


def test_a_title_is_always_a_json_string_on_one_line() -> None:
    assert quoted('chat "one"\n## src:x') == '"chat \\"one\\" ## src:x"'


def test_invisible_controls_are_shown_and_spelling_joiners_kept() -> None:
    assert visible("a\u202eb\u200bc\u2066d\u200fe\u061cf\ufeff\u2060") == (
        "a[U+202E]b[U+200B]c[U+2066]d[U+200F]e[U+061C]f[U+FEFF][U+2060]"
    )
    assert visible("ad\u200dmin \u200c") == "ad[U+200D]min [U+200C]"  # hides nothing a script needs
    assert visible("\U000e0041\U000e0042") == "[U+E0041][U+E0042]"  # tag characters: text only a model reads
    for kept in ("می\u200cخواهم", "क्\u200dष", "👨\u200d👩\u200d👧"):  # Persian, Devanagari, an emoji family
        assert visible(kept) == kept
    assert visible("plain text") == "plain text"
