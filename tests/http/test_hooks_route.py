"""``POST /hooks/{client}`` on a real ``serve --transport http`` (mcp/hooks_route.py) and the hook's
client of it (hooks/warm.py): the same tokens as ``/mcp``, a token reaches its own namespace only,
the answer is the cold path's for the same store, and a server that is down costs the hook nothing
but the fallback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memory_substrate.hooks import warm
from memory_substrate.hooks.config import load
from memory_substrate.hooks.project import project_namespace
from memory_substrate.json_types import JsonObject
from tests.http.helpers import SRC, cli, free_port, http_server, server_env

SESSION = [
    {"role": "user", "content": "Why did the deploy to staging fail on Tuesday?"},
    {
        "role": "assistant",
        "content": "The deploy failed because the cache key ignored the locale header; "
        "Dana owns the fix in the payment service and ships it on Friday.",
    },
    {"role": "user", "content": "Which provider sends the invoice e-mails now?"},
    {"role": "assistant", "content": "We switched the invoice e-mails from Mailgun to Postmark last month."},
]
PROMPT = "why did the staging deploy fail, and who owns the cache key fix?"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("hooks-route")
    root, project = base / "store", base / "shop"
    (project / ".git").mkdir(parents=True)  # a repository: its root names the namespace
    env = server_env(root)
    namespace = project_namespace(str(project), load(root, environ={}))
    cli(
        env,
        "--namespace",
        namespace,
        "ingest",
        "conversation",
        json.dumps(
            {"thread_id": "claude-code:earlier", "title": "claude-code session deploy", "messages": SESSION}
        ),
    )
    token = cli(env, "token", "create", "--namespace", namespace).strip()
    other = cli(env, "token", "create", "--namespace", "someone-else").strip()
    with http_server(env, base / "server.log") as url:
        yield {
            "url": url.removesuffix("/mcp"),
            "root": root,
            "project": project,
            "namespace": namespace,
            "token": token,
            "other": other,
            "env": env,
        }


def _event(served: dict[str, Any], name: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": f"s-{name}-{time.monotonic_ns()}",
        "cwd": str(served["project"]),
        "hook_event_name": name,
        **fields,
    }


def _post(
    served: dict[str, Any], body: dict[str, Any], token: str | None, client: str = "claude-code"
) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.post(f"{served['url']}/hooks/{client}", json=body, headers=headers, timeout=60)


def _extra(served: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "memory_substrate": {"namespace": served["namespace"], "budget": 1000, "given": [], "own": [], **more}
    }


def _cold_hook(
    served: dict[str, Any], event: dict[str, Any], root: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """The hook command as the client runs it: the event on stdin."""
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    run_env.update(
        MEMORY_SUBSTRATE_ROOT=str(root),
        MEMORY_SUBSTRATE_EMBEDDER="none",
        PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        **env,
    )
    return subprocess.run(
        [sys.executable, "-m", "memory_substrate.cli.main", "hook", "claude-code"],
        input=json.dumps(event),
        env=run_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_token_is_required(served: dict[str, Any]) -> None:
    body = {**_event(served, "UserPromptSubmit", prompt=PROMPT), **_extra(served)}
    assert _post(served, body, None).status_code == 401
    assert _post(served, body, "mst_not-a-token").status_code == 401


def test_a_token_reaches_its_own_namespace_only(served: dict[str, Any]) -> None:
    body = {**_event(served, "UserPromptSubmit", prompt=PROMPT), **_extra(served)}
    refused = _post(served, body, served["other"])  # a valid token of another namespace
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "memory_forbidden"
    elsewhere = {**body, "memory_substrate": {**body["memory_substrate"], "namespace": "someone-else"}}
    refused = _post(served, elsewhere, served["token"])  # its own token, another namespace named
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "memory_forbidden"
    capture = {
        **_event(served, "Stop"),
        "memory_substrate": {
            "namespace": served["namespace"],
            "ingest": {"mode": "conversation", "input_data": {"thread_id": "x", "messages": SESSION[:1]}},
        },
    }
    assert _post(served, capture, served["other"]).status_code == 403
    assert "x" not in cli(served["env"], "--namespace", "someone-else", "query", "recent", "{}")


def test_bad_bodies_are_refused_with_a_reason(served: dict[str, Any]) -> None:
    token = served["token"]
    no_namespace = _post(served, _event(served, "UserPromptSubmit", prompt=PROMPT), token)
    assert no_namespace.status_code == 400 and "namespace" in no_namespace.json()["error"]["message"]
    assert (
        _post(
            served,
            {**_event(served, "UserPromptSubmit", prompt=PROMPT), **_extra(served)},
            token,
            client="cursor",
        ).status_code
        == 400
    )
    not_event = _post(served, _extra(served), token)
    assert not_event.status_code == 400 and "hook event" in not_event.json()["error"]["message"]
    bad_budget = _post(served, {**_event(served, "SessionStart"), **_extra(served, budget="lots")}, token)
    assert bad_budget.status_code == 400
    path_mode = {
        **_event(served, "Stop"),
        "memory_substrate": {
            "namespace": served["namespace"],
            "ingest": {"mode": "file", "input_data": {"path": "/etc/passwd"}},
        },
    }
    assert _post(served, path_mode, token).status_code == 400


@pytest.mark.parametrize("name", ["UserPromptSubmit", "SessionStart"])
def test_the_answer_is_the_cold_paths(served: dict[str, Any], name: str) -> None:
    fields = {"prompt": PROMPT} if name == "UserPromptSubmit" else {"source": "startup"}
    cold = _cold_hook(served, _event(served, name, **fields), served["root"])
    assert cold.returncode == 0 and cold.stdout.strip(), cold.stderr
    warm_answer = _post(served, {**_event(served, name, **fields), **_extra(served)}, served["token"])
    assert warm_answer.status_code == 200, warm_answer.text
    got = warm_answer.json()
    assert got["output"] == cold.stdout.strip()
    context = json.loads(got["output"])["hookSpecificOutput"]["additionalContext"]
    assert got["injection"]["text"] == context and got["injection"]["ids"]
    assert (
        "Dana" if name == "UserPromptSubmit" else "Postmark"
    ) in context  # the prompt's turn; the latest answer
    # The hook's client of the route reads the same answer.
    seen = warm.context(
        "claude-code",
        _event(served, name, **fields),
        namespace=served["namespace"],
        budget=1000,
        given=set(),
        own=set(),
        environ={warm.URL_ENV: served["url"], warm.TOKEN_ENV: served["token"]},
    )
    assert seen is not None and seen.injection is not None and seen.injection.text == context
    # What the session was already given is not given again.
    again = _post(
        served,
        {**_event(served, name, **fields), **_extra(served, given=got["injection"]["ids"])},
        served["token"],
    ).json()
    assert again["injection"] is None or not set(again["injection"]["ids"]) & set(got["injection"]["ids"])


def test_a_capture_is_ingested_in_the_bulkhead(served: dict[str, Any]) -> None:
    conversation: JsonObject = {
        "thread_id": "claude-code:captured",
        "title": "claude-code session invoices",
        "messages": [
            {"role": "user", "content": "Move the nightly invoice export to 02:00 UTC."},
            {"role": "assistant", "content": "Done: the invoice export cron runs at 02:00 UTC now."},
        ],
    }
    env = {warm.URL_ENV: served["url"], warm.TOKEN_ENV: served["token"]}
    result = warm.ingest(
        "claude-code",
        _event(served, "Stop"),
        served["namespace"],
        "conversation",
        conversation,
        {"detail": "compact", "max_items": 1},
        environ=env,
    )
    assert result is not None and result["status"] == "completed", result
    found = json.loads(
        cli(
            served["env"],
            "--namespace",
            served["namespace"],
            "query",
            "search",
            json.dumps({"query": "invoice export cron"}),
        )
    )
    assert str(result["source_id"]) in json.dumps(found)


def test_a_server_that_is_down_leaves_the_work_to_the_cold_path(
    served: dict[str, Any], tmp_path: Path
) -> None:
    dead = {warm.URL_ENV: f"http://127.0.0.1:{free_port()}", warm.TOKEN_ENV: served["token"]}
    said: list[str] = []
    started = time.monotonic()
    assert (
        warm.context(
            "claude-code",
            _event(served, "UserPromptSubmit", prompt=PROMPT),
            namespace="x",
            budget=10,
            given=set(),
            own=set(),
            environ=dead,
            log=said.append,
        )
        is None
    )
    assert time.monotonic() - started < 2 and "unreachable" in said[0]
    # A capture goes to the cold store instead.
    calls: list[str] = []

    class Cold:
        def ingest(
            self, mode: str, data: dict[str, Any], options: dict[str, Any] | None = None
        ) -> dict[str, Any]:
            calls.append(mode)
            return {"status": "completed"}

    os.environ[warm.URL_ENV] = dead[warm.URL_ENV]
    try:
        factory = warm.memory_factory(
            "claude-code", _event(served, "Stop"), lambda ns: Cold(), log=said.append
        )
        assert factory("proj").ingest("conversation", {"messages": SESSION}, {}) == {"status": "completed"}
    finally:
        del os.environ[warm.URL_ENV]
    assert calls == ["conversation"]
    # The hook command itself still answers, from the cold path, and exits 0.
    cold = _cold_hook(served, _event(served, "UserPromptSubmit", prompt=PROMPT), served["root"])
    # (another session: one already given this context would not be given it again)
    fallback = _cold_hook(served, _event(served, "UserPromptSubmit", prompt=PROMPT), served["root"], **dead)
    assert fallback.returncode == 0 and fallback.stdout == cold.stdout and cold.stdout.strip()


def test_the_hook_takes_the_warm_path_first(served: dict[str, Any], tmp_path: Path) -> None:
    """A client home with no store of its own (another machine's, pointed at a team server): what
    the hook prints can only come from the server, and it is what the server's own cold hook prints."""
    home = tmp_path / "client-home"
    warm_env = {warm.URL_ENV: served["url"], warm.TOKEN_ENV: served["token"]}
    for name, fields in (("UserPromptSubmit", {"prompt": PROMPT}), ("SessionStart", {"source": "startup"})):
        cold = _cold_hook(served, _event(served, name, **fields), served["root"])
        event = _event(served, name, **fields)
        through = _cold_hook(served, event, home, **warm_env)
        assert through.returncode == 0 and through.stdout == cold.stdout and cold.stdout.strip(), (
            through.stderr
        )
        # What the session was given is recorded on the client: the same event again brings nothing new.
        again = _cold_hook(served, event, home, **warm_env)
        assert again.returncode == 0 and again.stdout != through.stdout
    assert not (home / "memory.sqlite3").exists()


def test_a_capture_through_the_warm_path_lands_on_the_server(served: dict[str, Any], tmp_path: Path) -> None:
    recorded = (
        Path(__file__).resolve().parents[1] / "data" / "transcripts" / "claude-code" / "debug-session.jsonl"
    )
    home = tmp_path / "client-home"
    namespace = project_namespace("/home/dev/shop", load(home, environ={}))  # the recording's project
    token = cli(served["env"], "token", "create", "--namespace", namespace).strip()
    stop = {
        "session_id": "2bc1392d-7d8d-4876-8fdd-b6d2255f5340",
        "transcript_path": str(recorded),
        "cwd": "/home/dev/shop",
        "hook_event_name": "Stop",
    }
    done = _cold_hook(served, stop, home, **{warm.URL_ENV: served["url"], warm.TOKEN_ENV: token})
    assert done.returncode == 0 and done.stdout == ""
    assert not (home / "memory.sqlite3").exists()  # nothing was written on the client
    found = json.loads(cli(served["env"], "--namespace", namespace, "query", "recent", "{}"))
    assert "discount" in json.dumps(found).lower()
    # Server down: the same capture is done on the client's own store, and the hook still exits 0.
    dead = {warm.URL_ENV: f"http://127.0.0.1:{free_port()}", warm.TOKEN_ENV: token}
    other_home = tmp_path / "offline-home"
    done = _cold_hook(served, stop, other_home, **dead)
    assert done.returncode == 0 and (other_home / "memory.sqlite3").exists()


# --- the client's own http hook: POST /hooks/{client}/event (mcp/client_hooks_route.py) -------------
def _post_event(
    served: dict[str, Any], body: dict[str, Any], token: str | None, client: str = "claude-code"
) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.post(f"{served['url']}/hooks/{client}/event", json=body, headers=headers, timeout=60)


@pytest.mark.parametrize("name", ["UserPromptSubmit", "SessionStart"])
def test_the_clients_own_http_hook_gets_what_the_hook_command_prints(
    served: dict[str, Any], name: str
) -> None:
    fields = {"prompt": PROMPT} if name == "UserPromptSubmit" else {"source": "startup"}
    cold = _cold_hook(served, _event(served, name, **fields), served["root"])
    assert cold.returncode == 0 and cold.stdout.strip(), cold.stderr
    event = _event(served, name, **fields)  # the client's event, as it would reach the command's stdin
    first = _post_event(served, event, served["token"])
    assert first.status_code == 200 and first.headers["content-type"].startswith("application/json")
    assert first.text == cold.stdout.strip()
    # The session's state is kept as the command keeps it: what it was given is not given again.
    again = _post_event(served, event, served["token"])
    assert again.status_code == 200 and again.text != first.text


def test_the_clients_own_http_hook_is_refused_what_the_command_would_not_do(
    served: dict[str, Any], tmp_path: Path
) -> None:
    event = _event(served, "UserPromptSubmit", prompt=PROMPT)
    assert _post_event(served, event, None).status_code == 401
    refused = _post_event(served, event, served["other"])  # a valid token of another namespace
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "memory_forbidden"
    elsewhere = tmp_path / "blog"
    (elsewhere / ".git").mkdir(parents=True)  # another project: another namespace than the token's
    refused = _post_event(served, {**event, "cwd": str(elsewhere)}, served["token"])
    assert refused.status_code == 403 and "Dana" not in refused.text
    capture = _post_event(served, _event(served, "Stop", transcript_path="/etc/passwd"), served["token"])
    assert capture.status_code == 400 and "hook` command" in capture.json()["error"]["message"]
    assert _post_event(served, {"prompt": PROMPT}, served["token"]).status_code == 400
    assert _post_event(served, event, served["token"], client="cursor").status_code == 400
    # Nothing to give is an empty answer, which the client reads as a hook that printed nothing.
    quiet = _post_event(served, _event(served, "UserPromptSubmit", prompt="hi"), served["token"])
    assert quiet.status_code == 200 and quiet.text == ""
