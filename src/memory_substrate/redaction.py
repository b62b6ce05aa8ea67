"""The one secret scan: every text the store keeps, from any path, passes through it first.

A secret is replaced in place by a typed marker, ``[REDACTED:<kind>]``, and the rest of the
text is kept: known token formats (OpenAI, Anthropic, AWS, GitHub, Slack, Stripe, Google, this
server's own ``mst_`` tokens, JWTs), ``Authorization`` headers, PEM private keys, the password of
a connection string (``postgres://user:[REDACTED:...]@host``), the value of a ``KEY=value``
assignment whose key names a secret, and passwords stated in prose. ``<private>...</private>``
spans are replaced whole by ``[REDACTED:private]``. docs/security.md lists the shapes and how to
add one (a ``_Rule`` below).

Every pattern is bounded or anchored so that no match attempt scans more than a bounded stretch
of text past where it starts, and a rule runs only when its literal hint occurs in the text: the
scan is linear in its input, and text without a hint costs one pass of substring checks.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypedDict, TypeVar

from pydantic import BaseModel

MARKER_PREFIX = "[REDACTED:"
T = TypeVar("T")
Answer = TypeVar("Answer", bound=Mapping[str, object])


def marker(kind: str) -> str:
    """The text that stands where a secret of ``kind`` was: ``[REDACTED:<kind>]``."""
    return f"{MARKER_PREFIX}{kind}]"


class RedactionSummary(TypedDict):
    """How many values one write redacted, in all and by kind."""

    count: int
    kinds: dict[str, int]


@dataclass
class Redactions:
    """What one write redacted: how many values of each kind, never the values."""

    kinds: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str, n: int = 1) -> None:
        self.kinds[kind] += n

    @property
    def count(self) -> int:
        return sum(self.kinds.values())

    def __bool__(self) -> bool:
        return self.count > 0

    def summary(self) -> RedactionSummary:
        """``{"count": N, "kinds": {kind: n}}``, as write answers carry it."""
        return {"count": self.count, "kinds": dict(sorted(self.kinds.items()))}

    def report(self, answer: Answer) -> Answer:
        """``answer`` with ``redacted`` added when anything was redacted; an answer without
        secrets is left exactly as it was. Any answer type is taken (a write's own result type,
        or a JSON object); every answer is a dict at run time."""
        if self and isinstance(answer, dict):
            answer["redacted"] = self.summary()
        return answer


# --- the rules --------------------------------------------------------------------------------
# A span is (kind, start, end) in the matched string; None leaves the match as it is.
Span = tuple[str, int, int]


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]  # lowercase; the rule runs only on a text holding one of them
    decide: Callable[[str, re.Match[str]], Span | None] | None = None  # default: the whole match
    # Set for a case-insensitive rule: ``pattern`` then matches the text's lowercase copy, and
    # this IGNORECASE one the text itself where lowercasing changes its length (an offset would move).
    folded: re.Pattern[str] | None = None


_TOK = "A-Za-z0-9_-"
_NOT_TOK = f"(?<![{_TOK}])"  # a token starts where no token character precedes it
# A value that stands for a secret rather than being one: an environment or template reference, a
# <placeholder>, x's or stars, an example's "your-key", a literal of a config language.
_PLACEHOLDER = re.compile(
    r"(?:.*(?:\$\{|\{\{|%\(|<[^>]*>|\{[^}]*\}|\[REDACTED).*|\$[A-Za-z_][A-Za-z0-9_]*|[xX*•.…#_-]+"
    r"|.*(?:xxxx|XXXX|\*\*\*).*|.*(?:\.\.\.|…)"
    r"|(?i:your[_-].*|none|null|nil|true|false|undefined|required|optional|empty|changeit|example|placeholder|redacted))"
)


def _placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.fullmatch(value))


_FILLER = re.compile(r"[xX*•.…#_/-]+")


def _token(kind: str, prefix: int) -> Callable[[str, re.Match[str]], Span | None]:
    """The whole match is a token unless all that follows its ``prefix`` is filler (``ghp_xxxx...``)."""

    def decide(_text: str, m: re.Match[str]) -> Span | None:
        return None if _FILLER.fullmatch(m.group(0)[prefix:]) else (kind, m.start(), m.end())

    return decide


def _tokens() -> list[_Rule]:
    def rule(kind: str, pattern: str, hints: tuple[str, ...], prefix: int = 4) -> _Rule:
        return _Rule(kind, re.compile(pattern), hints, _token(kind, prefix))

    return [
        rule("anthropic_key", _NOT_TOK + r"sk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",), 7),
        # sk-... (OpenAI, sk-proj-/sk-svcacct-/sk-admin-). A digit and two letters keep kebab-case
        # identifiers such as "sk-button-primary-large-component" out; a start needs no token
        # character before it, so the look-aheads of two starts never cover the same characters.
        rule(
            "openai_key",
            _NOT_TOK + r"sk-(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z]{2})[A-Za-z0-9_-]{20,}",
            ("sk-",),
            3,
        ),
        rule(
            "stripe_key", r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}", ("_live_", "_test_"), 8
        ),
        rule("stripe_key", _NOT_TOK + r"whsec_[A-Za-z0-9]{20,}", ("whsec_",), 6),
        rule("aws_access_key", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])", ("akia", "asia")),
        rule("github_token", _NOT_TOK + r"github_pat_[A-Za-z0-9_]{22,}", ("github_pat_",), 11),
        rule(
            "github_token",
            r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,}",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        ),
        rule("slack_token", r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{10,}", ("xox",), 5),
        rule("slack_token", r"(?<![A-Za-z0-9])xapp-\d-[A-Za-z0-9-]{10,}", ("xapp-",), 7),
        rule(
            "slack_webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{10,}",
            ("hooks.slack.com",),
            23,
        ),
        rule("google_api_key", _NOT_TOK + r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", ("aiza",)),
        # This server's bearer tokens (bearer.py: "mst_" + 43 URL-safe characters). A capital or a
        # digit keeps identifiers such as mst_edges_sorted_by_weight out.
        rule(
            "memory_substrate_token",
            _NOT_TOK + r"mst_(?=[A-Za-z0-9_-]*[A-Z0-9])[A-Za-z0-9_-]{32,}",
            ("mst_",),
        ),
        rule("jwt", _NOT_TOK + r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*", ("eyj",), 3),
    ]


def _g(text: str, m: re.Match[str], group: str) -> str | None:
    """A group's text in the original ``text`` (a folded rule matched its lowercase copy)."""
    start = m.start(group)
    return None if start < 0 else text[start : m.end(group)]


