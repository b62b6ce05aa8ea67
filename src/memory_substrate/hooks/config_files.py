"""Editing a client's own configuration files: planned in full first, then written atomically.

A set-up computes every file's new text before it writes any, so a file it cannot read or merge
stops it with nothing written. A JSON file is written back in the layout it was read in (its
indent, whether it ends with a newline), so that adding and then removing our entries gives the
user's file back byte for byte when the client wrote it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from memory_substrate.errors import ValidationError

if TYPE_CHECKING:
    from memory_substrate.json_types import JsonObject

Action = Literal["create", "update", "delete", "unchanged"]


@dataclass(frozen=True)
class FileEdit:
    """One file's planned change: ``after`` None deletes it, ``before`` None means it does not exist."""

    path: Path
    before: str | None
    after: str | None
    what: str  # what changes in it, for the user
    prune_folder: bool = False  # deleting the file also deletes its folder when that is left empty

    @property
    def action(self) -> Action:
        if self.before == self.after:
            return "unchanged"
        if self.after is None:
            return "delete"
        return "create" if self.before is None else "update"


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValidationError(
            f"cannot read {path}: {reason}; nothing was changed", details={"path": str(path)}
        ) from None


@dataclass
class JsonDocument:
    """A JSON object file as read, with the layout to write it back in."""

    path: Path
    text: str | None
    data: JsonObject
    indent: int | str = 2
    newline: bool = True

    @classmethod
    def load(cls, path: Path) -> JsonDocument:
        text = read_text(path)
        if text is None or not text.strip():
            return cls(path, text, {})
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"{path} is not valid JSON ({exc}); fix or move it, then run setup again. "
                "Nothing was changed",
                details={"path": str(path)},
            ) from None
        if not isinstance(data, dict):
            raise ValidationError(
                f"{path} does not hold a JSON object; nothing was changed", details={"path": str(path)}
            )
        return cls(path, text, data, _indent_of(text), text.endswith("\n"))

    def render(self, data: JsonObject) -> str | None:
        """The file's text holding ``data``, or None (delete) when ``data`` is empty and the file
        held nothing else before."""
        if not data and not self.data:
            return self.text
        if not data:
            return None
        text = json.dumps(data, indent=self.indent, ensure_ascii=False)
        return text + "\n" if self.newline else text

    def edit(self, data: JsonObject, what: str, prune_folder: bool = False) -> FileEdit:
        after = self.render(data)
        if after is not None and self.text is not None and data == self.data:
            after = self.text  # same content: keep the user's bytes
        return FileEdit(self.path, self.text, after, what, prune_folder)


def _indent_of(text: str) -> int | str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return lead if "\t" in lead else len(lead)
    return 2


def apply(edits: list[FileEdit]) -> None:
    """Write every edit. Each file is replaced atomically (a temporary file in its folder, then a
    rename), keeping the permissions of the file it replaces: ``~/.claude.json`` is private."""
    for edit in edits:
        if edit.action == "unchanged":
            continue
        if edit.after is None:
            edit.path.unlink(missing_ok=True)
            if edit.prune_folder:
                with contextlib.suppress(OSError):  # not empty: the user keeps more there
                    edit.path.parent.rmdir()
            continue
        write_atomically(edit.path, edit.after)


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
