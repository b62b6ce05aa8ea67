"""The package as a user installs it: ``python -m build`` makes a wheel; it installs into a fresh
virtual environment, offline, and runs from there — ``serve`` answers ``tools/list`` to the MCP
SDK's client, ``query search`` finds what ``ingest`` captured with the default embedder (its
model files ship in the wheel), ``inspect`` serves its pages and vendored assets.

Offline: pip may not download the dependencies here, so the fresh environment sees this
environment's installed packages read-only (one ``.pth`` line) and pip resolves the wheel's
requirements against them (``--no-index``); everything of ``memory_substrate`` comes from the
wheel. The wheel is built once per session (a few seconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.inspect.browser import free_port

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (built,) = out.glob("memory_substrate-*.whl")
    return built


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fresh environment's ``bin/`` directory."""
    env_dir = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    fresh_python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(fresh_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(fresh_python),
            "install",
            "--no-index",
            "--disable-pip-version-check",
            "-q",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    where = subprocess.run(
        [str(fresh_python), "-c", "import memory_substrate; print(memory_substrate.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        cwd="/",
    ).stdout.strip()
    assert where.startswith(purelib), where  # the wheel's copy, not this checkout's
    return env_dir / "bin"


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_") and k != "PYTHONPATH"}
    env["MEMORY_SUBSTRATE_ROOT"] = str(root)
    return env


def test_the_wheel_holds_the_models_and_the_inspectors_assets(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "memory_substrate/embed/data/minilm_l6_static.npz",
        "memory_substrate/embed/data/vocab.txt",
        "memory_substrate/inspector/static/vendor/cytoscape-3.34.4.min.js",
        "memory_substrate/inspector/static/cytoscape.css",
        "memory_substrate/inspector/templates/graph.html",
        "memory_substrate/contracts/schemas",
    ):
        assert any(n.startswith(needed) for n in names), needed


def test_installed_serve_answers_tools_list(installed: Path, tmp_path: Path) -> None:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def tools() -> list[str]:
        params = StdioServerParameters(
            command=str(installed / "memory-substrate"), args=["serve"], env=_env(tmp_path), cwd="/"
        )
        async with Client(stdio_client(params)) as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert set(anyio.run(tools)) >= {"memory_ingest", "memory_query", "memory_remember", "memory_maintain"}


def test_installed_ingest_and_search(installed: Path, tmp_path: Path) -> None:
    exe = str(installed / "memory-substrate")
    chat = {
        "title": "db chat",
        "messages": [{"role": "user", "content": "We decided to run SQLite in WAL mode."}],
    }
    ingested = subprocess.run(
        [exe, "ingest", "conversation", json.dumps(chat)],
        env=_env(tmp_path),
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ingested.returncode == 0, ingested.stderr
    found = subprocess.run(
        [
            exe,
            "query",
            "search",
            '{"query": "which journal mode did we pick?"}',
            "--options",
            '{"result_unit": "segment"}',
        ],
        env=_env(tmp_path),
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["sources"][0]["id"] == json.loads(ingested.stdout)["source_id"]


@pytest.fixture
def inspector(installed: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [str(installed / "memory-substrate"), "inspect", "--port", str(port)],
        env=_env(tmp_path),
        cwd="/",
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(base + "/static/app.css", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.communicate()[1]) from None
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


def test_installed_inspect_serves_its_assets(inspector: str) -> None:
    for path in ("/static/vendor/cytoscape-3.34.4.min.js", "/static/cytoscape.css", "/static/graph.js", "/"):
        with urllib.request.urlopen(inspector + path, timeout=10) as resp:
            assert resp.status == 200 and resp.read(), path
