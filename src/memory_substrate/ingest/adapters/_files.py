"""Reading one local file as text, with the checks every file adapter shares."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from memory_substrate.ingest.adapters.errors import CaptureError

# A NUL in the first block is how git and grep decide "binary"; text encodings never need one
# (UTF-16 files do, and are rare enough in source trees to be skipped as binary).
_SNIFF_BYTES = 8192
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_PATH = getattr(os, "O_PATH", os.O_RDONLY)
# Opening relative to a directory descriptor is what makes "no symlink anywhere" one step.
_OPENAT = os.open in os.supports_dir_fd and _NOFOLLOW != 0 and hasattr(os, "O_DIRECTORY")

# Whether a resolved path may be read (the path policy's ``contains``).
Allowed = Callable[[Path], bool]


@dataclass(frozen=True)
class TextFile:
    """A decoded text file and the hash of its exact bytes."""

    path: Path
    raw: bytes
    text: str
    sha256: str


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def resolve_path(path: str | os.PathLike[str]) -> Path:
    """``path`` with ``~`` expanded, made absolute and its symlinks resolved.

    A path that changes while it is resolved (a component swapped between a symlink and a
    directory) or loops is ``not_found``, as a path that is not there."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError) as exc:
        raise CaptureError("not_found", f"cannot resolve {os.fspath(path)}: {exc}") from None


def _walk_open(path: Path, final: int | None = None) -> int:
    """A descriptor for ``path`` (absolute), opened without following a symlink at any component.

    Each directory is opened relative to the previous one with ``O_NOFOLLOW``, so a component
    swapped for a symlink between a caller's check and this open fails (``ELOOP``/``ENOTDIR``)
    instead of leading elsewhere: what is opened is exactly the path that was checked.
    ``O_NONBLOCK`` keeps a FIFO from blocking the open; the caller refuses it after ``fstat``.
    """
    # O_PATH (Linux) opens a directory to walk through without needing to read it: a directory
    # this process may search but not list (mode 711) is walked as path resolution would.
    dir_flags = _PATH | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC
    parts = path.parts
    fd = os.open(parts[0], _PATH | os.O_DIRECTORY | _CLOEXEC)
    try:
        for name in parts[1:-1]:
            nxt = os.open(name, dir_flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
        if len(parts) == 1:
            return os.open(parts[0], final if final is not None else os.O_RDONLY | _CLOEXEC)
        flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC if final is None else final
        return os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


def _open_plain(path: Path) -> int:
    """Where ``openat`` is missing (Windows): one open of the resolved path, still non-blocking."""
    return os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_BINARY", 0))


def fd_path(fd: int) -> Path | None:
    """The path the kernel reports for an open descriptor (Linux ``/proc``, macOS ``F_GETPATH``), or None."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
    getpath = getattr(fcntl, "F_GETPATH", None) if fcntl is not None else None
    if getpath is not None:
        try:
            raw = fcntl.fcntl(fd, getpath, bytes(1024))
            return Path(os.fsdecode(raw.rstrip(b"\0")))
        except OSError:
            return None
    return None


def open_checked(path: Path, allowed: Allowed | None = None) -> int:
    """Open ``path`` once for reading and return the descriptor of a regular file.

    ``path`` must be absolute and already resolved: no symlink is followed anywhere in it
    (see ``_walk_open``), FIFOs, devices and sockets are refused without blocking, and when
    ``allowed`` is given the descriptor's own path (as the kernel names it, else the path opened)
    must pass it. Raises ``CaptureError`` ``not_found`` or ``not_a_file``.
    """
    try:
        fd = _walk_open(path) if _OPENAT else _open_plain(path)
    except FileNotFoundError:
        raise CaptureError("not_found", f"no such file: {path}") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise CaptureError("not_a_file", f"not a regular file (a symbolic link): {path}") from None
        raise CaptureError("not_found", f"cannot open {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CaptureError("not_a_file", f"not a regular file: {path}")
        if allowed is not None and not allowed(fd_path(fd) or path):
            raise CaptureError("not_found", f"no readable file at {path}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_directory(path: Path) -> int:
    """A descriptor for the resolved directory ``path``, opened without following a symlink anywhere.

    Raises ``CaptureError`` ``not_found`` or ``not_a_directory``."""
    try:
        return _walk_open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        raise CaptureError("not_found", f"no such directory: {path}") from None
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            raise CaptureError("not_a_directory", f"not a directory: {path}") from None
        raise CaptureError("not_found", f"cannot open {path}: {exc.strerror}") from None


def read_bytes_checked(path: Path, max_bytes: int, allowed: Allowed | None = None) -> bytes:
    """Read a regular file of at most ``max_bytes``, opened once by ``open_checked``.

    Raises ``CaptureError`` with ``not_found``, ``not_a_file`` or ``file_too_large``.
    """
    fd = open_checked(path, allowed)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise CaptureError(
                "file_too_large",
                f"{path} is {size} bytes, over the {max_bytes}-byte limit",
                details={"size_bytes": size, "max_bytes": max_bytes},
            )
        # Read one byte past the cap: the file may have grown since fstat.
        chunks, got = [], 0
        while got <= max_bytes:
            block = os.read(fd, min(1 << 20, max_bytes + 1 - got))
            if not block:
                break
            chunks.append(block)
            got += len(block)
    except OSError as exc:
        raise CaptureError("not_found", f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if got > max_bytes:
        raise CaptureError("file_too_large", f"{path} is over the {max_bytes}-byte limit")
    return b"".join(chunks)


def decode_text(data: bytes, label: str) -> str:
    """Decode UTF-8 text (BOM allowed). Raises ``CaptureError`` ``binary_file``/``undecodable_text``."""
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise CaptureError("binary_file", f"{label} looks binary (NUL byte)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CaptureError(
            "undecodable_text",
            f"{label} is not valid UTF-8 (byte {exc.start})",
            details={"offset": exc.start},
        ) from None


def read_text_file(path: Path, max_bytes: int, allowed: Allowed | None = None) -> TextFile:
    """Read, size-check and decode a text file; raises ``CaptureError`` as the two helpers do."""
    raw = read_bytes_checked(path, max_bytes, allowed)
    return TextFile(path=path, raw=raw, text=decode_text(raw, os.fspath(path)), sha256=sha256_hex(raw))
