"""Keep obvious secrets out of captured evidence.

Two layers: files that are secrets by name or shape (``.env``, SSH keys, a bare private
key) are not captured at all; tokens in well-known formats, and the values of
``password=``/``secret:``/``api_key=``-style assignments, inside ordinary text are
replaced in place by ``[REDACTED:<kind>]``. Redaction never adds or removes lines, so
line locators computed afterwards still point at the right lines of the real file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

# Templates checked into repos on purpose; their tokens (if any) are still redacted.
_ENV_TEMPLATE_SUFFIXES = frozenset({"example", "sample", "template", "dist", "defaults"})
_SECRET_FILENAMES = {
    "id_rsa": "ssh_private_key",
    "id_dsa": "ssh_private_key",
    "id_ecdsa": "ssh_private_key",
    "id_ed25519": "ssh_private_key",
    ".netrc": "credentials_file",
    ".pgpass": "credentials_file",
    ".git-credentials": "credentials_file",
}
_SECRET_SUFFIXES = {".p12": "key_store", ".pfx": "key_store", ".jks": "key_store", ".keystore": "key_store"}

# Ordered: the first kind that matches a span names it.
TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b")),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b")),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    # sk-... keys (OpenAI, Anthropic's sk-ant-...). Demanding a digit and a letter keeps
    # long kebab-case identifiers such as "sk-button-primary-large-..." out.
    ("api_key", re.compile(r"\bsk-(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z]{2})[A-Za-z0-9_-]{20,}")),
)
# ``password=...``-style assignments (env files, YAML, JSON, INI, code, command lines): the
# value is replaced, the key kept. The value is bounded (quoted: 200 characters), so a line of
# many unterminated quotes stays linear.
_ASSIGNMENT = re.compile(
    r"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)"
    r"(?:[_.-]?key)?[\"']?[ \t]*[:=][ \t]*"
    r"(?P<value>\"[^\"\n]{4,200}\"|'[^'\n]{4,200}'|[^\s\"',;]{6,})"
)
# An unquoted value that is a name, a call, a template or a placeholder is code, not a secret.
# (A name without digits; a name with digits, such as ``hunter22``, is treated as a password.)
_NOT_A_SECRET = re.compile(r"[A-Za-z_][A-Za-z_.\[\]-]*|[A-Za-z_][\w.\[\]-]*\(.*|.*(?:\$\{|\{\{|%\(|<|\[REDACTED).*|\**")


def _assignment_replacement(m: re.Match[str]) -> str:
    """The assignment with its value redacted, or unchanged where the value is code (a name, a call)."""
    value = m.group("value")
    quoted = value[0] in "'\""
    if not quoted and _NOT_A_SECRET.fullmatch(value):
        return m.group(0)
    whole = m.group(0)
    start = m.start("value") - m.start() + (1 if quoted else 0)
    end = len(whole) - (1 if quoted else 0)
    return whole[:start] + "[REDACTED:secret_assignment]" + whole[end:]


_KEY_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")


_KEY_BODY_LINE = re.compile(r"\s*(?:[A-Za-z0-9+/=]*|(?:Proc-Type|DEK-Info|Comment):.*)\s*")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")


def _looks_like_key_body(line: str) -> bool:
    return bool(_KEY_BODY_LINE.fullmatch(line) or _BASE64_RUN.search(line))


@dataclass
class ScanResult:
    """Redacted text plus one ``withheld`` entry per redaction: {"path", "reason", "kind", "line"}."""

    text: str
    withheld: list[dict[str, Any]] = field(default_factory=list)

    @property
    def redacted(self) -> bool:
        """Whether anything was replaced."""
        return bool(self.withheld)


def secret_file_kind(path: str | PurePath) -> str | None:
    """Why a file is a secret by its name alone (``env_file``, ``ssh_private_key``...), or None."""
    name = PurePath(path).name
    lower = name.lower()
    if lower == ".env" or lower.startswith(".env."):
        tail = lower.rsplit(".", 1)[-1]
        return None if tail in _ENV_TEMPLATE_SUFFIXES else "env_file"
    if lower.endswith(".env"):
        return "env_file"
    if lower in _SECRET_FILENAMES:
        return _SECRET_FILENAMES[lower]
    return _SECRET_SUFFIXES.get(PurePath(lower).suffix)


def looks_like_private_key(text: str) -> bool:
    """True when the text is essentially one private key (a ``.pem``/``.key`` file)."""
    stripped = text.strip()
    return bool(_KEY_BEGIN.match(stripped)) and bool(_KEY_END.search(stripped[-120:]))


def _redact_keys(text: str, path: str, withheld: list[dict[str, Any]]) -> str:
    """Private key blocks, line by line: the BEGIN line becomes the marker, body lines empty."""
    lines = text.split("\n")
    in_key = False
    for i, line in enumerate(lines):
        if in_key and (_KEY_END.search(line) or _looks_like_key_body(line)):
            lines[i] = ""
            in_key = not _KEY_END.search(line)
            continue
        # A BEGIN marker without a key body under it (prose, a regex) must not blank the file.
        in_key = False
        begin = _KEY_BEGIN.search(line)
        if begin:
            end = _KEY_END.search(line, begin.end())
            # A key written on one line (an escaped string in code) loses only its own span.
            tail = line[end.end() :] if end else ""
            lines[i] = line[: begin.start()] + "[REDACTED:private_key]" + tail
            withheld.append({"path": path, "reason": "secret_redacted", "kind": "private_key", "line": i + 1})
            in_key = end is None
    return "\n".join(lines)


class _Lines:
    """1-based line numbers of increasing offsets into one text, in one pass over it overall."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        if offset < self.pos:
            self.pos, self.line = 0, 1
        self.line += self.text.count("\n", self.pos, offset)
        self.pos = offset
        return self.line