def _value_span(
    kind: str, group: str, check: Callable[[str], bool]
) -> Callable[[str, re.Match[str]], Span | None]:
    """The span of ``group`` when ``check`` holds for it (and it is no placeholder)."""

    def decide(text: str, m: re.Match[str]) -> Span | None:
        value = _g(text, m, group)
        if value is None or _placeholder(value) or not check(value):
            return None
        return kind, m.start(group), m.end(group)

    return decide


_HAS_DIGIT = re.compile(r"\d")


def _authorization(text: str, m: re.Match[str]) -> Span | None:
    value, scheme = _g(text, m, "v") or "", (_g(text, m, "scheme") or "").lower()
    if _placeholder(value):
        return None
    if scheme == "basic":
        return "basic_auth", m.start("v"), m.end("v")
    if not _HAS_DIGIT.search(value):  # "Authorization: required" is prose; every token has a digit
        return None
    return "bearer_token", m.start("v"), m.end("v")


# Assignments: ``password=...``, ``"api_key": "..."``, ``DB_PASSWORD: ...``, ``STRIPE_KEY=...``.
# The key word may stand anywhere in a name (``aws_secret_access_key``); ``_KEY``, ``_PASS`` and
# ``_AUTH`` count only in an upper-case environment name (``cache_key = "..."`` is code).
_ASSIGNED = (
    r"[\"']?[ \t]*(?::=|=>|[:=])[ \t]*"
    r"(?:\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|(?P<v>[^\s\"'`,;]{1,300}))"
)
_ASSIGNMENT = (
    r"(?P<key>(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|credentials?|database[_-]?url|dsn)(?:[_.-]?(?:key|token|secret))?)" + _ASSIGNED
)
_ENV_ASSIGNMENT = r"(?P<key>_(?:KEY|PASS|AUTH))" + _ASSIGNED
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# An unquoted value that reads as code: a call, an attribute or an index.
_CODE = re.compile(r"[A-Za-z_][\w.]*(?:\(.*|\[.*|\.[A-Za-z_][\w.]*)")
_WORD = re.compile(r"[A-Za-z_-]+")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
MIN_VALUE = 4


def _key_name(text: str, start: int) -> str:
    """The rest of the name that the key word at ``start`` ends (``DB_`` for ``PASSWORD``)."""
    i = start
    while i > 0 and start - i < 80 and text[i - 1] in _NAME_CHARS:
        i -= 1
    return text[i:start]


