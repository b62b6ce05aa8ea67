"""Filesystem access as a capability: which local paths a caller may name.

Every mode and command that takes a path (``memory_ingest`` ``file``/``markdown``/``repo``/``pdf``,
the importers) resolves it here, and every walker checks each entry it meets with
``PathPolicy.contains``. A path is resolved first (``~``, ``..`` and symlinks), then checked
against the allowed roots; so a relative climb, a home-directory shortcut or a symlink cannot
reach outside them.

Two kinds of policy:

* **open** (``roots is None``): any path the process can read. The default over stdio and in
  the CLI, where the caller is the user on the user's own machine. ``doctor`` says so.
* **restricted** (``roots`` a tuple, possibly empty): only paths under one of the roots, and
  never under the store's own directory.

Under both, the store's own files (the database and every file named after it: ``-wal``,
``-shm``, ``-journal``, ``-writer.lock``) are denied wherever the store lives, and a walker
never lists them. A path is checked by name, then opened once without following a symlink
anywhere (``adapters/_files.open_checked``) and the opened descriptor checked again, so a
symlink swapped in between the check and the open leads nowhere. Hard links are not symlinks:
a hard link inside a root *is* a file inside the root and is read (docs/security.md). The default over HTTP is the empty tuple, meaning no
  filesystem access at all; ``serve --allow-path DIR`` (repeatable) or the setting
  ``MEMORY_SUBSTRATE_ALLOW_PATHS`` opens directories.

Under a restricted policy a refused path, a missing path, and a path of the wrong kind (a
directory where a file is wanted) raise the *same* error with the same message, which names
only what the caller sent: a caller cannot learn which paths exist on the server.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal

from memory_substrate.errors import ValidationError
from memory_substrate.ingest.adapters._files import open_checked
from memory_substrate.ingest.adapters.errors import CaptureError
from memory_substrate.json_types import JsonObject
from memory_substrate.storage.factory import store_files

Kind = Literal["file", "directory"]
UNAVAILABLE = "not_found"  # the one reason a restricted policy gives for every refusal


def expand(raw: str | os.PathLike[str]) -> Path:
    """``raw`` with ``~`` expanded and made absolute (against the working directory), symlinks resolved."""
    try:
        return Path(raw).expanduser().resolve()
    except RuntimeError as exc:  # "~someone" names a user this machine does not have, or a symlink loop
        raise ValidationError(f"path: {exc}", details={"path": str(raw)}) from None


def is_within(path: Path, root: Path) -> bool:
    """Whether the resolved ``path`` is ``root`` or below it (both already resolved)."""
    return path == root or root in path.parents


@dataclass(frozen=True)
class PathPolicy:
    """Allowed roots (resolved); ``None`` means every path is allowed."""

    roots: tuple[Path, ...] | None = None
    denied: tuple[Path, ...] = ()
    # The store's database files (resolved); each one and its siblings named after it are denied.
    store: tuple[Path, ...] = ()

    @classmethod
    def from_settings(cls, settings: Any) -> PathPolicy:
        """The policy the settings describe: ``allow_paths`` None -> open, a list -> those roots.

        The store's own files are denied under every policy, its directory under a restricted one.
        """
        store = tuple(expand(f) for f in store_files(settings))
        allow = getattr(settings, "allow_paths", None)
        if allow is None:
            return cls(None, store=store)
        denied = (expand(settings.root),) if getattr(settings, "root", None) is not None else ()
        return cls.restricted(allow, denied=denied, store=store)

    @classmethod
    def restricted(
        cls,
        roots: Iterable[str | os.PathLike[str]],
        *,
        denied: Iterable[Path] = (),
        store: Iterable[Path] = (),
    ) -> PathPolicy:
        resolved = tuple(dict.fromkeys(expand(r) for r in roots))
        return cls(resolved, tuple(denied), tuple(store))

    @property
    def is_open(self) -> bool:
        return self.roots is None

    def describe(self) -> JsonObject:
        """For ``doctor`` and logs: the mode and the roots."""
        if self.roots is None:
            return {
                "mode": "open",
                "allowed_roots": None,
                "note": "any path this process can read (stdio/CLI default); set MEMORY_SUBSTRATE_ALLOW_PATHS to restrict",
            }
        return {
            "mode": "restricted" if self.roots else "closed",
            "allowed_roots": [str(r) for r in self.roots],
        }

    def is_store_file(self, resolved: Path) -> bool:
        """Whether ``resolved`` is one of the store's files: the database or a sibling named after it."""
        return any(resolved.parent == f.parent and resolved.name.startswith(f.name) for f in self.store)

    def contains(self, resolved: Path) -> bool:
        """Whether an already resolved path may be read."""
        if self.is_store_file(resolved):
            return False
        if self.roots is None:
            return True
        if any(is_within(resolved, d) for d in self.denied):
            return False
        return any(is_within(resolved, r) for r in self.roots)

    def resolve(self, raw: str | os.PathLike[str], kind: Kind = "file") -> Path:
        """The resolved path a caller named, if the policy lets it be read as ``kind``.

        Under an open policy, only resolution happens (the adapters report a missing file
        themselves). Under a restricted one, a path outside the roots, missing, or not of
        ``kind`` raises one ``CaptureError`` whose message names only ``raw``.
        """
        if self.roots is None:
            path = expand(raw)
            if self.is_store_file(path):
                raise self.unavailable(raw)
            return path
        try:
            path = expand(raw)
            # is_file/is_dir raise on a name too long or a directory this process may not search:
            # that too is the one refusal, not an error telling the caller the path is there.
            ok = self.contains(path) and (path.is_file() if kind == "file" else path.is_dir())
        except (ValidationError, OSError):
            raise self.unavailable(raw) from None
        if not ok:
            raise self.unavailable(raw)
        return path

    def open_binary(self, resolved: Path) -> BinaryIO:
        """``resolved`` opened once for reading (see ``open_checked``), checked again as opened."""
        try:
            return os.fdopen(open_checked(resolved, self.contains), "rb")
        except CaptureError:
            if self.roots is None:
                raise
            raise self.unavailable(resolved) from None

    @staticmethod
    def unavailable(raw: str | os.PathLike[str]) -> CaptureError:
        """The single refusal: the same for "outside the allowed roots" and "does not exist"."""
        return CaptureError(
            UNAVAILABLE,
            f"no readable file or directory at {os.fspath(raw)!r} within this server's allowed paths",
            details={"path": os.fspath(raw)},
        )


def leaves_root(entry: Path, root: Path) -> bool:
    """Whether ``entry`` (a path met by a walker under ``root``) is a symlink that resolves outside it."""
    if not entry.is_symlink():
        return False
    try:
        target = entry.resolve()
    except (OSError, RuntimeError):
        return True
    return not is_within(target, root)
