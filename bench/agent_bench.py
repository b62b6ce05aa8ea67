#!/usr/bin/env python3
"""Agent-work benchmark: what the context compiler hands an agent starting a task on a project
memory (knowledge, work items, procedures, chat turns, repo files and docs), beside plain object
search cut at the same token budget in the same run.

Everything goes through MCP, the official SDK's in-process client (``mcp.Client``) over
``build_server``, as an agent would: the timeline of each data file (bench/data/agent/FORMAT.md)
is written event by event into a fresh namespace (one store build per file), then every task is
posed once per budget.

- **Compiler:** ``memory_query context`` with the task as ``task`` and ``budget_tokens``. What is
  "in the package" is read from the compile's trace (``memory_query trace`` with the returned
  ``trace_id``): ``candidates.selected`` lists exactly the entries the budget fit kept, each with
  its store id (an object id, or ``source_id#segment_id`` for a turn, a repo symbol or a doc
  section). The trace is the most faithful source: ``items`` is optional and is topped up with open
  work that the rendered package does not carry, and matching ``content`` by text would need each
  item's rendering (short ids, truncation) to be re-derived here.
- **Baseline:** ``memory_query search`` (``result_unit`` object, ``detail`` full, 200 items) on
  the same task text. Its items are taken in rank order as bare text (an object's title and
  summary; a source's matched chunks, one unit each, the source title on the first) while their
  tokens fit the same budget; the first unit that does not fit ends it (a top-k cut, as
  ``context_bench.baseline_texts``). No ids or markup are counted, which favours the baseline.
  Tokens are counted with the compiler's own counter (``tokens.count_tokens``, the one every budget uses).

Label mapping: a turn ``c-x#3`` is the segment whose locator index is 3 in the conversation's
source; a knowledge item, work item or procedure is its object id; a repo file ``r-api:path`` is
any segment of the repo source whose locator path is that path; a doc ``d-x`` is its source or any
of its segments. A label counts as in a package when any of its store keys is.

Clock: the compiler reads the wall clock, so the file's ``now`` is mapped to the run's time and
every event is placed ``day`` days before it (turn times, knowledge ``valid_from``). Objects the
server stamps itself (work items, knowledge ``created_at``) carry the build's time.

Metrics, compiler beside baseline, per item type (knowledge, work_item, procedure, turn, file)
and overall: recall of required labels (pooled over tasks) at each budget; packages holding a
forbidden label; tokens of the packages of ``uncovered`` tasks (goal <= 300); recall per task
class; and the compiler's classification beside the labelled class.

    .venv/bin/python bench/agent_bench.py                       # every non-heldout file
    .venv/bin/python bench/agent_bench.py --heldout             # heldout_*.json only
    .venv/bin/python bench/agent_bench.py --data bench/data/agent/ledgerline.json --show-misses
    .venv/bin/python bench/agent_bench.py --budget 1500 --json /tmp/agent.json
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from memory_substrate import Memory, Settings
from memory_substrate.graph import deferred
from memory_substrate.mcp.server import build_server
from memory_substrate.tokens import count_tokens
from memory_substrate.util import fix_ids

DATA_DIR = Path(__file__).resolve().parent / "data" / "agent"
TYPES = ("knowledge", "work_item", "procedure", "turn", "file")
CLASSES = ("debug", "architecture", "compliance", "writing", "chat")
WIDE_BUDGET = 4096
SCOPE = ["scope:project"]
PROCEDURE_KINDS = {"workflow", "decision_rule", "best_practice", "convention", "troubleshooting"}
# "reach": what the package holds in full or names in its index (``more``), one expand away.
SYSTEMS = ("compiler", "reach", "search")
# FORMAT.md's "observed" is the store's observed evidence status, which a system_generated write
# with cited evidence earns (docs/knowledge-graph.md); the API has no memory_source of that name.
SOURCES = {"observed": "system_generated"}


class ToolError(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        try:
            err = json.loads(text)
            self.code, self.message = str(err.get("code")), str(err.get("message"))
        except (ValueError, AttributeError):
            self.code, self.message = "unparsed", text


async def call(
    client: Client, tool: str, mode: str, data: dict[str, Any], options: dict[str, Any] | None = None
) -> dict[str, Any]:
    args: dict[str, Any] = {"mode": mode, "input_data": data}
    if options is not None:
        args["options"] = options
    result = await client.call_tool(tool, {"args": args})
    if result.is_error:
        raise ToolError(result.content[0].text)  # type: ignore[union-attr]
    assert result.structured_content is not None
    return result.structured_content


@dataclass
class Store:
    """Local label -> store keys, local label -> item type, and what went wrong while writing."""

    keys: dict[str, set[str]] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # conversation / repo / doc id -> source id
    # Why a label may be forbidden: superseded, unverified guess, unproven procedure, closed work.
    stale: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    def put(self, label: str, kind: str, *keys: str) -> None:
        self.keys.setdefault(label, set()).update(keys)
        self.types[label] = kind


# --- building the store -----------------------------------------------------------------------


def declared_types(data: dict[str, Any]) -> dict[str, str]:
    """Every label the timeline declares, with its item type, whether or not its write succeeds."""
    out: dict[str, str] = {}
    for ev in data["timeline"]:
        op = ev.get("op")
        if op == "conversation":
            out.update({f"{ev['id']}#{i}": "turn" for i in range(len(ev["turns"]))})
        elif op == "repo":
            out.update({f"{ev['id']}:{path}": "file" for path in ev["files"]})
        elif op in ("knowledge", "work_item", "procedure", "doc"):
            out[ev["id"]] = "file" if op == "doc" else op
    return out


class Builder:
    def __init__(self, client: Client, data: dict[str, Any], workdir: Path) -> None:
        self.client, self.data, self.workdir = client, data, workdir
        self.now = datetime.now(UTC)
        self.store = Store(types=declared_types(data))

    def at(self, day: float, minutes: int = 0) -> str:
        return (self.now - timedelta(days=float(day)) + timedelta(minutes=minutes)).isoformat()

    def ref(self, label: str) -> str:
        """The one store id of an object label (knowledge, work item, procedure, source)."""
        if label in self.store.sources:
            return self.store.sources[label]
        keys = self.store.keys.get(label)
        if not keys or len(keys) != 1:
            raise KeyError(f"{label!r} was not written (or is not a single object)")
        return next(iter(keys))

    def evidence(self, labels: list[str]) -> list[dict[str, str]]:
        out = []
        for label in labels:
            source_id, _, seg = next(iter(self.store.keys[label])).partition("#")
            out.append({"source_id": source_id, "segment_id": seg})
        return out

    async def run(self) -> Store:
        handlers = {
            "conversation": self.conversation,
            "knowledge": self.knowledge,
            "supersede": self.supersede,
            "work_item": self.work_item,
            "work_update": self.work_update,
            "procedure": self.procedure,
            "repo": self.repo,
            "doc": self.doc,
        }
        for n, event in enumerate(self.data["timeline"]):
            op = event.get("op")
            try:
                await handlers[op](event)
            except ToolError as exc:
                if op == "work_update" and "work_item_id" in exc.message and "not permitted" in exc.message:
                    self.store.skipped["work_update (server has no work_item_id update path)"] += 1
                    continue
                self.store.errors.append(
                    f"event {n} {op} {event.get('id', event.get('old', ''))}: {exc.code}: {exc.message[:300]}"
                )
            except (KeyError, ValueError) as exc:
                self.store.errors.append(f"event {n} {op} {event.get('id', '')}: {type(exc).__name__}: {exc}")
        return self.store

    async def segments(self, source_id: str) -> list[dict[str, Any]]:
        page = await call(
            self.client,
            "memory_query",
            "page",
            {"id": source_id},
            {"include_segments": True, "detail": "compact", "max_items": 500},
        )
        return list(page.get("segments") or page.get("object", {}).get("segments") or [])

    async def conversation(self, ev: dict[str, Any]) -> None:
        messages = [
            {"role": "user", "name": t["speaker"], "content": t["text"], "created_at": self.at(ev["day"], i)}
            for i, t in enumerate(ev["turns"])
        ]
        out = await call(
            self.client, "memory_ingest", "conversation", {"title": ev["title"], "messages": messages}
        )
        sid = out["source_id"]
        self.store.sources[ev["id"]] = sid
        by_index = {s["locator"].get("index"): s["segment_id"] for s in await self.segments(sid)}
        for i in range(len(ev["turns"])):
            self.store.put(f"{ev['id']}#{i}", "turn", f"{sid}#{by_index.get(i, f'seg-{i + 1}')}")

    async def knowledge(self, ev: dict[str, Any]) -> None:
        data = {
            "kind": ev["kind"],
            "title": ev["title"],
            "summary": ev["summary"],
            "reason": ev.get("reason", "recorded while working on the project"),
            "memory_source": SOURCES.get(
                ev.get("memory_source", ""), ev.get("memory_source", "user_declared")
            ),
            "scope_refs": SCOPE,
            "valid_from": self.at(ev["day"]),
            "evidence_refs": self.evidence(ev.get("evidence", [])),
        }
        if ev.get("status"):
            data["status"] = ev["status"]
        out = await call(self.client, "memory_remember", "knowledge", data)
        self.store.put(ev["id"], "knowledge", out["object_id"])
        if out.get("knowledge_status") == "candidate":
            self.store.stale[ev["id"]] = "unverified guess"

    async def supersede(self, ev: dict[str, Any]) -> None:
        await call(
            self.client,
            "memory_remember",
            "supersede",
            {
                "old_knowledge_id": self.ref(ev["old"]),
                "new_knowledge_id": self.ref(ev["new"]),
                "reason": ev.get("reason", "replaced"),
            },
        )
        self.store.stale[ev["old"]] = "superseded"

    async def work_item(self, ev: dict[str, Any]) -> None:
        data = {
            "kind": ev.get("kind", "task"),
            "title": ev["title"],
            "summary": ev["summary"],
            "reason": ev.get("reason", "tracked as project work"),
            "memory_source": ev.get("memory_source", "user_declared"),
            "scope_refs": SCOPE,
            "status": ev.get("status", "open"),
        }
        if ev.get("priority"):
            data["priority"] = ev["priority"]
        out = await call(self.client, "memory_remember", "work_item", data)
        self.store.put(ev["id"], "work_item", out["object_id"])

    async def work_update(self, ev: dict[str, Any]) -> None:
        data = {"work_item_id": self.ref(ev["id"]), "reason": ev.get("reason", "status changed")}
        data.update({k: ev[k] for k in ("status", "priority", "summary") if k in ev})
        await call(self.client, "memory_remember", "work_item", data)
        if ev.get("status") in ("done", "cancelled"):
            self.store.stale[ev["id"]] = "closed work"
        elif "status" in ev:
            self.store.stale.pop(ev["id"], None)

    async def procedure(self, ev: dict[str, Any]) -> None:
        kind = ev.get("kind", "workflow")
        proc = {
            "kind": kind if kind in PROCEDURE_KINDS else "workflow",
            "title": ev["title"],
            "text": ev["text"],
        }
        pid = None
        for episode in ev["episodes"]:
            conv, _, turn = episode.partition("#")
            segs = [next(iter(self.store.keys[episode])).partition("#")[2]] if turn else []
            out = await call(
                self.client,
                "memory_remember",
                "extraction",
                {
                    "episode_id": self.ref(conv),
                    "reason": "procedure observed in this conversation",
                    "memory_source": "agent_inferred",
                    "scope_refs": SCOPE,
                    "procedures": [{**proc, "segment_ids": segs}],
                },
            )
            found = out["procedures"]["created"] + out["procedures"]["merged"]
            pid = pid or (found[0] if found else None)
        if pid is None:
            raise ValueError("extraction returned no procedure id")
        self.store.put(ev["id"], "procedure", pid)
        if len({e.partition("#")[0] for e in ev["episodes"]}) < 3:
            self.store.stale[ev["id"]] = "unproven procedure"
        else:
            page = await call(self.client, "memory_query", "page", {"id": pid})
            if page["object"].get("status") == "candidate":
                await call(
                    self.client,
                    "memory_remember",
                    "promote",
                    {"knowledge_id": pid, "reason": "seen in three episodes"},
                )

    def write_files(self, name: str, files: dict[str, str]) -> Path:
        root = self.workdir / name
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return root

    async def repo(self, ev: dict[str, Any]) -> None:
        root = self.write_files(ev["id"], ev["files"])
        out = await call(self.client, "memory_ingest", "repo", {"path": str(root)})
        sid = out["source_id"]
        self.store.sources[ev["id"]] = sid
        for seg in await self.segments(sid):
            path = seg["locator"].get("path")
            if path in ev["files"]:
                self.store.put(f"{ev['id']}:{path}", "file", f"{sid}#{seg['segment_id']}")
        for path in ev["files"]:
            if f"{ev['id']}:{path}" not in self.store.keys:
                self.store.errors.append(f"repo {ev['id']}: no segment of {path} (label cannot be found)")

    async def doc(self, ev: dict[str, Any]) -> None:
        path = self.write_files(ev["id"], {ev["path"]: ev["content"]}) / ev["path"]
        out = await call(self.client, "memory_ingest", "file", {"path": str(path), "title": ev["title"]})
        sid = out["source_id"]
        self.store.sources[ev["id"]] = sid
        self.store.put(ev["id"], "file", sid, *(f"{sid}#{s['segment_id']}" for s in await self.segments(sid)))


# --- posing the tasks -------------------------------------------------------------------------


def search_units(items: list[dict[str, Any]]) -> list[tuple[str, set[str]]]:
    """Search items as bare-text units in rank order, each with the store keys it shows."""
    units: list[tuple[str, set[str]]] = []
    for item in items:
        chunks = item.get("matched_chunks") or []
        if item.get("object_type") == "source" and chunks:
            for n, chunk in enumerate(chunks):
                head = f"{item.get('title', '')}\n" if n == 0 else ""
                who = f"{chunk['name']}: " if chunk.get("name") else ""
                units.append((f"{head}{who}{chunk.get('excerpt', '')}\n", {item["id"], chunk["chunk_id"]}))
        else:
            units.append((f"{item.get('title', '')}: {item.get('summary', '')}\n", {item["id"]}))
    return units


def cut(units: list[tuple[str, set[str]]], budget: int) -> tuple[set[str], int]:
    keys: set[str] = set()
    used = 0
    for text, unit_keys in units:
        cost = count_tokens(text)
        if used + cost > budget:
            break
        used += cost
        keys |= unit_keys
    return keys, used


async def pose(client: Client, task: dict[str, Any], budgets: list[int]) -> dict[str, Any]:
    """One task: the compiler's package and the search cut at each budget, as sets of store keys."""
    out: dict[str, Any] = {"compiler": {}, "reach": {}, "search": {}, "class": None, "ms": []}
    for budget in budgets:
        t0 = time.perf_counter()
        ctx = await call(client, "memory_query", "context", {"task": task["task"]}, {"budget_tokens": budget})
        out["ms"].append((time.perf_counter() - t0) * 1000)
        trace = (await call(client, "memory_query", "trace", {"id": ctx["trace_id"]}))["trace"]
        selected = {s["id"] for s in trace["candidates"]["selected"]}
        indexed = {m["id"] for m in trace.get("more") or []}
        # Why each candidate left out was left out (the trace's reasons), for --show-misses.
        out.setdefault("why", {})[budget] = {
            r["id"]: r.get("reason", "") for r in trace["candidates"].get("rejected", [])
        }
        out["compiler"][budget] = (selected, int(ctx["token_count"]))
        out["reach"][budget] = (selected | indexed, int(ctx["token_count"]))
        out.setdefault("index_share", {})[budget] = index_tokens(str(ctx["content"])) / max(
            1, int(ctx["token_count"])
        )
        out["class"] = out["class"] or ctx["classification"]["primary"]["class"]
    found = await call(
        client, "memory_query", "search", {"query": task["task"]}, {"max_items": 200, "detail": "full"}
    )
    units = search_units(found["items"])
    for budget in budgets:
        out["search"][budget] = cut(units, budget)
    return out


