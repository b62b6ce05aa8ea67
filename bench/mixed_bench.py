#!/usr/bin/env python3
"""Context compiler in stores that look like real ones, each figure beside plain search in the same run.

One namespace per LoCoMo dev conversation, grown in three steps and measured after each:

(a) clean: the conversation's sessions, one captured conversation each;
(b) + what an agent or model extracts first: each session's two speakers as ``person`` entities
    and the fact "A talked_with B" citing the session's first two turns (``memory_remember
    extraction``);
(c) + real code and docs: the source trees of ``rich`` and ``httpx`` (or ``httpx2``) from this
    virtual environment ingested as repos, a small Markdown vault (``import-from markdown``), a
    reference-MCP-memory JSON Lines file (``bench/gen_mcp_memory.py``, imported) and 40 short
    operations chats full of similar exact tokens (IPs, versions, ticket ids, paths).

Metrics per store:

* evidence recall at 1,500 and 4,096 tokens: the compiler (XML) against segment-search excerpts
  cut at the same budget (``bench/context_bench.py``'s machinery and definitions);
* evidence-free packages: the share of chat questions whose package holds no turn at all;
* (c) only, first conversation's namespace: code questions (a public function's docstring, first
  sentence, with its name removed) answered when its ``def`` line and docstring are in the
  package at 1,500 tokens, and in segment search's top 5 (also printed: answered by any function
  whose question is the same, as "Send a ` ` request." is for get, post, put...); exact-token queries (each token
  of the operations chats) answered when object search's top 5 holds its chat.

    .venv/bin/python bench/mixed_bench.py                   # every dev conversation
    .venv/bin/python bench/mixed_bench.py --conversations 1 # fast iteration
    .venv/bin/python bench/mixed_bench.py --limit 40        # first 40 questions per conversation
    .venv/bin/python bench/mixed_bench.py --only a          # store (a) alone, every conversation
    .venv/bin/python bench/mixed_bench.py --only code --store /tmp/mixed-c --show-misses  # code questions only

Data: /work/shared/data/locomo/locomo_dev.json (CC BY-NC 4.0; evaluation only, never shipped).
"""

from __future__ import annotations

