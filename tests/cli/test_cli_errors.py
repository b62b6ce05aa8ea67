"""The rough edges a new user hit: one line and exit 2/1 on every failure, no traceback, no side effects."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory_substrate.cli.main import main
from tests.cli.test_cli import _run


def _one_line(out: subprocess.CompletedProcess[str], code: int, prefix: str) -> None:
    assert out.returncode == code, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith(prefix) and out.stderr.count("\n") == 1, out.stderr


def test_missing_input_file_is_a_usage_error_and_creates_nothing(tmp_path: Path) -> None:
    out = _run(tmp_path, "ingest", "file", "@/nonexistent/input.json")
    _one_line(out, 2, "error [memory_validation_error]: input_data: cannot read /nonexistent/input.json")
    assert not (tmp_path / "root").exists()


def test_unusable_root_is_one_line(tmp_path: Path) -> None:
    _one_line(
        _run(tmp_path, "--root", "/proc/foo", "status"), 1, "error [memory_not_found]: no store at /proc/foo"
    )
    _one_line(
        _run(tmp_path, "--root", "/proc/foo", "query", "recent"),
        1,
        "error [memory_storage_error]: cannot create the store directory /proc/foo",
    )


def test_status_on_a_missing_root_does_not_create_it(tmp_path: Path) -> None:
    out = _run(tmp_path, "status")
    _one_line(out, 1, "error [memory_not_found]: no store at")
    assert not (tmp_path / "root").exists()


def test_unknown_embedder_is_refused_by_status_and_query_and_fails_doctor(tmp_path: Path) -> None:
    assert (
        _run(
            tmp_path,
            "remember",
            "knowledge",
            json.dumps(
                {
                    "kind": "fact",
                    "title": "t",
                    "summary": "s",
                    "reason": "r",
                    "memory_source": "user_declared",
                    "scope_refs": ["scope:p"],
                }
            ),
        ).returncode
        == 0
    )
    for args in (["status"], ["query", "search", '{"query": "t"}']):
        out = _run(tmp_path, *args, MEMORY_SUBSTRATE_EMBEDDER="bogus")
        _one_line(out, 2, "error [memory_validation_error]: unknown embedder 'bogus'")
    doctor = _run(tmp_path, "doctor", MEMORY_SUBSTRATE_EMBEDDER="bogus")
    assert doctor.returncode == 1
    report = json.loads(doctor.stdout)
    assert report["ok"] is False and any("bogus" in p for p in report["problems"])
    healthy = _run(tmp_path, "doctor")
    assert healthy.returncode == 0 and json.loads(healthy.stdout)["ok"] is True


def test_doctor_on_a_fresh_root_reports_without_creating(tmp_path: Path) -> None:
    out = _run(tmp_path, "doctor")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["storage"]["exists"] is False
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize(
    ("args", "code", "prefix"),
    [
        (["bogus-command"], 2, "error [memory_usage_error]: No such command"),
        (["query"], 2, "error [memory_usage_error]: Missing argument 'MODE'"),
        (
            ["query", "search", "[1, 2]"],
            2,
            "error [memory_validation_error]: input_data must be a JSON object",
        ),
        (
            ["query", "search", '{"query": "x"}', "--options", "@/nope.json"],
            2,
            "error [memory_validation_error]: options: cannot read",
        ),
        (["export", "-o", "/proc/nope/out.jsonl"], 1, "error [memory_storage_error]:"),
        (["--database-url", "mysql://x/y", "status"], 1, "error [memory_not_available]:"),
        (["modes", "query", "nope"], 2, "error [memory_usage_error]: query has no mode 'nope'"),
        (
            ["serve", "--transport", "http", "--port", "99999"],
            2,
            "error [memory_usage_error]: Invalid value for '--port'",
        ),
        (
            ["--root", "~nosuchuser-xyz/store", "status"],
            2,
            "error [memory_usage_error]: Invalid value for --root",
        ),
        (["--namespace", " ", "status"], 2, "error [memory_usage_error]: Invalid value for --namespace"),
        (
            ["token", "create", "--namespace", ""],
            2,
            "error [memory_usage_error]: Invalid value for --namespace",
        ),
    ],
)
def test_failures_are_one_line(tmp_path: Path, args: list[str], code: int, prefix: str) -> None:
    _one_line(_run(tmp_path, *args), code, prefix)


def test_help_lists_modes_and_explains_tokens() -> None:
    runner = CliRunner()
    maintain = runner.invoke(main, ["maintain", "--help"]).output
    assert "..." not in maintain
    for mode in ("resolve_duplicates", "archive_source", "decay_stale", "cycle", "report"):
        assert mode in maintain
    serve = runner.invoke(main, ["serve", "--help"]).output
    assert "Bearer" in serve and "token create" in serve
    reference = runner.invoke(main, ["modes", "remember", "supersede"])
    assert reference.exit_code == 0 and "`old_knowledge_id`" in reference.output


def test_import_of_an_empty_file_or_a_reordered_export_is_one_clear_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("")
    _one_line(
        _run(tmp_path, "import", str(empty)),
        2,
        f"error [memory_validation_error]: {empty} is empty: nothing to import",
    )
    msg = {"title": "t", "messages": [{"role": "user", "content": "We pin numpy below three."}]}
    assert _run(tmp_path, "ingest", "conversation", json.dumps(msg)).returncode == 0
    export = tmp_path / "e.jsonl"
    assert _run(tmp_path, "export", "-o", str(export)).returncode == 0
    reversed_file = tmp_path / "reversed.jsonl"
    reversed_file.write_text("".join(reversed(export.read_text().splitlines(keepends=True))))
    _one_line(
        _run(tmp_path, "--namespace", "other", "import", str(reversed_file)),
        2,
        f"error [memory_validation_error]: {reversed_file} is a JSON Lines export whose header is on line",
    )