def index_tokens(content: str) -> int:
    """What the package's index of what else memory holds costs (its <more> element, or "more")."""
    if content.startswith("{"):
        more = json.loads(content).get("memory_context", {}).get("more")
        return count_tokens(json.dumps(more, ensure_ascii=False, separators=(",", ":"))) if more else 0
    m = re.search(r"<more\b.*?</more>", content, re.S)
    return count_tokens(m.group(0)) if m else 0


def holds(package: set[str], store: Store, label: str) -> bool:
    return bool(store.keys.get(label, set()) & package)


def score_task(
    task: dict[str, Any], posed: dict[str, Any], store: Store, budgets: list[int]
) -> dict[str, Any]:
    """Per system and budget: the required labels held and missed, the forbidden labels held, tokens."""
    unresolved = [
        lab for lab in task.get("required", []) + task.get("forbidden", []) if lab not in store.keys
    ]
    rec: dict[str, Any] = {
        "id": task["id"],
        "class": task["class"],
        "compiler_class": posed["class"],
        "uncovered": bool(task.get("uncovered")),
        "unresolved": unresolved,
        "task": task["task"],
        "unmapped_required": [lab for lab in task.get("required", []) if lab not in store.keys],
    }
    required = list(task.get("required", []))  # a label with no store id counts as a miss
    forbidden = [lab for lab in task.get("forbidden", []) if lab in store.keys]
    for system in SYSTEMS:
        for budget in budgets:
            package, tokens = posed[system][budget]
            rec[f"{system}@{budget}"] = {
                "hit": [lab for lab in required if holds(package, store, lab)],
                "miss": [lab for lab in required if not holds(package, store, lab)],
                "forbidden": [lab for lab in forbidden if holds(package, store, lab)],
                "tokens": tokens,
            }
    for budget in budgets:
        rec[f"index_share@{budget}"] = posed.get("index_share", {}).get(budget, 0.0)
        why = posed.get("why", {}).get(budget, {})
        rec[f"why@{budget}"] = {
            lab: next((why[k] for k in sorted(store.keys.get(lab, set())) if k in why), "never a candidate")
            for lab in rec[f"compiler@{budget}"]["miss"]
        }
    return rec


