"""Which files of a repository a repo capture looks at, and the local-state preflight."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import partial
from pathlib import Path

import pathspec

from memory_substrate.ingest.adapters._files import Allowed, open_directory, read_bytes_checked
from memory_substrate.ingest.adapters.errors import CaptureError
from memory_substrate.ingest.adapters.repo_map import PreflightReport
from memory_substrate.ingest.captured import SkippedFile

# Generated or vendored trees; never evidence about the project itself.
DEFAULT_SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "dist", "build", "target", "__pycache__", ".venv",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".next", ".nuxt", ".gradle",
    }
)  # fmt: skip
# Top-level entries written by coding agents and editors for themselves, not the project.
AGENT_STATE_ENTRIES = (".codex", ".claude", ".cursor", ".worktrees")

_PENDING_REASON = "Local coding-agent or editor state; it may not belong in durable project memory."


@dataclass
class Preflight:
    """Agent-state entries found at the top of the repository and what was done about them."""

    excluded: list[str] = field(default_factory=list)
    forced: list[str] = field(default_factory=list)

    def to_dict(self) -> PreflightReport:
        """The ``metadata["preflight"]`` shape the ingest service reports."""
        warnings = []
        if self.excluded:
            names = ", ".join(self.excluded)
            warnings.append(
                f"Found local/agent state that may not belong in memory ({names}); it was left out of "
                "this capture. Pass force=true to capture it anyway."
            )
        return {
            "requires_decision": bool(self.excluded),
            "excluded_by_preflight": list(self.excluded),
            "pending_decisions": [
                {
                    "path": p,
                    "kind": "local_agent_state",
                    "reason": _PENDING_REASON,
                    "suggested_action": "exclude",
                }
                for p in self.excluded
            ],
            "warnings": warnings,
            "suggested_exclude_patterns": list(self.excluded),
            "forced": list(self.forced),
        }


def normalize_patterns(patterns: list[str] | tuple[str, ...] | None) -> list[str]:
    """Patterns as relative POSIX globs: no ``./`` prefix, no trailing slash, no blanks."""
    out = []
    for p in patterns or ():
        p = p.strip().replace("\\", "/").removeprefix("./").rstrip("/")
        if p:
            out.append(p)
    return out


def matches_any(rel: str, patterns: list[str]) -> bool:
    """fnmatch ``rel`` or its basename against the patterns (case-sensitive, as paths are)."""
    base = rel.rsplit("/", 1)[-1]
    return any(fnmatchcase(rel, p) or fnmatchcase(base, p) for p in patterns)


class _GitIgnores:
    """Every ``.gitignore`` met so far, each applied relative to its own directory."""

    def __init__(self, max_bytes: int, allowed: Allowed | None) -> None:
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}
        self._max_bytes = max_bytes
        self._allowed = allowed
        self.skipped: list[SkippedFile] = []

    def load(self, rel_dir: str, file: Path) -> None:
        """Apply ``file`` if it is a regular file of at most ``max_bytes`` in the tree, as every file
        read is: a symlink, FIFO or device named ``.gitignore`` is passed over with a diagnostic."""
        try:
            data = read_bytes_checked(file, self._max_bytes, self._allowed)
        except CaptureError as exc:
            rel = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
            self.skipped.append({"path": rel, "reason": f"gitignore_{exc.reason}"})
            return
        lines = data.decode("utf-8", errors="replace").splitlines()
        self._specs[rel_dir] = pathspec.GitIgnoreSpec.from_lines(lines)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        verdict = False
        parts = rel.split("/")
        # Deeper files override shallower ones, as git does; within a file, the last match wins.
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            spec = self._specs.get(base)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            result = spec.check_file(sub)
            if result.include is not None:
                verdict = result.include
        return verdict


def _tree(root: Path) -> Iterator[tuple[str, list[str], list[str], Callable[[str], bool]]]:
    """(relative dir, its subdirectories (prunable), its other entries, "is this entry a symlink")
    top-down under ``root``.

    Where the platform has ``os.fwalk``, the walk holds a descriptor of each directory opened
    without following symlinks: a directory swapped for a symlink while it is walked is not
    entered, so what is listed is what lies inside the root."""
    if not hasattr(os, "fwalk"):
        for dirpath, dirnames, filenames in os.walk(root, topdown=True, followlinks=False):
            rel = Path(dirpath).relative_to(root).as_posix()
            yield ("" if rel == "." else rel), dirnames, filenames, partial(_path_is_link, dirpath)
        return
    rootfd = open_directory(root)
    try:
        for dirpath, dirnames, filenames, dirfd in os.fwalk(".", dir_fd=rootfd, follow_symlinks=False):
            rel = "" if dirpath == "." else dirpath.removeprefix("./")
            yield rel, dirnames, filenames, partial(_lstat_is_link, dirfd)
    finally:
        os.close(rootfd)


def _path_is_link(dirpath: str, name: str) -> bool:
    return os.path.islink(os.path.join(dirpath, name))


def _lstat_is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:  # gone since listed: as good as a link out, never read
        return True


@dataclass
class WalkResult:
    """Files chosen for capture (relative POSIX paths, sorted) and files passed over."""

    files: list[str]
    skipped: list[SkippedFile]
    preflight: Preflight


def walk_repo(
    root: Path,
    *,
    include_patterns: list[str],
    exclude_patterns: list[str],
    force: bool,
    max_file_bytes: int,
    allowed: Allowed | None = None,
) -> WalkResult:
    """List the files a repo capture should read, honouring skips, patterns and .gitignore.

    ``root`` is resolved and symlinked directories are never entered, so each entry met is its
    own resolved path: one ``allowed`` refuses (the store's directory or files) is passed over,
    whatever its name, and not listed."""
    ignores = _GitIgnores(max_file_bytes, allowed)
    if os.path.lexists(root / ".gitignore"):
        ignores.load("", root / ".gitignore")

    preflight = Preflight()
    for name in AGENT_STATE_ENTRIES:
        entry = root / name
        if not os.path.lexists(entry) or matches_any(name, exclude_patterns):
            continue
        if ignores.ignored(name, entry.is_dir()):
            continue
        (preflight.forced if force else preflight.excluded).append(name)

    files: list[str] = []
    skipped: list[SkippedFile] = []
    for rel_dir, dirnames, filenames, is_link in _tree(root):
        if rel_dir and ".gitignore" in filenames:
            ignores.load(rel_dir, root / rel_dir / ".gitignore")
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in DEFAULT_SKIP_DIRS or (not rel_dir and d in preflight.excluded):
                continue
            # Symlinked directories could lead outside the root or loop.
            if is_link(d) or (allowed is not None and not allowed(root / rel)):
                continue
            if matches_any(rel, exclude_patterns) or ignores.ignored(rel, True):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            rel = f"{rel_dir}/{f}" if rel_dir else f
            if (not rel_dir and f in preflight.excluded) or (allowed is not None and not allowed(root / rel)):
                continue
            if matches_any(rel, exclude_patterns) or ignores.ignored(rel, False):
                continue
            if include_patterns and not matches_any(rel, include_patterns):
                continue
            if is_link(f):
                skipped.append({"path": rel, "reason": "symlink"})
                continue
            files.append(rel)
    files.sort()
    return WalkResult(files=files, skipped=ignores.skipped + skipped, preflight=preflight)