import argparse
import ast
import random
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for p in (HERE.parent / "src", HERE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from context_bench import _encoded, _norm, bare_text, baseline_texts, save  # noqa: E402
from gen_mcp_memory import generate  # noqa: E402
from locomo_bench import DEFAULT_DATA, Conversation, load_locomo  # noqa: E402

from memory_substrate import Memory, Settings  # noqa: E402
from memory_substrate.util import fix_ids  # noqa: E402

SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
REPOS = ("rich", "httpx", "httpx2")
VAULT = {
    "Project Atlas.md": "# Project Atlas\n\nAtlas moves the billing data to [[PostgreSQL]]. Owner: the data team.\n#project",
    "PostgreSQL.md": "# PostgreSQL\n\nOur main database. Backups run nightly; see [[Project Atlas]].\n#database",
    "notes.md": "# Notes\n\nIdeas for the offsite, a reading list and [[Missing Page]]. #family #music\n",
    "Reading list.md": "# Reading list\n\nBooks to read this year: a novel, a history of maps. #books\n",
    "Family.md": "# Family\n\nBirthdays and holidays to plan. #family\n",
}
GOV = {"reason": "mixed bench", "memory_source": "agent_inferred", "scope_refs": ["scope:bench"]}


# --- stores -------------------------------------------------------------------------------------
def ingest(mem: Memory, conv: Conversation) -> tuple[dict[str, str], list[tuple[str, list[str]]]]:
    """Sessions as conversations: (dia_id -> text, [(episode id, speakers)])."""
    texts, episodes = {}, []
    for n, turns in sorted(conv.sessions.items()):
        messages = [
            {
                "role": "user",
                "name": t.speaker,
                "content": t.text,
                **({"created_at": t.created_at.isoformat()} if t.created_at else {}),
            }
            for t in turns
        ]
        out = mem.ingest("conversation", {"title": f"{conv.sample_id} session {n}", "messages": messages})
        texts.update({t.key: t.text for t in turns})
        episodes.append((out["source_id"], list(dict.fromkeys(t.speaker for t in turns))))
    return texts, episodes


def add_speakers(mem: Memory, episodes: list[tuple[str, list[str]]]) -> None:
    """Store (b): each session's speakers as person entities, and who talked with whom."""
    for ep, speakers in episodes:
        facts = []
        if len(speakers) >= 2:
            facts.append(
                {
                    "subject": speakers[0],
                    "predicate": "talked_with",
                    "object": speakers[1],
                    "segment_ids": ["seg-1", "seg-2"],
                }
            )
        mem.remember(
            "extraction",
            {
                "episode_id": ep,
                **GOV,
                "entities": [{"name": s, "type": "person"} for s in speakers],
                "facts": facts,
                "procedures": [],
            },
        )


def ops_chats(rng: random.Random) -> list[tuple[str, list[str]]]:
    """40 short operations chats with similar exact tokens: (text, tokens)."""
    chats = []
    for i in range(40):
        ip, ver, ticket = f"10.0.{i % 5}.{17 + i}", f"2.{i % 4}.{11 + i}", f"OPS-{1700 + i}"
        path = f"/var/log/svc-{i}/worker.log"
        text = (
            f"Ticket {ticket}: the worker on {ip} crashed after the upgrade to version {ver}; "
            f"the trace is in {path}. {rng.choice(['Rolled back.', 'Restarted it.', 'Paged the owner.'])}"
        )
        chats.append((text, [ip, ver, ticket, path]))
    return chats


def add_code_and_docs(mem: Memory, work: Path, rng: random.Random) -> tuple[list[str], list[tuple[str, str]]]:
    """Store (c): repos, vault, MCP JSONL, operations chats. Returns (repo source ids, [(token, chat id)])."""
    repos = [
        mem.ingest("repo", {"path": str(SITE / name)})["source_id"]
        for name in REPOS
        if (SITE / name).is_dir()
    ]
    vault = work / "vault"
    vault.mkdir(exist_ok=True)
    for name, text in VAULT.items():
        (vault / name).write_text(text, encoding="utf-8")
    from memory_substrate.importers.markdown_notes import import_markdown
    from memory_substrate.importers.mcp_memory import import_mcp_memory

    import_markdown(mem, vault)
    jsonl = work / "memory.jsonl"
    if not jsonl.exists():
        generate(jsonl, 150_000)
    import_mcp_memory(mem, jsonl)
    tokens = []
    for text, toks in ops_chats(rng):
        out = mem.ingest("conversation", {"title": "ops", "messages": [{"role": "user", "content": text}]})
        tokens.extend((t, out["source_id"]) for t in toks)
    return repos, tokens


# --- code questions ---------------------------------------------------------------------------
def code_questions(limit: int) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """(question, def line, docstring's first line, every (def line, docstring line) whose question
    is the same) for public functions with a docstring. With its name removed, "Send a `GET`
    request." asks what "Send a `POST` request." asks: such a question has several answers."""
    out = []
    for name in REPOS:
        for path in sorted((SITE / name).rglob("*.py")):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                continue
            for node in ast.walk(tree):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name.startswith("_"):
                    continue
                doc = ast.get_docstring(node, clean=False)
                if not doc:
                    continue
                first = re.split(r"(?<=[.!?])\s|\n\s*\n", doc.strip(), maxsplit=1)[0]
                question = re.sub(re.escape(node.name), " ", " ".join(first.split()), flags=re.I).strip()
                if len(question.split()) >= 4:
                    out.append((question, f"def {node.name}(", doc.strip().splitlines()[0].strip()))
    answers: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for question, def_line, doc_line in out:
        answers[question].append((def_line, doc_line))
    random.Random(22).shuffle(out)
    return [(q, d, doc, answers[q]) for q, d, doc in out[:limit]]


# --- measuring ---------------------------------------------------------------------------------
def measure_chat(
    mem: Memory,
    conv: Conversation,
    texts: dict[str, str],
    budgets: list[int],
    limit: int | None,
    acc: dict[str, Any],
) -> None:
    for q in conv.questions[:limit]:
        ranked = baseline_texts(mem, q.text)
        for budget in budgets:
            t0 = time.perf_counter()
            out = mem.query("context", {"task": q.text}, {"budget_tokens": budget, "format": "xml"})
            elapsed = (time.perf_counter() - t0) * 1000
            content = _norm(out["content"])
            acc[f"compile@{budget}"].append(
                sum(_encoded(texts[e], "xml") in content for e in q.evidence) / len(q.evidence)
            )
            plain = _norm(bare_text(ranked, budget, skip_long=False))
            acc[f"search@{budget}"].append(
                sum(_encoded(texts[e], "text") in plain for e in q.evidence) / len(q.evidence)
            )
            if budget == budgets[0]:
                acc["evidence_free"].append(float("<episode" not in out["content"]))
                acc["compile_ms"].append(elapsed)


def measure_code(
    mem: Memory,
    questions: list[tuple[str, str, str, list[tuple[str, str]]]],
    budget: int,
    show_misses: bool = False,
) -> dict[str, float]:
    ctx, top5, top5_any = [], [], []
    for question, def_line, doc_line, answers in questions:
        out = mem.query("context", {"task": question}, {"budget_tokens": budget, "format": "xml"})
        content = out["content"]
        ctx.append(float(def_line in content and _encoded(doc_line, "xml")[:60] in _norm(content)))
        found = mem.query(
            "search", {"query": question}, {"max_items": 5, "result_unit": "segment", "detail": "full"}
        )
        keys = [(i["source_id"], i["segment_id"]) for i in found["items"]]
        with mem.runtime.read() as session:
            segs = session.get_segments_by_keys(sorted(set(keys)))
        whole = [_norm(s.text) for s in segs]
        top5.append(float(any(def_line in t and _norm(doc_line)[:60] in t for t in whole)))
        top5_any.append(float(any(d in t and _norm(doc)[:60] in t for t in whole for d, doc in answers)))
        if show_misses and not (top5[-1] and ctx[-1]):
            by_key = {(s.source_id, s.id): s.text for s in segs}
            print(
                f"MISS (top 5 {top5[-1]:.0f}, any {top5_any[-1]:.0f}, package {ctx[-1]:.0f}) {question!r} -> {def_line}",
                file=sys.stderr,
            )
            for k in keys:
                print("    " + " | ".join(by_key.get(k, "?").splitlines())[:160], file=sys.stderr)
    return {
        "context": statistics.fmean(ctx) if ctx else 0.0,
        "segment_search_top5": statistics.fmean(top5) if top5 else 0.0,
        "segment_search_top5_any_answer": statistics.fmean(top5_any) if top5_any else 0.0,
        "ambiguous": sum(len(a) > 1 for *_, a in questions),
        "n": len(questions),
    }


def measure_tokens(mem: Memory, tokens: list[tuple[str, str]]) -> dict[str, float]:
    hits = []
    for token, chat in tokens:
        found = mem.query("search", {"query": token}, {"max_items": 5})
        hits.append(float(chat in [i["id"] for i in found["items"]]))
    kinds = defaultdict(list)
    for (token, _), h in zip(tokens, hits, strict=True):
        kind = (
            "ip"
            if re.fullmatch(r"[\d.]+", token) and token.count(".") == 3
            else (
                "version"
                if re.fullmatch(r"[\d.]+", token)
                else "ticket"
                if token.startswith("OPS-")
                else "path"
            )
        )
        kinds[kind].append(h)
    return {
        "all": statistics.fmean(hits),
        **{k: statistics.fmean(v) for k, v in kinds.items()},
        "n": len(hits),
    }


def run(
    convs: list[Conversation],
    budgets: list[int],
    limit: int | None,
    n_code: int,
    database_url: str | None,
    show_misses: bool = False,
    steps: str = "abc",
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="mixedbench-"))
    settings = Settings(root=work / "store", embedder="static", database_url=database_url)
    acc: dict[str, dict[str, list[float]]] = {s: defaultdict(list) for s in steps}
    extra: dict[str, Any] = {}
    rng = random.Random(7)
    for i, conv in enumerate(convs):
        mem = Memory(settings, namespace=f"mixed-{conv.sample_id}")
        # Ids drawn from the namespace's name: the package cites sources by their ids' random
        # part, whose token count varies, so generated ids moved recall from one run to the next.
        fix_ids(mem.namespace)
        texts, episodes = ingest(mem, conv)
        measure_chat(mem, conv, texts, budgets, limit, acc["a"])
        if steps != "a":
            add_speakers(mem, episodes)
            measure_chat(mem, conv, texts, budgets, limit, acc["b"])
            _, tokens = add_code_and_docs(mem, work, rng)
            measure_chat(mem, conv, texts, budgets, limit, acc["c"])
        if i == 0 and steps != "a":
            extra["code"] = measure_code(mem, code_questions(n_code), budgets[0], show_misses)
            extra["exact_tokens"] = measure_tokens(mem, tokens)
        mem.close()
        fix_ids(None)
        print(f"  {conv.sample_id} done", file=sys.stderr, flush=True)
    stores = {
        s: {k: statistics.fmean(v) for k, v in a.items() if k != "compile_ms"}
        | {"questions": len(a["evidence_free"]), "compile_ms_p50": statistics.median(a["compile_ms"])}
        for s, a in acc.items()
    }
    return {"stores": stores, **extra}