# --- figures ----------------------------------------------------------------------------------


def ratio(hit: int, total: int) -> float | None:
    return round(hit / total, 3) if total else None


def summarise(
    records: list[dict[str, Any]],
    store_types: dict[str, str],
    budgets: list[int],
    stale: dict[str, str] | None = None,
) -> dict[str, Any]:
    stale = stale or {}
    out: dict[str, Any] = {
        "tasks": len(records),
        "by_type": {},
        "by_class": {},
        "forbidden": {},
        "uncovered": {},
    }
    for system in SYSTEMS:
        for budget in budgets:
            key = f"{system}@{budget}"
            hits: Counter[str] = Counter()
            totals: Counter[str] = Counter()
            cls_hit: Counter[str] = Counter()
            cls_tot: Counter[str] = Counter()
            for rec in records:
                for lab in rec[key]["hit"]:
                    hits[store_types.get(lab, "unknown")] += 1
                    cls_hit[rec["class"]] += 1
                for lab in rec[key]["hit"] + rec[key]["miss"]:
                    totals[store_types.get(lab, "unknown")] += 1
                    cls_tot[rec["class"]] += 1
            by_type = {t: ratio(hits[t], totals[t]) for t in TYPES}
            by_type["overall"] = ratio(sum(hits.values()), sum(totals.values()))
            out["by_type"][key] = by_type
            out["by_type"].setdefault("required_counts", {t: totals[t] for t in TYPES})
            out["by_class"][key] = {c: ratio(cls_hit[c], cls_tot[c]) for c in CLASSES}
            out["forbidden"][key] = [rec["id"] for rec in records if rec[key]["forbidden"]]
            out.setdefault("forbidden_by_reason", {})[key] = dict(
                Counter(stale.get(lab, "other") for rec in records for lab in rec[key]["forbidden"])
            )
            toks = [rec[key]["tokens"] for rec in records if rec["uncovered"]]
            out["uncovered"][key] = {
                "tasks": len(toks),
                "median": statistics.median(toks) if toks else None,
                "max": max(toks) if toks else None,
                "over_300": sum(t > 300 for t in toks),
            }
    out["unmapped_required"] = sorted({lab for rec in records for lab in rec["unmapped_required"]})
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for rec in records:
        confusion[rec["class"]][rec["compiler_class"]] += 1
    out["classification"] = {
        "agree": ratio(sum(confusion[c][c] for c in confusion), len(records)),
        "confusion": {c: dict(v) for c, v in sorted(confusion.items())},
    }
    return out