_PASSWORD_KEY = re.compile(r"(?i)pass|pwd|secret")
# A name, not a secret: no digit, and only what identifiers and keys are made of (``graph_import``,
# ``ttl:expiring``, ``Bearer``). Generated tokens hold digits; a password may not, so a value
# assigned to a password or a secret is redacted all the same.
_NAME_VALUE = re.compile(r"[A-Za-z_][A-Za-z_.:/-]*")
_CLOSERS = ")]}.:"


def _assignment(text: str, m: re.Match[str]) -> Span | None:
    group = "dq" if m.start("dq") >= 0 else "sq" if m.start("sq") >= 0 else "v"
    value = _g(text, m, group) or ""
    start, end = m.start(group), m.end(group)
    if group == "v":  # code closes a call or a bracket after the value: ``hash_token(token: str)``
        if _placeholder(value) or value[0] in _CLOSERS:
            return None
        stripped = value.rstrip(_CLOSERS)
        end -= len(value) - len(stripped)
        value = stripped
    if len(value) < MIN_VALUE or _placeholder(value):
        return None
    key = _g(text, m, "key") or ""
    if not _PASSWORD_KEY.search(key) and _NAME_VALUE.fullmatch(value):
        return None
    if group == "v":
        env = bool(_ENV_NAME.fullmatch(_key_name(text, m.start()) + key))
        if _CODE.fullmatch(value) or (
            value[0] in "/~." and key.lower() == "pwd"
        ):  # pwd: the working directory
            return None
        # A bare word is a type or a name in code (``token: str``), a secret in an env file.
        if _WORD.fullmatch(value) and not env:
            return None
    return "secret_assignment", start, end


# Passwords in prose: "the password is hunter2x", "password for the db is 'S3cr3t!'",
# "login with password Tr0ub4dor&3". An unquoted plain word ("the password is stored in vault",
# "is required") is left: a prose password must hold a digit or a symbol, or be quoted.
_PROSE = (
    r"pass(?<![a-z0-9_]pass)(?:word|phrase|code)s?(?![a-z0-9_])"
    r"(?:[ \t]+(?:for|of|to|on|at|in)(?:[ \t]+[^\s]{1,30}){1,4}?)?"
    r"(?:[ \t]+(?:is|was|are|will[ \t]+be|would[ \t]+be|should[ \t]+be|becomes)"
    r"(?:[ \t]+(?:now|still|just|set[ \t]+to|changed[ \t]+to))?[ \t]+(?P<q>[\"'`\u201c\u2018]?)"
    r"(?P<v>[^\s\"'`\u201d\u2019]{3,200})"
    r"|[ \t]+(?P<direct>(?=[^\s]{0,200}?\d)(?=[^\s]{0,200}?[a-z])[^\s\"'`]{6,200}))"
)
_TRAILING = ".,;:!?)]}"


def _prose(text: str, m: re.Match[str]) -> Span | None:
    group = "v" if m.start("v") >= 0 else "direct"
    start, end = m.start(group), m.end(group)
    value = _g(text, m, group) or ""
    quoted = group == "v" and m.end("q") > m.start("q")
    if not quoted:
        stripped = value.rstrip(_TRAILING)
        end -= len(value) - len(stripped)
        value = stripped
    if len(value) < MIN_VALUE or _placeholder(value):
        return None
    if not quoted and _WORD.fullmatch(value):
        return None
    return "password", start, end


def _folded(
    kind: str, pattern: str, hints: tuple[str, ...], decide: Callable[[str, re.Match[str]], Span | None]
) -> _Rule:
    """A case-insensitive rule: ``pattern`` (lower case) runs on the text's lowercase copy, which
    a regex searches for a literal many times faster than with IGNORECASE."""
    return _Rule(kind, re.compile(pattern), hints, decide, folded=re.compile(pattern, re.IGNORECASE))


