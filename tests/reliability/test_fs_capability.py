"""Filesystem access is a capability: no HTTP caller reads the server's disk (issue 23).

A real ``serve --transport http`` process per backend, two namespaces A and B, A's token written
to a file. Over B's connection every path-taking mode is refused for /etc/passwd, a relative
climb, ``~``, a symlink out of the allowed folder and the token file, with the same error as a
path that does not exist (so nothing can be probed); with ``--allow-path DIR`` a file inside DIR
is captured and everything else still refused. In-process: the Markdown importer and the
policy itself refuse symlinks that leave their root.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memory_substrate import Memory
from memory_substrate.ingest.pathpolicy import PathPolicy
from tests.http.helpers import call_tools, cli, http_server, server_env

SECRET = "zqsecretoutsidezq"


def _layout(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".profile").write_text(f"export X={SECRET}\n")
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "notes.md").write_text("# Notes\n\nInside the allowed folder.\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (allowed / "escape.md").symlink_to(outside / "secret.txt")
    (allowed / "passwd.md").symlink_to("/etc/passwd")
    (allowed / "outdir").symlink_to(outside, target_is_directory=True)
    return {"home": home, "allowed": allowed, "outside": outside}


def _hostile(paths: dict[str, Path], token_file: Path) -> list[tuple[str, str]]:
    """(mode, path) pairs no HTTP caller may read."""
    depth = len(Path.cwd().parts) + 2
    relative = "/".join([".."] * depth) + "/etc/hostname"
    cases = [
        ("file", "/etc/passwd"),
        ("file", relative),
        ("file", "~/.profile"),
        ("file", str(paths["allowed"] / "escape.md")),
        ("file", str(paths["allowed"] / "passwd.md")),
        ("file", str(paths["allowed"] / "outdir" / "secret.txt")),
        ("file", str(paths["allowed"] / ".." / "outside" / "secret.txt")),
        ("file", str(token_file)),
        ("markdown", str(token_file)),
        ("markdown", "/etc/passwd"),
        ("pdf", "/etc/passwd"),
        ("repo", "/etc"),
        ("repo", str(paths["outside"])),
        ("repo", str(paths["allowed"] / "outdir")),
    ]
    return cases


def _same_refusal(results: list[dict[str, Any]], sent: list[tuple[str, str]]) -> None:
    """Every result is the one refusal; its message differs only by the path the caller sent."""
    shapes = set()
    for res, (_mode, path) in zip(results, sent, strict=True):
        assert "error" in res, f"{path} was read: {json.dumps(res)[:300]}"
        err = res["error"]
        assert SECRET not in json.dumps(err)
        assert err["code"] == "memory_capture_not_found", err
        shapes.add((err["code"], err["message"].replace(repr(path), "<PATH>")))
        assert set(err["details"]) == {"reason", "path"}, err
    assert len(shapes) == 1, shapes


@pytest.mark.parametrize("backend_kind", ["sqlite", "postgres"])
def test_http_callers_cannot_read_the_servers_disk(
    backend_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if backend_kind == "postgres" else None
    env = server_env(tmp_path / "store", url)
    paths = _layout(tmp_path)
    env["HOME"] = str(paths["home"])
    suffix = os.urandom(4).hex()
    token_a = cli(env, "token", "create", "--namespace", f"fs-a-{suffix}").strip()
    token_b = cli(env, "token", "create", "--namespace", f"fs-b-{suffix}").strip()
    token_file = paths["outside"] / "a.token"
    token_file.write_text(token_a + "\n")
    missing = [("file", str(tmp_path / "no-such-file.txt")), ("repo", str(tmp_path / "no-such-dir"))]

    # Default over HTTP: no filesystem at all, not even the folder that will be allowed below.
    sent = [*_hostile(paths, token_file), ("file", str(paths["allowed"] / "notes.md")), *missing]
    with http_server(env, tmp_path / "closed.log") as mcp_url:
        results = call_tools(mcp_url, token_b, [("memory_ingest", m, {"path": p}) for m, p in sent])
    _same_refusal(results, sent)

    # --allow-path opens one folder: inside is read, every escape is refused as before.
    sent = [*_hostile(paths, token_file), *missing]
    with http_server(env, tmp_path / "open.log", "--allow-path", str(paths["allowed"])) as mcp_url:
        ok = call_tools(
            mcp_url, token_b, [("memory_ingest", "markdown", {"path": str(paths["allowed"] / "notes.md")})]
        )
        results = call_tools(mcp_url, token_b, [("memory_ingest", m, {"path": p}) for m, p in sent])
        found = call_tools(mcp_url, token_b, [("memory_query", "search", {"query": SECRET})])
    assert ok[0].get("status") == "completed", ok
    _same_refusal(results, sent)
    assert found[0]["count"] == 0, found


def test_stdio_policy_is_open_and_doctor_says_so(tmp_path: Path) -> None:
    env = server_env(tmp_path / "store")
    report = json.loads(cli(env, "doctor"))
    assert report["filesystem"]["mode"] == "open"
    env["MEMORY_SUBSTRATE_ALLOW_PATHS"] = json.dumps([str(tmp_path)])
    report = json.loads(cli(env, "doctor"))
    assert report["filesystem"] == {
        **report["filesystem"],
        "mode": "restricted",
        "allowed_roots": [str(tmp_path.resolve())],
    }


def test_policy_resolves_before_checking(tmp_path: Path) -> None:
    paths = _layout(tmp_path)
    policy = PathPolicy.restricted([paths["allowed"]], denied=[tmp_path / "store"])
    assert policy.resolve(paths["allowed"] / "notes.md") == (paths["allowed"] / "notes.md").resolve()
    for raw in (
        paths["allowed"] / "escape.md",
        paths["allowed"] / "outdir" / "secret.txt",
        f"{paths['allowed']}/../outside/secret.txt",
        "/etc/passwd",
        paths["allowed"] / "missing.md",
    ):
        with pytest.raises(Exception) as info:
            policy.resolve(raw)
        assert getattr(info.value, "code", None) == "memory_capture_not_found"
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "memory.sqlite3").write_text("x")
    inside_store = PathPolicy.restricted([tmp_path], denied=[(tmp_path / "store").resolve()])
    with pytest.raises(Exception, match="allowed paths"):
        inside_store.resolve(tmp_path / "store" / "memory.sqlite3")
    assert PathPolicy(None).resolve("~") == Path.home().resolve()
    # A name too long for the filesystem inside an allowed root: the same refusal, not an OSError.
    with pytest.raises(Exception) as info:
        policy.resolve(paths["allowed"] / ("a" * 300))
    assert getattr(info.value, "code", None) == "memory_capture_not_found"


def test_markdown_import_refuses_symlinks_out_of_the_vault(memory: Memory, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "inside.md").write_text("# Inside\n\nA note that links [[Other]].\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    (vault / "p.md").symlink_to("/etc/passwd")
    (vault / "s.md").symlink_to(outside / "secret.md")
    (vault / "dir").symlink_to(outside, target_is_directory=True)
    from memory_substrate.importers.markdown_notes import import_markdown

    report = import_markdown(memory, vault)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    assert skipped.get("p.md") == "symlink_outside_root" and skipped.get("s.md") == "symlink_outside_root", (
        report
    )
    assert memory.query("search", {"query": SECRET})["count"] == 0
    assert "root:" not in json.dumps(memory.query("search", {"query": "root daemon bin"})["items"])


def test_walkers_never_enter_the_store_directory_below_an_allowed_root(tmp_path: Path) -> None:
    # The store's directory is denied although it lies under the allowed root: a direct path into
    # it is refused, and so is a walk of the root (repo capture, Markdown import) reaching it.
    from memory_substrate.importers.markdown_notes import import_markdown
    from memory_substrate.settings import Settings

    (tmp_path / "notes.md").write_text("# Notes\n\nAllowed text.\n")
    memory = Memory(Settings(root=tmp_path / "store", embedder="none", allow_paths=[tmp_path]))
    try:
        memory.ingest(
            "conversation", {"messages": [{"role": "user", "content": "hello"}]}
        )  # creates the store
        (tmp_path / "store" / "leak.md").write_text(f"# Leak\n\n{SECRET}\n")
        with pytest.raises(Exception, match="allowed paths"):
            memory.ingest("markdown", {"path": str(tmp_path / "store" / "leak.md")})
        memory.ingest("repo", {"path": str(tmp_path)})
        import_markdown(memory, tmp_path)
        assert memory.query("search", {"query": "Allowed text"})["count"] > 0
        assert memory.query("search", {"query": SECRET})["count"] == 0
    finally:
        memory.close()


def test_an_http_app_built_in_code_is_closed_unless_paths_are_allowed(memory: Memory, tmp_path: Path) -> None:
    # build_app is public: an app built from a default (stdio, open) Memory must not read the disk
    # either; one built with allowed roots keeps exactly those.
    from memory_substrate.errors import MemorySubstrateError
    from memory_substrate.mcp.http import closed_unless_allowed

    note = tmp_path / "note.md"
    note.write_text(f"# Note\n\n{SECRET}\n")
    assert memory.settings.allow_paths is None
    served = closed_unless_allowed(memory)
    with pytest.raises(MemorySubstrateError) as info:
        served.ingest("file", {"path": str(note)})
    assert info.value.code == "memory_capture_not_found"
    assert memory.ingest("file", {"path": str(note)})["source_id"]  # the caller's own Memory is unchanged
    allowed = memory.settings.model_copy(update={"allow_paths": [tmp_path]})
    opened = Memory(allowed, runtime=memory.runtime.for_namespace(memory.namespace))
    assert closed_unless_allowed(opened) is opened