def fmt(x: float | None) -> str:
    return "   -  " if x is None else f"{x:6.3f}"


def print_summary(
    name: str, s: dict[str, Any], budgets: list[int], records: list[dict[str, Any]], show_misses: bool
) -> None:
    print(f"\n== {name}: {s['tasks']} tasks ==")
    counts = s["by_type"]["required_counts"]
    if s["unmapped_required"]:
        print(
            f"required labels with no store id, counted as misses for both systems: {s['unmapped_required']}"
        )
    print(
        "recall of required items   "
        + "".join(f"{t}({counts[t]})".rjust(14) for t in TYPES)
        + "overall".rjust(10)
    )
    for budget in budgets:
        for system in SYSTEMS:
            row = s["by_type"][f"{system}@{budget}"]
            print(
                f"  {system:8s} @{budget:<5d}          "
                + "".join(fmt(row[t]).rjust(14) for t in TYPES)
                + fmt(row["overall"]).rjust(10)
            )
        diff = [
            None
            if s["by_type"][f"compiler@{budget}"][t] is None
            else round(s["by_type"][f"compiler@{budget}"][t] - s["by_type"][f"search@{budget}"][t], 3)
            for t in (*TYPES, "overall")
        ]
        print(
            f"  {'delta':8s} @{budget:<5d}          "
            + "".join(fmt(d).rjust(14) for d in diff[:-1])
            + fmt(diff[-1]).rjust(10)
        )
    print("recall per task class       " + "".join(c.rjust(14) for c in CLASSES))
    for budget in budgets:
        for system in SYSTEMS:
            row = s["by_class"][f"{system}@{budget}"]
            print(f"  {system:8s} @{budget:<5d}          " + "".join(fmt(row[c]).rjust(14) for c in CLASSES))
    print(f"packages holding a forbidden item (of {s['tasks']})")
    for budget in budgets:
        print(
            "  "
            + "   ".join(
                f"{system} @{budget}: {len(s['forbidden'][f'{system}@{budget}'])}" for system in SYSTEMS
            )
        )
    print("forbidden items held, by why they are forbidden")
    for budget in budgets:
        for system in SYSTEMS:
            held = s["forbidden_by_reason"][f"{system}@{budget}"]
            print(
                f"  {system:8s} @{budget:<5d} "
                + (", ".join(f"{k} {v}" for k, v in sorted(held.items())) or "none")
            )
    print("tokens of packages for uncovered tasks (goal <= 300)")
    for budget in budgets:
        for system in SYSTEMS:
            u = s["uncovered"][f"{system}@{budget}"]
            print(
                f"  {system:8s} @{budget:<5d} tasks {u['tasks']}  median {u['median']}  max {u['max']}  over 300: {u['over_300']}"
            )
    print("the index's share of a package's tokens (goal <= 0.20 on average)")
    for budget in budgets:
        shares = [rec[f"index_share@{budget}"] for rec in records]
        print(
            f"  compiler @{budget:<5d} mean {statistics.fmean(shares) if shares else 0:.3f}  "
            f"max {max(shares, default=0):.3f}  packages with an index {sum(x > 0 for x in shares)}"
        )
    c = s["classification"]
    print(f"compiler's class vs labelled class: agree {c['agree']}")
    for label, row in c["confusion"].items():
        print(
            f"  labelled {label:12s} -> "
            + ", ".join(f"{k} {v}" for k, v in sorted(row.items(), key=lambda kv: -kv[1]))
        )
    if show_misses:
        print_misses(records, budgets)


