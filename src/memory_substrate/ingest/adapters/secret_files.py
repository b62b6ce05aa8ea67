"""Keep secrets out of captured evidence.

Two layers: files that are secrets by name or shape (``.env``, SSH keys, a bare private
key) are not captured at all; secrets inside ordinary text are replaced in place by
``[REDACTED:<kind>]`` by the one scan every write path uses (redaction.py). A capture keeps
every line of the file (a private key's body lines become empty), so line locators computed
afterwards still point at the right lines of the real file, and it reports each redaction by
line and kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from memory_substrate.ingest.captured import WithheldFile
from memory_substrate.redaction import PRIVATE_KEY_BEGIN, PRIVATE_KEY_END, scan

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


@dataclass
class ScanResult:
    """Redacted text plus one ``withheld`` entry per redaction: {"path", "reason", "kind", "line"}."""

    text: str
    withheld: list[WithheldFile] = field(default_factory=list)

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
    return bool(PRIVATE_KEY_BEGIN.match(stripped)) and bool(PRIVATE_KEY_END.search(stripped[-120:]))


def scan_text(text: str, path: str) -> ScanResult:
    """The file's text redacted line for line (redaction.scan with ``keep_lines``), with one
    ``withheld`` entry per line and kind, in line order (a key's marker before the tokens of
    its line)."""
    found: dict[tuple[int, str], int] = {}  # (line, kind) -> the order it was first found in

    def note(kind: str, line: int) -> None:
        found.setdefault((line, kind), len(found))

    out = scan(text, note, keep_lines=True)
    ordered = sorted(found, key=lambda lk: (lk[0], found[lk]))
    return ScanResult(
        out,
        [{"path": path, "reason": "secret_redacted", "kind": kind, "line": line} for line, kind in ordered],
    )