def _line_rules() -> list[_Rule]:
    """The rules whose matches never span a line break, in the order they run."""
    # The scheme is not read: the literal "://" starts the search.
    connection = r"(?<=[A-Za-z0-9])://[^\s:/?#@\"'<>]{0,200}:(?P<v>[^\s/?#\"'<>]{1,300})@"
    bearer = r"bearer(?<![a-z0-9]bearer)[ \t]+(?P<v>[a-z0-9._~+/-]{16,}=*)"
    authorization = (
        r"authorization(?<![a-z0-9]authorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?:(?P<scheme>basic|bearer|token|apikey)[ \t]+)?(?P<v>[a-z0-9._~+/=:-]{8,})"
    )
    return [
        *_tokens(),
        _Rule(
            "connection_string_password",
            re.compile(connection),
            ("://",),
            _value_span("connection_string_password", "v", lambda v: True),
        ),
        _folded(
            "bearer_token",
            bearer,
            ("bearer",),
            _value_span("bearer_token", "v", lambda v: bool(_HAS_DIGIT.search(v))),
        ),
        _folded("bearer_token", authorization, ("authorization",), _authorization),
        _folded(
            "secret_assignment",
            _ASSIGNMENT,
            ("pass", "pwd", "secret", "token", "key", "credential", "database", "dsn"),
            _assignment,
        ),
        _Rule("secret_assignment", re.compile(_ENV_ASSIGNMENT), ("_key", "_pass", "_auth"), _assignment),
        _folded("password", _PROSE, ("pass",), _prose),
    ]


LINE_RULES: tuple[_Rule, ...] = tuple(_line_rules())

# --- spans over several lines: <private> and PEM private keys ---------------------------------------
_PRIVATE_TAG = re.compile(r"<(/?)private\s*>", re.IGNORECASE)
PRIVATE_KEY_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
PRIVATE_KEY_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY_LINE = re.compile(r"\s*(?:[A-Za-z0-9+/=]*|(?:Proc-Type|DEK-Info|Comment):.*)\s*")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")

Found = Callable[[str, int], None]  # (kind, 1-based line of the text as it was given)


def _private_spans(text: str, keep_lines: bool, found: Found) -> str:
    """Each outermost ``<private>...</private>`` (nested ones included; an unclosed one runs to
    the end) becomes ``[REDACTED:private]``; a stray closing tag is left."""
    out: list[str] = []
    depth, start, last = 0, 0, 0
    spans: list[tuple[int, int]] = []
    for m in _PRIVATE_TAG.finditer(text):
        if not m.group(1):
            if depth == 0:
                start = m.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                spans.append((start, m.end()))
    if depth:
        spans.append((start, len(text)))
    line, at = 1, 0
    for s, e in spans:
        line += text.count("\n", at, s)
        at = s
        found("private", line)
        out.append(text[last:s])
        out.append(marker("private") + ("\n" * text.count("\n", s, e) if keep_lines else ""))
        last = e
    out.append(text[last:])
    return "".join(out)


def _looks_like_key_body(line: str) -> bool:
    return bool(_KEY_BODY_LINE.fullmatch(line) or _BASE64_RUN.search(line))


def _private_keys(text: str, keep_lines: bool, found: Found) -> str:
    """Private key blocks, line by line: the BEGIN line becomes the marker; the body lines become
    empty (``keep_lines``, so line numbers still point at the real file) or go."""
    lines = text.split("\n")
    body: set[int] = set()
    in_key = False
    for i, line in enumerate(lines):
        if in_key and (PRIVATE_KEY_END.search(line) or _looks_like_key_body(line)):
            body.add(i)
            in_key = not PRIVATE_KEY_END.search(line)
            continue
        # A BEGIN marker without a key body under it (prose, a regex) must not blank the text.
        in_key = False
        begin = PRIVATE_KEY_BEGIN.search(line)
        if begin:
            end = PRIVATE_KEY_END.search(line, begin.end())
            # A key written on one line (an escaped string in code) loses only its own span.
            tail = line[end.end() :] if end else ""
            lines[i] = line[: begin.start()] + marker("private_key") + tail
            found("private_key", i + 1)
            in_key = end is None
    if keep_lines:
        return "\n".join("" if i in body else line for i, line in enumerate(lines))
    return "\n".join(line for i, line in enumerate(lines) if i not in body)


# --- running the rules ---------------------------------------------------------------------------
# One ``re`` call holds the GIL until it returns (~0.15 s for the assignment pattern over 2 MB),
# stalling every other thread of the server, another namespace's search included. The line rules
# therefore run over pieces of about this many characters, cut at line breaks (no line rule spans
# one, so the result is the same), and the interpreter can switch threads between pieces.
SCAN_PIECE_CHARS = 32_768


_Trie: TypeAlias = "dict[str, _Trie]"  # each character leads to the rest; "" marks a word's end


def _trie(words: Iterable[str]) -> str:
    """One regex matching any of ``words``, factored by common prefixes: a regex tries the
    branches of an alternation one by one at each position, a trie one character."""
    tree: _Trie = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(tree)