def print_misses(records: list[dict[str, Any]], budgets: list[int]) -> None:
    print("misses (required not in the package) and forbidden items held, per task")
    for rec in records:
        lines = []
        for budget in budgets:
            for system in SYSTEMS:
                r = rec[f"{system}@{budget}"]
                if r["miss"] or r["forbidden"]:
                    lines.append(
                        f"    {system} @{budget} ({r['tokens']} tok): miss {r['miss']}"
                        + (f"  FORBIDDEN {r['forbidden']}" if r["forbidden"] else "")
                    )
                    if system == "compiler":
                        lines += [f"      {lab}: {why}" for lab, why in rec.get(f"why@{budget}", {}).items()]
        if rec["uncovered"]:
            lines += [
                f"    {system} @{budget}: {rec[f'{system}@{budget}']['tokens']} tokens for a task memory does not cover"
                for budget in budgets
                for system in SYSTEMS
                if rec[f"{system}@{budget}"]["tokens"] > 300
            ]
        if rec["unresolved"]:
            lines.append(f"    labels with no store id (required ones count as misses): {rec['unresolved']}")
        if lines:
            print(f"  {rec['id']} [{rec['class']} -> {rec['compiler_class']}] {rec['task'][:90]}")
            print("\n".join(lines))


# --- running ----------------------------------------------------------------------------------


