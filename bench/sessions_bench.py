#!/usr/bin/env python3
"""Memory across sessions through the real clients: what earlier sessions learned that reaches a
later session's first model request, with the hooks ``memory-substrate setup`` installs beside
the same sessions without memory, and what that costs (injected tokens, hook latency as the
client records it, backfill throughput).

    .venv/bin/python bench/sessions_bench.py            # full: both scenarios, every variant
    .venv/bin/python bench/sessions_bench.py --quick    # CI-sized: part of the dev scenario

Scenarios (bench/sessions_scenarios.py): the dev set (a web shop, with a blog sharing the store)
and a held-out one (a data-pipeline team, with a mobile app) written with it before any figure
was seen and never tuned on. Each session is one ``claude -p`` (or ``codex exec``) run in its
project against the scripted loopback model of tests/agents, with HOME isolated per variant:

- ``none``: no set-up at all (the baseline);
- ``noop-hooks``: a hook that reads its input and prints nothing on every event (what the client
  itself spends running a command hook: the latency floor);
- ``memory``: ``memory-substrate setup claude-code --dir PROJECT`` for both projects, a fresh store;
- ``memory-10k``: the same on a store holding 10k LoCoMo turns in the project's namespace
  (bench/hook_store.py), the hooks cold (one process per event);
- ``memory-10k-warm``: the same store, served by ``memory-substrate serve --transport http``,
  with ``MEMORY_SUBSTRATE_HOOK_URL`` / ``MEMORY_SUBSTRATE_HOOK_TOKEN`` set for the client;
- ``memory-10k-http``: the same, set up with ``--serve-url``: Claude Code posts UserPromptSubmit to
  the server itself (an ``http`` hook, timed from the client's debug log: the POST to its answer);
  the other events stay commands on the warm path;
- ``codex-none`` / ``codex-memory``: the dev scenario through ``codex exec`` with and without
  ``setup codex --user`` (the hooks trusted by setup, run without bypassing trust).

Reported per scenario and variant: the share of (later session, needed fact) pairs whose key
phrases are in the first model request (the prompt itself left out), and inside our
``<memory-substrate-context>`` wrapper; injected tokens per prompt (the project's counter,
memory_substrate.tokens) for covered prompts and for those memory does not cover (target <= 150);
hook p50 / p95 per event as Claude Code's debug log records each hook (``finished with status N
(MS ms)``), with the transcript's own ``durationMs`` records beside; snippets of the other project
or secrets that reached a session; and, of the store, that each session was captured once, that
injected context was never captured again and that no secret or private span was stored. Then
backfill: the memory rebuilt from the variant's transcripts into an empty store (same episodes?),
a second run (adds nothing?), and throughput over a few hundred transcripts made from the
recorded ones (bench/backfill_corpus.py).

Writes bench/results/sessions_bench-<time>.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _p in (REPO / "src", HERE, REPO):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from sessions_clients import (  # noqa: E402
    CLOSE,
    OPEN,
    SessionRun,
    claude_session,
    codex_session,
    injected_spans,
    make_repo,
    reached,
)
from sessions_scenarios import DEV, HELD_OUT, Learn, Scenario, Use  # noqa: E402

EXE = REPO / ".venv" / "bin" / "memory-substrate"
RESULTS = HERE / "results"
CACHE = HERE / ".cache" / "sessions-store"
TARGETS = {
    "fact_share": 0.9,
    "uncovered_tokens": 150,
    "SessionStart": 1500,
    "UserPromptSubmit": 1000,
    "Stop": 1000,
    "UserPromptSubmit_warm": 150,
}
NOOP_COMMAND = "cat > /dev/null"
NOOP_HOOK = {"type": "command", "command": NOOP_COMMAND, "timeout": 10}
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop")


@dataclass
class Variant:
    name: str
    client: str = "claude-code"
    memory: bool = False
    turns: int = 0  # LoCoMo turns preloaded into the project's namespace
    warm: bool = False
    noop_hooks: bool = False
    http: bool = False  # setup --serve-url: Claude Code posts its context events to serve itself


VARIANTS = {
    v.name: v
    for v in (
        Variant("none"),
        Variant("noop-hooks", noop_hooks=True),
        Variant("memory", memory=True),
        Variant("memory-10k", memory=True, turns=10_000),
        Variant("memory-10k-warm", memory=True, turns=10_000, warm=True),
        Variant("memory-10k-http", memory=True, turns=10_000, warm=True, http=True),
        Variant("codex-none", client="codex"),
        Variant("codex-memory", client="codex", memory=True),
    )
}


@dataclass
class Record:
    index: int
    project: str
    kind: str  # learn | use | uncovered
    prompt: str
    run: SessionRun
    needs: tuple[str, ...] = ()
    reached: dict[str, bool] = field(default_factory=dict)
    in_wrapper: dict[str, bool] = field(default_factory=dict)
    by_prompt: dict[str, bool] = field(default_factory=dict)  # in the prompt's own injection
    tokens: dict[str, int] = field(default_factory=dict)  # event -> injected tokens
    leaks: list[str] = field(default_factory=list)  # the other project's phrases it received
    secrets_sent: list[str] = field(default_factory=list)


# --- helpers --------------------------------------------------------------------------------------
def _env(home: Path, **extra: str) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TZ")
    return {**{k: os.environ[k] for k in keep if k in os.environ}, "HOME": str(home), **extra}


def _cli(
    *args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXE), *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return float(statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1])


def _stats(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50": _round(_pct(values, 50)),
        "p95": _round(_pct(values, 95)),
        "max": _round(max(values)) if values else None,
    }


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 1)


def _count_tokens(text: str) -> int:
    from memory_substrate.tokens import count_tokens

    return count_tokens(text)


def _namespace(project_dir: Path) -> str:
    from memory_substrate.hooks.project import project_namespace

    return str(project_namespace(str(project_dir)))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- the store ------------------------------------------------------------------------------------
def preloaded_store(root: Path, namespace: str, turns: int, fresh: bool) -> dict[str, Any]:
    """``root`` holding ``turns`` LoCoMo turns in ``namespace``, built once into the cache."""
    import hook_store

    cached = CACHE / f"{namespace}-{turns}"
    info_file = cached / "built.json"
    if fresh or not info_file.exists():
        shutil.rmtree(cached, ignore_errors=True)
        info = hook_store.build(cached / "store", namespace, turns, None, hook_store.DATA)
        info_file.write_text(json.dumps(info))
    shutil.copytree(cached / "store", root, dirs_exist_ok=True)
    return dict(json.loads(info_file.read_text()))


def conversations(root: Path, namespace: str) -> dict[str, list[tuple[str, str]]]:
    """thread id -> [(role, text)] of every conversation episode in ``namespace``."""
    from memory_substrate import Memory, Settings

    if not (root / "memory.sqlite3").exists():
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    with (
        Memory(Settings(root=root, namespace=namespace, embedder="none")) as mem,
        mem.runtime.read() as session,
    ):
        for src in session.list_objects(
            object_types=["source"], kinds=["conversation"], statuses=["active"], limit=100_000
        ):
            count = int(src.metadata.get("segment_count") or 0)
            segs = session.get_segments(src.id, offset=0, limit=max(count, 1))
            thread = str(src.payload.get("thread_id") or src.id)
            out[thread] = [(str(s.metadata.get("role") or ""), s.text) for s in segs]
    return out


def store_checks(
    root: Path, namespaces: dict[str, str], records: list[Record], scenario: Scenario, client: str
) -> dict[str, Any]:
    """Captured once, injected context never captured again, no secret stored."""
    by_project = {name: conversations(root, ns) for name, ns in namespaces.items()}
    texts = [t for convs in by_project.values() for conv in convs.values() for _, t in conv]
    threads = {name: list(convs) for name, convs in by_project.items()}
    missing, duplicated = [], []
    for rec in records:
        sid = rec.run.session_id
        got = [t for t in threads[rec.project] if sid and t == f"{client}:{sid}"]
        if not got:
            missing.append(rec.index)
        elif len(got) > 1:
            duplicated.append(rec.index)
    said_counts = {}
    for i, (_, session) in enumerate(scenario.sessions):
        if isinstance(session, Learn) and any(r.index == i for r in records):
            probe = session.says[:80]
            said_counts[i] = sum(probe in t for t in texts)
    return {
        "episodes": {name: len(t) for name, t in threads.items()},
        "sessions_not_captured": missing,
        "sessions_captured_twice": duplicated,
        "learned_answer_copies": said_counts,  # each Learn session's answer: stored exactly once
        "answers_not_stored_once": [i for i, n in said_counts.items() if n != 1],
        "segments_with_injected_context": sum(
            (OPEN in t or CLOSE in t or "Memory of this project from earlier" in t) for t in texts
        ),
        "secrets_stored": {s: sum(s in t for t in texts) for s in scenario.secrets},
    }


# --- one variant of one scenario ------------------------------------------------------------------
class WarmServer:
    """``serve --transport http`` on the store, with a token per project namespace."""

    def __init__(self, root: Path, home: Path, namespaces: list[str]) -> None:
        self.root, self.home, self.port = root, home, _free_port()
        env = _env(home)
        self.tokens = {}
        for ns in namespaces:
            made = _cli(
                "--root", str(root), "token", "create", "--namespace", ns, "--label", "bench", env=env
            )
            if made.returncode != 0:
                raise RuntimeError(f"token create failed: {made.stderr[-500:]}")
            self.tokens[ns] = _token(made.stdout)
        self.log = open(root / "serve.log", "w")  # noqa: SIM115 - open for the server's lifetime
        self.proc = subprocess.Popen(
            [str(EXE), "--root", str(root), "serve", "--transport", "http", "--port", str(self.port)],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"serve exited {self.proc.returncode}: {(root / 'serve.log').read_text()[-800:]}"
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise RuntimeError("serve did not open its port in 90 s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def _token(stdout: str) -> str:
    try:
        data = json.loads(stdout)
        return str(data.get("token") or data.get("value"))
    except ValueError:
        return stdout.strip().split()[-1]


def run_variant(
    scenario: Scenario, variant: Variant, work: Path, *, fresh_store: bool, progress: bool = True
) -> dict[str, Any]:
    home = work / "home"
    root = work / "store"
    home.mkdir(parents=True)
    cache = Path.home() / ".cache" / "memory-substrate"
    if cache.is_dir():  # the embedder's disk cache, as on any machine after the first run
        (home / ".cache").mkdir(exist_ok=True)
        (home / ".cache" / "memory-substrate").symlink_to(cache)
    dirs = {name: make_repo(home / "src" / name, project) for name, project in scenario.projects().items()}
    namespaces = {name: _namespace(d) for name, d in dirs.items()}
    env = _env(home, MEMORY_SUBSTRATE_ROOT=str(root))
    info: dict[str, Any] = {"variant": variant.name, "client": variant.client, "namespaces": namespaces}
    if variant.turns:
        info["store"] = preloaded_store(root, namespaces[scenario.project.name], variant.turns, fresh_store)
    # The server first when the hooks are to name its address (setup --serve-url).
    server = WarmServer(root, home, list(namespaces.values())) if variant.warm else None
    if variant.memory:
        for d in dirs.values():
            args = ["setup", variant.client, "--dir", str(d)] if variant.client == "claude-code" else []
            if variant.http and server is not None:
                args += ["--serve-url", server.url]
            if variant.client == "codex":
                from tests.agents.clients import binary

                (home / ".codex").mkdir(exist_ok=True)
                args = ["setup", "codex", "--user", "--codex-bin", str(binary("codex"))]
            done = _cli(*args, env={**env, "CODEX_HOME": str(home / ".codex")}, cwd=d)
            if done.returncode != 0:
                if server is not None:
                    server.stop()
                raise RuntimeError(f"setup failed: {done.stdout[-800:]} {done.stderr[-800:]}")
            if variant.client == "codex":
                break  # --user covers every project
    records: list[Record] = []
    try:
        for i, (name, session) in enumerate(scenario.sessions):
            project = scenario.projects()[name]
            other = next(p for p in scenario.projects().values() if p.name != name)
            needed = tuple(ph for key in getattr(session, "needs", ()) for ph in project.fact(key).phrases)
            run_env: dict[str, str] = {}
            if server is not None:
                run_env = {
                    "MEMORY_SUBSTRATE_HOOK_URL": server.url,
                    "MEMORY_SUBSTRATE_HOOK_TOKEN": server.tokens[namespaces[name]],
                }
            if variant.noop_hooks:
                settings = {"hooks": {e: [{"hooks": [NOOP_HOOK]}] for e in (*EVENTS, "SessionEnd")}}
                (dirs[name] / ".claude").mkdir(exist_ok=True)
                (dirs[name] / ".claude" / "settings.local.json").write_text(json.dumps(settings))
            if variant.client == "claude-code":
                run = claude_session(
                    dirs[name],
                    home,
                    session,
                    needed,
                    run_env,
                    work / f"debug-{i:02d}.txt",
                    hook_command=NOOP_COMMAND if variant.noop_hooks else "memory-substrate",
                )
            else:
                run = codex_session(dirs[name], home, session, needed, run_env)
            rec = _record(i, name, session, run, project, other, scenario, records)
            records.append(rec)
            if progress:
                print(
                    f"  [{scenario.split} {variant.name}] {i:2d} {rec.kind:9s} rc={run.returncode} "
                    f"{run.seconds:5.1f}s reached={sum(rec.reached.values())}/{len(rec.reached)} "
                    f"tokens={rec.tokens} hooks={[(h.event, h.ms) for h in run.hooks]}",
                    file=sys.stderr,
                )
    finally:
        if server is not None:
            server.stop()
    out = summarise(records, variant)
    out.update(info)
    if variant.memory:
        out["store_checks"] = store_checks(root, namespaces, records, scenario, variant.client)
    out["sessions"] = [_session_json(r) for r in records]
    out["_paths"] = {"home": str(home), "root": str(root), "namespaces": namespaces}
    return out


def _record(
    i: int,
    name: str,
    session: Learn | Use,
    run: SessionRun,
    project: Any,
    other: Any,
    scenario: Scenario,
    earlier: list[Record],
) -> Record:
    kind = "learn" if isinstance(session, Learn) else ("use" if session.needs else "uncovered")
    rec = Record(i, name, kind, session.prompt, run, needs=tuple(getattr(session, "needs", ())))
    first = run.first_text().replace(session.prompt, "")
    spans = "\n".join(injected_spans(run.first_text()))
    for key in rec.needs:
        phrases = project.fact(key).phrases
        rec.reached[key] = reached(first, phrases)
        rec.in_wrapper[key] = reached(spans, phrases)
        rec.by_prompt[key] = reached(run.outputs.get("UserPromptSubmit", ""), phrases)
    for event, text in run.outputs.items():
        rec.tokens[event] = _count_tokens(text)
    everything = run.all_text()
    # A leak is the other project's phrase in what memory handed over (our wrapper, in any request):
    # the client's own text holds common words such as "Spark" whatever memory does, so a phrase
    # anywhere in the requests counts even in the run without memory.
    handed = "\n".join(injected_spans(everything)).lower()
    for fact in other.facts:
        rec.leaks += [p for p in fact.phrases if p.lower() in handed]
    # A secret or private span may reach the model in the session that read or typed it; never later.
    exposed_before = {s for r in earlier for s in scenario.secrets if s in r.run.all_text()}
    rec.secrets_sent = [s for s in exposed_before if s in everything]
    return rec


def _session_json(r: Record) -> dict[str, Any]:
    return {
        "index": r.index,
        "project": r.project,
        "kind": r.kind,
        "prompt": r.prompt,
        "needs": list(r.needs),
        "reached": r.reached,
        "in_wrapper": r.in_wrapper,
        "by_prompt": r.by_prompt,
        "tokens": r.tokens,
        "leaks": r.leaks,
        "secrets_sent": r.secrets_sent,
        "returncode": r.run.returncode,
        "seconds": round(r.run.seconds, 2),
        "model_requests": len(r.run.requests),
        "session_id": r.run.session_id,
        "hooks": [{"event": h.event, "ms": h.ms, "status": h.status} for h in r.run.hooks],
        "recorded": [{"event": h.event, "ms": h.ms, "source": h.source} for h in r.run.recorded],
        "stderr_tail": r.run.stderr[-400:] if r.run.returncode else "",
    }


def summarise(records: list[Record], variant: Variant) -> dict[str, Any]:
    pairs = [(r, k) for r in records if r.kind == "use" for k in r.needs]
    share = sum(r.reached[k] for r, k in pairs) / len(pairs) if pairs else None
    wrapped = sum(r.in_wrapper[k] for r, k in pairs) / len(pairs) if pairs else None
    prompted = sum(r.by_prompt[k] for r, k in pairs) / len(pairs) if pairs else None
    by_kind: dict[str, list[bool]] = {}
    kinds = {
        f.key: f.kind
        for f in (*DEV.project.facts, *DEV.other.facts, *HELD_OUT.project.facts, *HELD_OUT.other.facts)
    }
    for r, k in pairs:
        by_kind.setdefault(kinds[k], []).append(r.reached[k])
    prompt_tokens = [r.tokens.get("UserPromptSubmit", 0) for r in records if r.kind != "uncovered"]
    uncovered = [r.tokens.get("UserPromptSubmit", 0) for r in records if r.kind == "uncovered"]
    start_tokens = [r.tokens.get("SessionStart", 0) for r in records]
    hooks: dict[str, dict[str, Any]] = {}
    for event in (*EVENTS, "SessionEnd"):
        ms = [h.ms for r in records for h in r.run.hooks if h.event == event and h.ms is not None]
        rec_ms = [h.ms for r in records for h in r.run.recorded if h.event == event and h.ms is not None]
        statuses = sorted(
            {h.status for r in records for h in r.run.hooks if h.event == event and h.status is not None}
        )
        hooks[event] = {"debug_log": _stats(ms), "transcript": _stats(rec_ms), "statuses": statuses}
    return {
        "session_count": len(records),
        "client_runs_ok": sum(r.run.returncode == 0 for r in records),
        "fact_pairs": len(pairs),
        "fact_share_first_request": None if share is None else round(share, 3),
        "fact_share_in_wrapper": None if wrapped is None else round(wrapped, 3),
        "fact_share_by_prompt": None if prompted is None else round(prompted, 3),
        "fact_share_by_kind": {k: round(sum(v) / len(v), 3) for k, v in sorted(by_kind.items())},
        "missed": [f"{r.index}:{k}" for r, k in pairs if not r.reached[k]],
        "prompt_tokens": {
            "covered_mean": _mean(prompt_tokens),
            "covered_max": max(prompt_tokens, default=0),
            "uncovered": uncovered,
            "uncovered_max": max(uncovered, default=0),
        },
        "session_start_tokens": {"mean": _mean(start_tokens), "max": max(start_tokens, default=0)},
        "hooks_ms": hooks,
        "other_project_leaks": sum(len(r.leaks) for r in records),
        "secrets_sent_later": sum(len(r.secrets_sent) for r in records),
        "model_requests": sum(len(r.run.requests) for r in records),
        "lookups_in_use_sessions": sum(max(0, len(r.run.requests) - 1) for r in records if r.kind == "use"),
        "client_seconds": _stats([r.run.seconds * 1000 for r in records]),
    }


def _mean(values: list[int]) -> float:
    return round(sum(values) / len(values), 1) if values else 0.0


# --- backfill -------------------------------------------------------------------------------------
def _backfill(client: str, path: Path, root: Path, home: Path, *extra: str) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    done = _cli(
        "--root",
        str(root),
        "backfill",
        client,
        str(path),
        "--progress",
        "none",
        *extra,
        env=_env(home, MEMORY_SUBSTRATE_ROOT=str(root)),
        timeout=3600,
    )
    took = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"backfill exited {done.returncode}: {done.stderr[-800:]}")
    return dict(json.loads(done.stdout)), took


def backfill_rebuild(memory_result: dict[str, Any], work: Path) -> dict[str, Any]:
    """The memory variant's transcripts backfilled into an empty store: the same episodes?"""
    paths = memory_result["_paths"]
    home, root = Path(paths["home"]), Path(paths["root"])
    client = memory_result["client"]
    source = home / ".claude" / "projects" if client == "claude-code" else home / ".codex" / "sessions"
    rebuilt = work / "rebuilt"
    first, took = _backfill(client, source, rebuilt, home)
    again, took2 = _backfill(client, source, rebuilt, home)
    forced, _ = _backfill(client, source, rebuilt, home, "--force")  # every transcript read again
    same, differ = 0, []
    for name, ns in paths["namespaces"].items():
        hooked, backfilled = conversations(root, ns), conversations(rebuilt, ns)
        for thread in sorted(set(hooked) | set(backfilled)):
            if hooked.get(thread) == backfilled.get(thread):
                same += 1
            else:
                differ.append(
                    {
                        "project": name,
                        "thread": thread,
                        "hooks": len(hooked.get(thread) or []),
                        "backfill": len(backfilled.get(thread) or []),
                    }
                )
    return {
        "first": _brief(first),
        "second": _brief(again),
        "forced": _brief(forced),
        "seconds": [round(took, 2), round(took2, 2)],
        "episodes_same": same,
        "episodes_differ": differ,
    }