# One ``re`` call holds the GIL until it returns (~0.15 s for the assignment pattern over 2 MB),
# stalling every other thread of the server, another namespace's search included. The patterns
# therefore run over pieces of about this many characters, cut at line breaks (no pattern spans
# one, so the result is the same), and the interpreter can switch threads between pieces.
SCAN_PIECE_CHARS = 32_768


def text_pieces(text: str, size: int = SCAN_PIECE_CHARS) -> list[str]:
    """``text`` cut after a line break into pieces of about ``size`` characters (a line longer
    than ``size`` stays whole); ``"".join`` gives the text back."""
    pieces = []
    start = 0
    while len(text) - start > size:
        cut = text.find("\n", start + size)
        if cut < 0:
            break
        pieces.append(text[start : cut + 1])
        start = cut + 1
    if start < len(text) or not pieces:
        pieces.append(text[start:])
    return pieces


def _sub_counting(pattern: re.Pattern[str], text: str, repl: Any, lines: set[int]) -> str:
    """``pattern.sub(repl, text)``, adding to ``lines`` the line of every replaced match."""
    out: list[str] = []
    first_line = 1  # the line the current piece starts on
    for piece in text_pieces(text):
        where = _Lines(piece)
        base = first_line - 1

        def replace(m: re.Match[str], where: _Lines = where, base: int = base) -> str:
            new = m.expand(repl) if isinstance(repl, str) else repl(m)
            if new != m.group(0):
                lines.add(base + where.at(m.start()))
            return new

        out.append(pattern.sub(replace, piece))
        first_line += piece.count("\n")
    return "".join(out)


def scan_text(text: str, path: str) -> ScanResult:
    """Redact private key blocks, known token formats and secret assignments.

    Each pattern runs once over the whole text (a loop of several regexes per line cost ~5 µs
    a line, seconds for a 2 MB file of short lines); no pattern spans a line break, so the
    result is what a line-by-line scan gives. A private key block keeps its line count: the
    BEGIN line becomes the marker and the body lines become empty. One ``withheld`` entry per
    line and kind (per pattern), in line order.
    """
    withheld: list[dict[str, Any]] = []
    out = _redact_keys(text, path, withheld) if "PRIVATE KEY" in text else text
    found: list[tuple[int, int, str]] = []  # (line, pattern order, kind)
    for order, (kind, pattern) in enumerate((*TOKEN_PATTERNS, ("secret_assignment", _ASSIGNMENT))):
        lines: set[int] = set()
        repl: Any = _assignment_replacement if pattern is _ASSIGNMENT else f"[REDACTED:{kind}]"
        out = _sub_counting(pattern, out, repl, lines)
        found.extend((line, order, kind) for line in lines)
    for line, _order, kind in sorted(found):
        withheld.append({"path": path, "reason": "secret_redacted", "kind": kind, "line": line})
    withheld.sort(key=lambda w: w["line"])  # stable: a key marker stays before tokens on its line
    return ScanResult(out, withheld)