async def run_file(path: Path, budgets: list[int], embedder: str, database_url: str | None) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="agentbench-") as tmp:
        mem = Memory(
            Settings(root=Path(tmp) / "store", embedder=embedder, database_url=database_url),
            # a server's namespaces outlive the run: a fresh one there
            namespace=f"agent-{data.get('name', path.stem)}"
            + (f"-{uuid.uuid4().hex[:6]}" if database_url else ""),
        )
        # The same ids in every build (util.fix_ids): a package cites ids by their random part,
        # whose token count would otherwise move items at the budget's edge from run to run.
        fix_ids(mem.namespace)
        try:
            async with Client(build_server(mem)) as client:
                t0 = time.perf_counter()
                store = await Builder(client, data, Path(tmp) / "files").run()
                # Every vector and deferred graph piece made before the first task: otherwise the
                # packages race the background worker and two runs of one tree differ.
                deferred.drain_all(mem.runtime)
                build_s = time.perf_counter() - t0
                records, ms = [], []
                for task in data["tasks"]:
                    try:
                        posed = await pose(client, task, budgets)
                    except ToolError as exc:  # reported and left out of the figures, never scored as empty
                        store.errors.append(f"task {task['id']} not scored: {exc.code}: {exc.message[:300]}")
                        continue
                    ms.extend(posed["ms"])
                    records.append(score_task(task, posed, store, budgets))
        finally:
            fix_ids(None)
            mem.close()
    return {
        "file": str(path),
        "name": data.get("name", path.stem),
        "build_s": round(build_s, 1),
        "compile_ms_median": round(statistics.median(ms), 1) if ms else None,
        "errors": store.errors,
        "skipped": dict(store.skipped),
        "types": store.types,
        "stale": store.stale,
        "records": records,
    }


