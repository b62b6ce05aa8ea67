"""The deterministic pass that keeps what generic extraction loses (its "specific facts"):
IP addresses, CLI invocations, resource names, ports, version strings and numeric counts.
No model: regular expressions with validation, run at ingest, stored on the episode."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

MAX_PER_EPISODE = 100

# After a value, a period ends it only when no word follows (a sentence's end: "at 10.0.3.17.");
# "10.0.3.17.5" and "1.2.3.4.5" are neither an address nor a version.
_END = r"(?!\w|\.\w)"
_IPV4 = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?:/(\d{1,2}))?" + _END)
_IPV6 = re.compile(r"(?<![\w:])((?:[0-9a-fA-F]{1,4}:){2,7}[0-9a-fA-F]{0,4}|::1)(?![\w:])")
_PORT = re.compile(r"\bport\s+(\d{2,5})\b|(?<=[\w\]])\:(\d{2,5})\b(?![.:]\d)", re.IGNORECASE)
_VERSION = re.compile(r"(?<![\w.])(v?\d+\.\d+(?:\.\d+){0,2}(?:[-+][0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?)" + _END)
_NAMED_BEFORE = re.compile(r"(?:\b(?i:version|release|v)|\b[A-Z][\w+#-]*)\s*$")
_CLI_TOOLS = (
    "kubectl|docker|git|npm|npx|pnpm|yarn|pip|pip3|python|python3|uv|poetry|terraform|az|aws|gcloud|helm|psql|"
    "curl|wget|ssh|scp|make|cargo|go|mvn|gradle|systemctl|journalctl|ansible|ansible-playbook|brew|apt|apt-get|"
    "redis-cli|mysql|mongosh|sqlite3|ffmpeg|openssl|memory-substrate"
)
_BACKTICK = re.compile(r"`([^`\n]{3,300})`")
# [ \t], not \s: "\s*" at a line start ran over every following blank line (quadratic on " \n" * n).
_PROMPT = re.compile(r"(?m)^[ \t]*\$[ \t]+(\S[^\n]{1,300})$")
_CLI_START = re.compile(rf"^(?:sudo\s+)?(?:{_CLI_TOOLS})(?:\s|$)")
_CLI_INLINE = re.compile(
    rf"(?<![\w/-])((?:sudo\s+)?(?:{_CLI_TOOLS})\s+[a-z\-][^\s,;`]*(?:\s+[^\s,;`]+){{0,8}})"
)
_RESOURCE = re.compile(
    r"(arn:aws[\w-]*:[\w-]+:[\w-]*:\d*:[\w\-/:.]+"  # AWS ARNs
    r"|/subscriptions/[0-9a-fA-F-]{36}(?:/[\w.\-]+){0,12}"  # Azure resource ids
    r"|projects/[a-z][\w-]{3,}(?:/[\w.\-]+){1,8}"  # GCP resource names
    # host names, starting where a name can start: from every position inside "a.a.a..." the
    # labels were re-read to the end (quadratic: 20k characters took 9 s)
    r"|(?<![a-z0-9.-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|net|org|io|dev|app|cloud|internal|local|svc|ai)\b)"
)
_COUNT = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?[kKmM]?)\s+"
    r"(users|customers|requests|rps|qps|nodes|replicas|instances|pods|servers|shards|partitions|workers|threads|"
    r"connections|cores|vcpus|gb|gib|tb|mb|ms|seconds|minutes|hours|days|tickets|errors|retries|tables|rows|"
    r"records|events|messages|services|tenants|regions|zones|clusters|containers|jobs|tests|engineers)\b",
    re.IGNORECASE,
)


def _ips(text: str) -> Iterable[tuple[str, str]]:
    for m in _IPV4.finditer(text):
        try:
            ipaddress.IPv4Address(m.group(1))
        except ValueError:
            continue
        yield "ip", m.group(0)
    for m in _IPV6.finditer(text):
        try:
            ipaddress.IPv6Address(m.group(1))
        except ValueError:
            continue
        yield "ip", m.group(1)


def _commands(text: str) -> Iterable[tuple[str, str]]:
    seen: set[str] = set()
    for m in [*_BACKTICK.finditer(text), *_PROMPT.finditer(text)]:
        cmd = m.group(1).strip()
        if _CLI_START.match(cmd):
            seen.add(cmd)
            yield "cli", cmd
    bare = _PROMPT.sub(" ", _BACKTICK.sub(" ", text))
    sentences = re.split(r"(?<=[.!?])\s+|\n", bare)
    for m in (m for sentence in sentences for m in _CLI_INLINE.finditer(sentence)):
        # In prose only a command with a flag counts ("go to the park" is not `go`), and a
        # sentence end closes it.
        tokens: list[str] = []
        for tok in m.group(1).split():
            tokens.append(tok.rstrip(".") if tok.endswith(".") else tok)
            if tok.endswith("."):
                break
        cmd = " ".join(tokens)
        if any(t.startswith("-") and len(t) > 1 for t in tokens[1:]) and cmd not in seen:
            seen.add(cmd)
            yield "cli", cmd


PIECE_CHARS = 16_384


def _pieces(text: str) -> list[str]:
    """``text`` cut at line ends (else at a space) into pieces of at most ~16 KB.

    Each regex pass holds the GIL for as long as it scans; over a whole long message that kept
    every other request of the server waiting. A piece is short enough to keep the wait short.
    A fact spanning a cut is lost only in a line longer than a piece with no space near its end.
    """
    if len(text) <= PIECE_CHARS:
        return [text]
    out = []
    start = 0
    while start < len(text):
        end = min(len(text), start + PIECE_CHARS)
        if end < len(text):
            cut = text.rfind("\n", start, end)
            if cut <= start:
                cut = text.rfind(" ", start, end)
            if cut > start:
                end = cut + 1
        out.append(text[start:end])
        start = end
    return out


def _ports(text: str) -> Iterable[tuple[str, str]]:
    for m in _PORT.finditer(text):
        port = m.group(1) or m.group(2)
        if port and 1 <= int(port) <= 65535:
            yield "port", port


def _versions(text: str, ip_texts: set[str]) -> Iterable[tuple[str, str]]:
    for m in _VERSION.finditer(text):
        v = m.group(1)
        if any(v in ip for ip in ip_texts):
            continue
        if (
            v.count(".") == 1
            and not v.startswith("v")
            and not _NAMED_BEFORE.search(text[max(0, m.start() - 40) : m.start()])
        ):
            continue  # "3.5" alone is a number; "version 3.5", "Python 3.11", "v3.5" and "1.2.3" are versions
        yield "version", v


def _resources(text: str) -> Iterable[tuple[str, str]]:
    for m in _RESOURCE.finditer(text):
        yield "resource", m.group(1).rstrip(".:")


def _counts(text: str) -> Iterable[tuple[str, str]]:
    for m in _COUNT.finditer(text):
        yield "count", f"{m.group(1)} {m.group(2).lower()}"


def specific_facts(text: str) -> list[dict[str, str]]:
    """Specific facts in one text, in order of kind then appearance, de-duplicated."""
    pieces = _pieces(text)
    found: list[tuple[str, str]] = []
    found.extend(f for p in pieces for f in _ips(p))
    found.extend(f for p in pieces for f in _ports(p))
    ip_texts = {v for k, v in found if k == "ip"}
    found.extend(f for p in pieces for f in _versions(p, ip_texts))
    found.extend(f for p in pieces for f in _commands(p))
    found.extend(f for p in pieces for f in _resources(p))
    found.extend(f for p in pieces for f in _counts(p))
    out: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for kind, value in found:
        if (kind, value) not in seen:
            seen.add((kind, value))
            out.append({"kind": kind, "value": value})
    return out


def episode_specific_facts(segments: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """Specific facts of an episode's segments, each with the id of the segment it came from."""
    out: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for segment_id, text in segments:
        for fact in specific_facts(text):
            key = (fact["kind"], fact["value"])
            if key in seen:
                continue
            seen.add(key)
            out.append({**fact, "segment_id": segment_id})
            if len(out) >= MAX_PER_EPISODE:
                return out
    return out
