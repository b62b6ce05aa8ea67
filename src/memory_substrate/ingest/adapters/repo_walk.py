"""Which files of a repository a repo capture looks at, and the local-state preflight."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pathspec

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

    def to_dict(self) -> dict[str, Any]:
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

    def __init__(self) -> None:
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}

    def load(self, rel_dir: str, file: Path) -> None:
        try:
            lines = file.read_text("utf-8", errors="replace").splitlines()
        except OSError:
            return
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


@dataclass
class WalkResult:
    """Files chosen for capture (relative POSIX paths, sorted) and files passed over."""

    files: list[str]
    skipped: list[dict[str, Any]]
    preflight: Preflight


def walk_repo(
    root: Path,
    *,
    include_patterns: list[str],
    exclude_patterns: list[str],
    force: bool,
    denied: tuple[Path, ...] = (),
) -> WalkResult:
    """List the files a repo capture should read, honouring skips, patterns and .gitignore.

    ``root`` is resolved and symlinked directories are never entered, so each directory met is
    its own resolved path: one in ``denied`` (resolved) is passed over, whatever its name."""
    deny = {os.fspath(d) for d in denied}
    ignores = _GitIgnores()
    if (root / ".gitignore").is_file():
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
    skipped: list[dict[str, Any]] = []
    for dirpath, dirnames, filenames in os.walk(root, topdown=True, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        if rel_dir and ".gitignore" in filenames:
            ignores.load(rel_dir, Path(dirpath) / ".gitignore")
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in DEFAULT_SKIP_DIRS or (not rel_dir and d in preflight.excluded):
                continue
            # Symlinked directories could lead outside the root or loop.
            if os.path.islink(os.path.join(dirpath, d)) or os.path.join(dirpath, d) in deny:
                continue
            if matches_any(rel, exclude_patterns) or ignores.ignored(rel, True):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            rel = f"{rel_dir}/{f}" if rel_dir else f
            if not rel_dir and f in preflight.excluded:
                continue
            if matches_any(rel, exclude_patterns) or ignores.ignored(rel, False):
                continue
            if include_patterns and not matches_any(rel, include_patterns):
                continue
            if os.path.islink(os.path.join(dirpath, f)):
                skipped.append({"path": rel, "reason": "symlink"})
                continue
            files.append(rel)
    files.sort()
    return WalkResult(files=files, skipped=skipped, preflight=preflight)