def _brief(summary: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "transcripts",
        "sessions",
        "stored",
        "appended",
        "unchanged",
        "turns",
        "added",
        "skipped",
        "errors",
        "seconds",
        "sessions_per_s",
        "turns_per_s",
    )
    return {k: summary.get(k) for k in keys}


def backfill_throughput(work: Path, claude_count: int, codex_count: int) -> dict[str, Any]:
    import backfill_corpus

    from memory_substrate.hooks.transcripts import read_claude_code, read_codex

    home = work / "home"
    out: dict[str, Any] = {}
    for client, count, folder, write, read in (
        (
            "claude-code",
            claude_count,
            home / ".claude" / "projects",
            backfill_corpus.write_claude,
            read_claude_code,
        ),
        ("codex", codex_count, home / ".codex" / "sessions", backfill_corpus.write_codex, read_codex),
    ):
        if not count:
            continue
        files = write(folder, count)
        every = sorted(folder.rglob("*.jsonl"))
        started = time.perf_counter()
        parsed = sum(len(read(p).turns) for p in every)
        parse_s = time.perf_counter() - started
        root = work / f"store-{client}"
        first, wall = _backfill(client, folder, root, home)
        again, wall2 = _backfill(client, folder, root, home)
        out[client] = {
            "transcripts": len(every),
            "sessions_written": len(files),
            "first": _brief(first),
            "second": _brief(again),
            "process_seconds": [round(wall, 2), round(wall2, 2)],
            "baseline_parse_only": {
                "turns": parsed,
                "seconds": round(parse_s, 2),
                "turns_per_s": round(parsed / parse_s, 1) if parse_s else None,
            },
        }
    return out