_ALL_HINTS = tuple(sorted({h for r in LINE_RULES for h in r.hints} | {"<private", "private key"}))
_ANY_HINT = re.compile(_trie(_ALL_HINTS))


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


def _run_rule(rule: _Rule, text: str, found: Found) -> str:
    out: list[str] = []
    first_line = 1  # the line the current piece starts on
    for piece in text_pieces(text):
        counted = [0, 1]  # offset up to which lines are counted, the line there
        pattern, target = rule.pattern, piece
        if rule.folded is not None:
            target = piece.lower()
            if len(target) != len(piece):
                pattern, target = rule.folded, piece
        pieces: list[str] = []
        last = 0
        for m in pattern.finditer(target):
            span = rule.decide(piece, m) if rule.decide else (rule.kind, m.start(), m.end())
            if span is None:
                continue
            kind, s, e = span
            counted[1] += piece.count("\n", counted[0], s)
            counted[0] = s
            found(kind, first_line + counted[1] - 1)
            pieces.append(piece[last:s])
            pieces.append(marker(kind))
            last = e
        if pieces:
            pieces.append(piece[last:])
            out.append("".join(pieces))
        else:
            out.append(piece)
        first_line += piece.count("\n")
    return "".join(out)


def scan(text: str, found: Found, *, keep_lines: bool = False) -> str:
    """``text`` with every secret replaced by its marker, calling ``found(kind, line)`` once per
    value replaced. ``keep_lines``: the result has the same lines as ``text`` (a private key's
    body lines and a private span's line breaks stay, empty), so line numbers computed on it
    still point at the original (file capture locates segments by line)."""
    low = text.lower()
    if not _ANY_HINT.search(low):
        return text
    hits = [0]

    def counted(kind: str, line: int) -> None:
        hits[0] += 1
        found(kind, line)

    out = text
    if "<private" in low:
        out = _private_spans(out, keep_lines, counted)
    if "private key" in low:
        out = _private_keys(out, keep_lines, counted)
    for rule in LINE_RULES:
        for hint in rule.hints:
            if hint in low:
                out = _run_rule(rule, out, counted)
                break
    return out if hits[0] else text  # the same object when nothing was found


def redact_text(text: str, found: Redactions | None = None) -> str:
    """``text`` with every secret replaced by its ``[REDACTED:<kind>]`` marker and every
    ``<private>`` span by ``[REDACTED:private]``; the rest of the text is kept. Each value
    replaced is counted in ``found`` by kind. Text without secrets comes back unchanged."""
    if not _ANY_HINT.search(text.lower()):  # most texts: one search, nothing allocated
        return text
    tally = found if found is not None else Redactions()
    return scan(text, lambda kind, _line: tally.add(kind))


def redact_value(value: T, found: Redactions | None = None) -> T:
    """A JSON-shaped value (dicts, lists, strings; pydantic models in place) with every string
    redacted, dict keys included. What holds no secret is returned as the same object."""
    return _walk(value, found if found is not None else Redactions())  # type: ignore[no-any-return]


def redact_fields(model: BaseModel, found: Redactions | None = None) -> None:
    """Redact a parsed input in place: every string field, nested models, lists and dicts.
    Assigned through ``__dict__`` so ``model_fields_set`` still says what the caller gave."""
    tally = found if found is not None else Redactions()
    for name in type(model).model_fields:
        value = getattr(model, name)
        new = _walk(value, tally)
        if new is not value:
            model.__dict__[name] = new


def _walk(value: Any, found: Redactions) -> Any:
    if isinstance(value, str):
        return redact_text(value, found) if value else value
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        for i, (k, v) in enumerate(value.items()):
            k2, v2 = _walk(k, found), _walk(v, found)
            if out is None and (k2 is not k or v2 is not v):
                out = dict(list(value.items())[:i])  # what came before was unchanged
            if out is not None:
                out[k2] = v2
        return value if out is None else out
    if isinstance(value, list | tuple):
        walked = [_walk(v, found) for v in value]
        if any(a is not b for a, b in zip(walked, value, strict=True)):
            return type(value)(walked) if isinstance(value, tuple) else walked
        return value
    if isinstance(value, BaseModel):
        redact_fields(value, found)
    return value


def kinds() -> Iterable[str]:
    """Every kind a marker can name, for the docs and their test."""
    return sorted({r.kind for r in LINE_RULES} | {"private", "private_key", "basic_auth"})
