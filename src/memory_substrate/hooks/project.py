"""A namespace per project: the git root of the session's working directory, else the directory.

``project_namespace("/home/me/src/shop/api")`` is ``shop-1a2b3c4d`` when ``/home/me/src/shop`` holds
the repository: the root's name, readable in ``namespace list``, and 8 hex digits of a hash of
the repository's ``origin`` URL (normalised: ``git@host:org/x.git`` and ``https://host/org/x`` are
one), so clones of one repository on several machines share a namespace on a team server; a
folder without an ``origin`` hashes its full path, so two checkouts named alike stay apart.
Every worktree of a repository is the repository (their ``.git`` files name one common
directory); a submodule is a project of its own.

Overrides, first that applies: ``MEMORY_SUBSTRATE_HOOK_NAMESPACE`` (one namespace for all),
then the ``[projects]`` table of ``<root>/hooks/config.toml`` (a project root -> a namespace).
Nothing a repository holds chooses its namespace: a cloned repository could otherwise name
another project's and be handed its memory.

The root is found by looking for ``.git`` upwards: no ``git`` process (a hook must start fast).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from pathlib import Path

from memory_substrate.hooks.config import HookConfig

_UNSAFE = re.compile(r"[^A-Za-z0-9_@-]+")
_NAME_CHARS = 100  # of the 128 a namespace may have: room for "-" and the 8 hex digits


def project_root(cwd: str | Path) -> Path:
    """The git root holding ``cwd`` (the main worktree's for a linked worktree), else ``cwd``."""
    return _project(cwd)[0]


def _project(cwd: str | Path) -> tuple[Path, Path | None]:
    """(project root, its git directory or None)."""
    start = Path(os.path.realpath(os.path.expanduser(str(cwd))))
    for folder in (start, *start.parents):
        marker = folder / ".git"
        try:
            if marker.is_dir():
                return folder, marker
            if marker.is_file():
                return _worktree_main(folder, marker)
        except OSError:  # unreadable: keep looking further up
            continue
    return start, None


def _worktree_main(folder: Path, marker: Path) -> tuple[Path, Path | None]:
    """A ``.git`` file names the repository's directory for this checkout. A linked worktree's
    has a ``commondir`` naming the main repository's ``.git``; a submodule's has none."""
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return folder, None
    if not text.startswith("gitdir:"):
        return folder, None
    gitdir = Path(text.removeprefix("gitdir:").strip())
    if not gitdir.is_absolute():
        gitdir = folder / gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return folder, gitdir
    common_dir = Path(os.path.realpath(gitdir / common))
    return (common_dir.parent if common_dir.name == ".git" else common_dir), common_dir


_SECTION = re.compile(r"^\s*\[\s*remote\s+\"origin\"\s*\]", re.IGNORECASE)
_URL = re.compile(r"^\s*url\s*=\s*(.+?)\s*$", re.IGNORECASE)
_URL_PARTS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?(?:[^@/]*@)?([^/:]+)(?::\d+)?[:/](.+)$", re.IGNORECASE)


def origin_url(gitdir: Path | None) -> str | None:
    """The ``origin`` remote's URL in the repository's config, or None (read, not run: no git)."""
    if gitdir is None:
        return None
    try:
        lines = (gitdir / "config").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    inside = False
    for line in lines:
        if line.lstrip().startswith("["):
            inside = _SECTION.match(line) is not None
        elif inside and (m := _URL.match(line)):
            return m.group(1).strip('"')
    return None


def normalised_url(url: str) -> str:
    """``host/path`` of a remote URL, lower-cased, without user, port, scheme or ``.git``."""
    m = _URL_PARTS.match(url.strip())
    key = f"{m.group(1)}/{m.group(2)}" if m else url.strip()
    return key.removesuffix("/").removesuffix(".git").lower()


def derived_name(root: Path, origin: str | None = None) -> str:
    """``<basename>-<8 hex>``: valid under the one namespace rule (validation.NAMESPACE_RE)."""
    key = normalised_url(origin) if origin else os.path.normcase(str(root))
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    base = _UNSAFE.sub("-", root.name).strip("-")[:_NAME_CHARS] or "project"
    return f"{base}-{digest}"


def project_namespace(cwd: str | Path, config: HookConfig | None = None) -> str:
    """The namespace of the project holding ``cwd`` (module docstring), overrides included."""
    if config is None:
        from memory_substrate.hooks.config import load

        config = load()
    root, gitdir = _project(cwd)
    chosen = config.namespace or config.projects.get(os.path.normcase(str(root)))
    if chosen:
        from memory_substrate.validation import namespace_name  # only for a name given by hand

        return namespace_name(chosen.strip(), "hook namespace")
    return derived_name(root, origin_url(gitdir))


def excluded(cwd: str | Path, config: HookConfig) -> bool:
    """Whether the project holding ``cwd`` (or ``cwd`` itself) matches an excluded glob: such a
    project is neither captured nor given context."""
    if not config.exclude:
        return False
    root = project_root(cwd)
    here = Path(os.path.realpath(os.path.expanduser(str(cwd))))
    paths = {os.path.normcase(str(p)) for p in (root, here)}
    for glob in config.exclude:
        pattern = os.path.normcase(os.path.expanduser(glob.strip()))
        if any(
            fnmatch.fnmatchcase(p, pattern) or fnmatch.fnmatchcase(p, pattern.rstrip("/\\") + os.sep + "*")
            for p in paths
        ):
            return True
    return False
