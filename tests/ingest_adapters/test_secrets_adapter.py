"""Secret detection: which files are withheld and which tokens are redacted."""

from __future__ import annotations

import pytest

from memory_substrate.ingest.adapters.secret_files import looks_like_private_key, scan_text, secret_file_kind

TOKENS = {
    "aws_access_key": "AKIAIOSFODNN7EXAMPLE",
    "github_token": "ghp_" + "a" * 30 + "123456",
    "slack_token": "xoxb-" + "1234567890-abcdefghij",
    "openai_key": "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5q",
}


@pytest.mark.parametrize(("kind", "token"), TOKENS.items())
def test_each_token_format_is_redacted(kind: str, token: str) -> None:
    result = scan_text(f"before\nkey = '{token}' # note\nafter", "cfg.py")
    assert token not in result.text
    assert result.text.split("\n")[1] == f"key = '[REDACTED:{kind}]' # note"
    assert result.withheld == [{"path": "cfg.py", "reason": "secret_redacted", "kind": kind, "line": 2}]


def test_fine_grained_github_pat() -> None:
    token = "github_pat_" + "11ABCDEFG0" + "x" * 40
    result = scan_text(token, "a")
    assert result.text == "[REDACTED:github_token]"


@pytest.mark.parametrize(
    "text",
    [
        "task-1234567890abcdefghijklmnop",  # "sk-" inside a word
        "class='sk-button-primary-large-component'",  # kebab-case, no digits
        "AKIA-not-a-key and ghp_short",
        "xoxb-short",
    ],
)
def test_lookalikes_are_left_alone(text: str) -> None:
    result = scan_text(text, "a")
    assert result.text == text and not result.redacted


def test_private_key_block_keeps_line_count() -> None:
    text = "intro\n-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\nBBBB\n-----END OPENSSH PRIVATE KEY-----\noutro"
    result = scan_text(text, "notes.md")
    lines = result.text.split("\n")
    assert len(lines) == 6
    assert lines == ["intro", "[REDACTED:private_key]", "", "", "", "outro"]
    assert result.withheld[0]["line"] == 2 and result.withheld[0]["kind"] == "private_key"


def test_private_key_on_one_line_keeps_the_rest_of_the_line() -> None:
    line = 'KEY = "-----BEGIN RSA PRIVATE KEY-----\\nMIIB\\n-----END RSA PRIVATE KEY-----"  # test'
    result = scan_text(line, "conf.py")
    assert result.text == 'KEY = "[REDACTED:private_key]"  # test'


def test_key_block_in_code_strings_is_blanked_but_stray_marker_is_bounded() -> None:
    code = 'PEM = (\n    "-----BEGIN PRIVATE KEY-----\\n"\n    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n"\n    "-----END PRIVATE KEY-----\\n"\n)\nx = 1'
    result = scan_text(code, "k.py")
    assert result.text.split("\n") == ["PEM = (", '    "[REDACTED:private_key]', "", "", ")", "x = 1"]
    prose = "Never paste -----BEGIN RSA PRIVATE KEY----- blocks.\nThe next line survives.\nSo does this."
    result = scan_text(prose, "doc.md")
    assert result.text.split("\n")[1:] == ["The next line survives.", "So does this."]


def test_whole_file_private_key() -> None:
    assert looks_like_private_key("\n-----BEGIN EC PRIVATE KEY-----\nabc\n-----END EC PRIVATE KEY-----\n")
    assert not looks_like_private_key("see -----BEGIN EC PRIVATE KEY----- in the docs")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        (".env", "env_file"),
        ("config/.env.local", "env_file"),
        ("prod.env", "env_file"),
        (".env.example", None),
        (".env.sample", None),
        ("id_ed25519", "ssh_private_key"),
        ("id_ed25519.pub", None),
        ("store.p12", "key_store"),
        ("environment.py", None),
    ],
)
def test_secret_file_names(name: str, kind: str | None) -> None:
    assert secret_file_kind(name) == kind


def test_a_long_text_is_scanned_in_pieces_with_the_whole_text_result() -> None:
    """The patterns run over line-cut pieces (so no single regex call holds the GIL over a 2 MB
    text); secrets on either side of a cut, and their line numbers, come out as in one pass."""
    from memory_substrate import redaction

    filler = "plain line of prose\n" * 2_000  # 40,000 characters: more than one piece
    text = (
        f"{filler}token: {TOKENS['aws_access_key']}\n{filler}password=hunter22x\n"
        f"{filler}key {TOKENS['github_token']}"
    )
    pieces = redaction.text_pieces(text)
    assert len(pieces) >= 3 and "".join(pieces) == text
    assert all(p.endswith("\n") for p in pieces[:-1])
    result = scan_text(text, "big.txt")
    lines = result.text.split("\n")
    assert len(lines) == text.count("\n") + 1
    assert lines[2000] == "token: [REDACTED:aws_access_key]"
    assert lines[4001] == "password=[REDACTED:secret_assignment]"
    assert lines[6002] == "key [REDACTED:github_token]"
    assert [(w["kind"], w["line"]) for w in result.withheld] == [
        ("aws_access_key", 2001),
        ("secret_assignment", 4002),
        ("github_token", 6003),
    ]


def test_text_pieces_keeps_an_overlong_line_whole() -> None:
    from memory_substrate.redaction import text_pieces

    assert text_pieces("x" * 100, size=10) == ["x" * 100]
    assert text_pieces("ab\n" * 10, size=4) == ["ab\nab\n"] * 5
