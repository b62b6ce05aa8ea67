"""The hook command cold and through the warm path (a running ``serve --transport http``), as the
client runs it: a fresh ``memory-substrate hook claude-code`` per event, the event on stdin.

    .venv/bin/python bench/hook_store.py --root /tmp/hook-store --project /tmp/hook-project   # once
    .venv/bin/python bench/warm_hook_bench.py --root /tmp/hook-store --project /tmp/hook-project [--runs 10]

For SessionStart and UserPromptSubmit (a new session each run, so nothing is skipped as already
given) it reports the median and p90 wall time, the median CPU time (what the wall time is on an
idle core: the hook is single-threaded), and whether the output was the same cold and warm. The
warm server runs on this machine (``--runs`` events after one untimed warm-up event each);
``route`` is the same request from a bare process that imports only ``hooks.warm``, the floor
under what the hook adds (the CLI, its config, the project's namespace, its session state).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

SCRIPT = str(Path(sys.executable).parent / "memory-substrate")
PROMPT = "What did Caroline decide about the adoption agency, and when did Melanie start painting?"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _timed(cmd: list[str], env: dict[str, str], stdin: str) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{cmd} exited {done.returncode}: {done.stderr[-400:]}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def _event(name: str, project: Path) -> dict[str, Any]:
    event: dict[str, Any] = {"session_id": str(uuid.uuid4()), "cwd": str(project), "hook_event_name": name}
    event.update({"prompt": PROMPT} if name == "UserPromptSubmit" else {"source": "startup"})
    return event


ROUTE = """
import json, sys
from memory_substrate.hooks import warm
event = json.loads(sys.stdin.read())
got = warm.context("claude-code", event, namespace=sys.argv[1], budget=int(sys.argv[2]), given=set(), own=set())
found = None if got is None else got.injection
print("" if found is None else json.dumps({"hookSpecificOutput": {"hookEventName": event["hook_event_name"],
                                                                   "additionalContext": found.text}}, ensure_ascii=False))
"""


def _row(label: str, samples: list[tuple[float, float, str]]) -> dict[str, Any]:
    walls = sorted(s[0] for s in samples)
    return {
        "path": label,
        "runs": len(samples),
        "median_ms": round(statistics.median(walls) * 1000, 1),
        "p90_ms": round(walls[min(len(walls) - 1, int(0.9 * len(walls)))] * 1000, 1),
        "cpu_median_ms": round(statistics.median(s[1] for s in samples) * 1000, 1),
        "load_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from memory_substrate.hooks.config import load
    from memory_substrate.hooks.project import project_namespace

    config = load(args.root, environ={})
    namespace = project_namespace(str(args.project), config)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SUBSTRATE_")}
    env["MEMORY_SUBSTRATE_ROOT"] = str(args.root)
    token = subprocess.run(
        [SCRIPT, "token", "create", "--namespace", namespace, "--label", "warm bench"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    port = _free_port()
    server = subprocess.Popen(
        [SCRIPT, "serve", "--transport", "http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    warm_env = {
        **env,
        "MEMORY_SUBSTRATE_HOOK_URL": f"http://127.0.0.1:{port}",
        "MEMORY_SUBSTRATE_HOOK_TOKEN": token,
    }
    try:
        _wait(port)
        hook = [SCRIPT, "hook", "claude-code"]
        route = [sys.executable, "-c", ROUTE, namespace]
        for name, budget in (
            ("UserPromptSubmit", config.prompt_budget),
            ("SessionStart", config.session_budget),
        ):
            _timed(hook, warm_env, json.dumps(_event(name, args.project)))  # the server's first compile
            rows: dict[str, list[tuple[float, float, str]]] = {"cold": [], "warm": [], "route": []}
            for _ in range(args.runs):
                rows["cold"].append(_timed(hook, env, json.dumps(_event(name, args.project))))
                rows["warm"].append(_timed(hook, warm_env, json.dumps(_event(name, args.project))))
                rows["route"].append(
                    _timed([*route, str(budget)], warm_env, json.dumps(_event(name, args.project)))
                )
            same = all(c[2].strip() == w[2].strip() for c, w in zip(rows["cold"], rows["warm"], strict=True))
            for label, samples in rows.items():
                print(
                    json.dumps(
                        {
                            "event": name,
                            **_row(label, samples),
                            "printed": bool(samples[0][2].strip()),
                            "cold_equals_warm": same,
                        }
                    ),
                    flush=True,
                )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        listed = subprocess.run(
            [SCRIPT, "token", "list", "--namespace", namespace], env=env, capture_output=True, text=True
        ).stdout
        ours = [t["token_id"] for t in json.loads(listed or "[]") if t.get("label") == "warm bench"]
        if ours:
            subprocess.run([SCRIPT, "token", "revoke", *ours], env=env, capture_output=True)


def _wait(port: int) -> None:
    import http.client

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


if __name__ == "__main__":
    main()