def git_commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout.strip()
        return head + (" (+ uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def pick_files(args: argparse.Namespace) -> list[Path]:
    if args.data:
        return [Path(p) for p in args.data]
    files = sorted(DATA_DIR.glob("*.json"))
    return [p for p in files if p.name.startswith("heldout_") == args.heldout]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data", nargs="+", help="data files (default: every non-heldout file in bench/data/agent)"
    )
    ap.add_argument("--heldout", action="store_true", help="run the heldout_*.json files instead")
    ap.add_argument("--budget", type=int, default=1500, help="the main budget (4,096 is always reported too)")
    ap.add_argument("--embedder", default="static")
    ap.add_argument("--database-url", default=None)
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--json", type=Path, help="write every figure and per-task record here")
    args = ap.parse_args(argv)
    budgets = sorted({args.budget, WIDE_BUDGET})
    files = pick_files(args)
    if not files:
        which = "heldout_*.json" if args.heldout else "non-heldout *.json"
        print(f"no data files: no {which} in {DATA_DIR} (or pass --data)", file=sys.stderr)
        return 2
    print(f"agent bench  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  commit {git_commit()}")
    print("command: " + shlex.join([Path(sys.executable).name, *sys.argv]))
    results = []
    all_records: list[dict[str, Any]] = []
    all_types: dict[str, str] = {}
    all_stale: dict[str, str] = {}
    for path in files:
        res = anyio.run(run_file, path, budgets, args.embedder, args.database_url)
        print(
            f"\n{res['name']} ({path}): store built in {res['build_s']} s, compile median {res['compile_ms_median']} ms"
        )
        for k, v in res["skipped"].items():
            print(f"  WARNING skipped {v} x {k}")
        for err in res["errors"]:
            print(f"  ERROR {err}")
        res["summary"] = summarise(res["records"], res["types"], budgets, res["stale"])
        print_summary(res["name"], res["summary"], budgets, res["records"], args.show_misses)
        results.append(res)
        all_records += [{**r, "id": f"{res['name']}:{r['id']}"} for r in res["records"]]
        all_types.update(res["types"])
        all_stale.update(res["stale"])
    if len(results) > 1:
        print_summary(
            "all files", summarise(all_records, all_types, budgets, all_stale), budgets, all_records, False
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "date": datetime.now(UTC).isoformat(),
                    "commit": git_commit(),
                    "argv": sys.argv,
                    "budgets": budgets,
                    "files": results,
                },
                indent=1,
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