def run_code(
    conv: Conversation,
    n_code: int,
    budget: int,
    database_url: str | None,
    store: Path | None,
    show_misses: bool,
) -> dict[str, Any]:
    """Code questions only, in store (c) of the first conversation. With ``store``, the store is
    built there once and reused by later runs (ranking changes need no rebuild; ingest changes do:
    delete the folder)."""
    work = store or Path(tempfile.mkdtemp(prefix="mixedbench-"))
    work.mkdir(parents=True, exist_ok=True)
    settings = Settings(root=work / "store", embedder="static", database_url=database_url)
    mem = Memory(settings, namespace=f"mixed-code-{conv.sample_id}")
    marker = work / "built"
    if not marker.exists():
        fix_ids(mem.namespace)  # as run() builds its stores
        try:
            _, episodes = ingest(mem, conv)
            add_speakers(mem, episodes)
            add_code_and_docs(mem, work, random.Random(7))
        finally:
            fix_ids(None)
        marker.write_text("store (c) built\n", encoding="utf-8")
    try:
        return {"code": measure_code(mem, code_questions(n_code), budget, show_misses)}
    finally:
        mem.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--budgets", type=int, nargs="+", default=[1500, 4096])
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions of each conversation")
    ap.add_argument("--code-questions", type=int, default=60)
    ap.add_argument("--database-url", default=None, help="PostgreSQL URL (default: SQLite)")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument(
        "--only",
        choices=["code", "a"],
        default=None,
        help="code: only the code questions, in store (c) of the first conversation; a: only store (a) "
        "(its figures differ a little from a full run's: full-text statistics are table-wide, and "
        "no earlier namespace grows to (b) and (c))",
    )
    ap.add_argument(
        "--store",
        type=Path,
        default=None,
        help="with --only code: build store (c) in this folder once and reuse it",
    )
    ap.add_argument("--show-misses", action="store_true", help="print each missed code question's top 5")
    args = ap.parse_args(argv)
    t0 = time.time()
    if args.only == "code":
        c = run_code(
            load_locomo(args.data)[0],
            args.code_questions,
            args.budgets[0],
            args.database_url,
            args.store,
            args.show_misses,
        )["code"]
        print(
            f"code questions (n={c['n']}): in the package at {args.budgets[0]}: {c['context']:.3f}; segment search "
            f"top 5: {c['segment_search_top5']:.3f} (its own function); {c['segment_search_top5_any_answer']:.3f} "
            f"(any function the question fits: {c['ambiguous']} questions fit several) ({time.time() - t0:.0f} s)"
        )
        return 0
    res = run(
        load_locomo(args.data)[: args.conversations],
        args.budgets,
        args.limit,
        args.code_questions,
        args.database_url,
        args.show_misses,
        "a" if args.only == "a" else "abc",
    )
    print(
        f"LoCoMo dev, evidence recall (compiler XML package | segment-search excerpts cut at the budget), "
        f"{res['stores']['a']['questions']} questions per store"
    )
    print(
        f"{'store':42s}"
        + "".join(f"  compile@{b:<5d} search@{b:<5d} diff  " for b in args.budgets)
        + "  evidence-free  compile p50 ms"
    )
    names = {
        "a": "(a) clean",
        "b": "(b) + speakers as entities",
        "c": "(c) + repos, vault, MCP facts, ops chats",
    }
    for key, s in res["stores"].items():
        cells = "".join(
            f"  {s[f'compile@{b}']:.3f}        {s[f'search@{b}']:.3f}       {s[f'compile@{b}'] - s[f'search@{b}']:+.3f}"
            for b in args.budgets
        )
        print(f"{names[key]:42s}{cells}  {s['evidence_free']:.3f}          {s['compile_ms_p50']:.1f}")
    b0 = args.budgets[0]
    for key in [k for k in "bc" if k in res["stores"]]:
        print(
            f"  store ({key}) - store (a) at {b0}: {res['stores'][key][f'compile@{b0}'] - res['stores']['a'][f'compile@{b0}']:+.3f}"
        )
    if "code" in res:
        c = res["code"]
        print(
            f"code questions (n={c['n']}): in the package at {b0}: {c['context']:.3f}; segment search top 5: "
            f"{c['segment_search_top5']:.3f} (its own function); {c['segment_search_top5_any_answer']:.3f} (any function "
            f"the question fits: {c['ambiguous']} questions fit several)"
        )
        e = res["exact_tokens"]
        print(
            "exact-token queries, object search top 5: "
            + ", ".join(f"{k} {v:.3f}" for k, v in e.items() if k != "n")
            + f" (n={e['n']})"
        )
    print(f"({time.time() - t0:.0f} s)")
    save(args.out, "mixed", res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