# --- report ---------------------------------------------------------------------------------------
def table(results: dict[str, Any]) -> str:
    rows = [
        "| scenario | variant | runs ok | facts reached (first request) | in wrapper | by the prompt's "
        "injection | covered prompt tokens "
        "mean/max | uncovered tokens max | SessionStart p50/p95 ms | UserPromptSubmit p50/p95 ms | "
        "Stop p50/p95 ms | leaks | secrets later |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for scen in results["scenarios"]:
        for v in scen["variants"]:

            def pp(event: str, h: dict[str, Any] = v["hooks_ms"]) -> str:
                d = h[event]["debug_log"]
                return "—" if not d["n"] else f"{d['p50']:.0f} / {d['p95']:.0f} (n={d['n']})"

            rows.append(
                f"| {scen['name']} ({scen['split']}) | {v['variant']} | {v['client_runs_ok']}/{v['session_count']} | "
                f"{v['fact_share_first_request']} ({v['fact_pairs']} pairs) | {v['fact_share_in_wrapper']} | "
                f"{v.get('fact_share_by_prompt')} | "
                f"{v['prompt_tokens']['covered_mean']} / {v['prompt_tokens']['covered_max']} | "
                f"{v['prompt_tokens']['uncovered_max']} | {pp('SessionStart')} | {pp('UserPromptSubmit')} | "
                f"{pp('Stop')} | {v['other_project_leaks']} | {v['secrets_sent_later']} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="CI-sized: part of the dev scenario, fewer variants"
    )
    parser.add_argument("--scenarios", nargs="+", choices=["dev", "held-out"], default=None)
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=None)
    parser.add_argument(
        "--turns", type=int, default=None, help="LoCoMo turns preloaded (default 10000; quick 1000)"
    )
    parser.add_argument(
        "--backfill",
        type=int,
        nargs=2,
        metavar=("CLAUDE", "CODEX"),
        default=None,
        help="transcripts made for the throughput run (default 300 100; quick 20 10)",
    )
    parser.add_argument(
        "--fresh-store", action="store_true", help="rebuild the preloaded store, not the cached one"
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the work folder here")
    args = parser.parse_args(argv)

    scenarios = args.scenarios or (["dev"] if args.quick else ["dev", "held-out"])
    default_variants = (
        ["none", "noop-hooks", "memory", "memory-10k-warm"]
        if args.quick
        else ["none", "noop-hooks", "memory", "memory-10k", "memory-10k-warm", "codex-none", "codex-memory"]
    )
    variants = [VARIANTS[v] for v in (args.variants or default_variants)]
    turns = args.turns if args.turns is not None else (1000 if args.quick else 10_000)
    variants = [
        replace(v, turns=turns, name=v.name.replace("10k", _k(turns))) if v.turns else v for v in variants
    ]
    counts = args.backfill or ([20, 10] if args.quick else [300, 100])
    work = args.keep or Path(tempfile.mkdtemp(prefix="sessions-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "turns": turns,
        "load_before": os.getloadavg(),
        "scenarios": [],
    }
    for key in scenarios:
        scenario = DEV if key == "dev" else HELD_OUT
        if args.quick:
            scenario = replace(scenario, sessions=tuple(scenario.sessions[i] for i in scenario.quick))
        scen: dict[str, Any] = {"name": scenario.name, "split": scenario.split, "variants": []}
        for variant in variants:
            if variant.client == "codex" and scenario.split != "dev":
                continue  # Codex runs the dev set only
            print(f"{scenario.split}: {variant.name}", file=sys.stderr)
            result = run_variant(scenario, variant, work / key / variant.name, fresh_store=args.fresh_store)
            if variant.name in ("memory", "codex-memory"):
                result["backfill_rebuild"] = backfill_rebuild(result, work / key / variant.name)
            scen["variants"].append(result)
        results["scenarios"].append(scen)
    print("backfill throughput", file=sys.stderr)
    results["backfill"] = backfill_throughput(work / "backfill", counts[0], counts[1])
    results["load_after"] = os.getloadavg()
    results["targets"] = TARGETS
    for scen in results["scenarios"]:
        for v in scen["variants"]:
            v.pop("_paths", None)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"sessions_bench-{time.strftime('%Y%m%d-%H%M%S')}{'-quick' if args.quick else ''}.json"
    out.write_text(json.dumps(results, indent=2))
    print(table(results))
    for client, b in results["backfill"].items():
        f = b["first"]
        print(
            f"backfill {client}: {b['transcripts']} transcripts, {f['sessions']} sessions, {f['turns']} turns in "
            f"{f['seconds']} s: {f['sessions_per_s']} sessions/s, {f['turns_per_s']} turns/s; second run added "
            f"{b['second']['added']} (stored {b['second']['stored']}); parse only {b['baseline_parse_only']['turns_per_s']} turns/s"
        )
    print(f"wrote {out}")
    return 0


def _k(turns: int) -> str:
    return f"{turns // 1000}k" if turns % 1000 == 0 else str(turns)


if __name__ == "__main__":
    sys.exit(main())
