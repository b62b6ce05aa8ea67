"""Apply many extractions of one import part in one governed patch.

Why: an import file holds tens of thousands of records, and ``memory_remember`` mode
``extraction`` holds at most 10 entities and 100 facts. One call per group meant one write
transaction, one patch record, one embedding call and one reload of the entity vector cache per
ten entities; at 50 MB that overhead was most of the import. Here every group of a part goes
through the very code ``memory_remember`` mode ``extraction`` runs (the input model, then
``ExtractionApplier`` with the same governance), inside a single ``Patch``: one transaction,
one patch record with one audit event per write, one embedding batch at commit, one trace per
group and the part's extraction job finished once. A failure anywhere rolls the whole part back.

One difference from separate calls, by design: an entity created by an earlier group of the
same part is found by the exact and alias passes of resolution (its keys are written at once)
but not by the semantic pass, because its name vector is embedded at commit. In an import file
two different names are two different entities of the tool it came from, so the importer
prefers not to merge them on likeness alone; entities already in the store are resolved by all
three passes.
"""

from __future__ import annotations

from memory_substrate import traces
from memory_substrate.app import Memory
from memory_substrate.graph import jobs
from memory_substrate.graph.apply import ExtractionApplier, Governance
from memory_substrate.graph.extraction_trace import ExtractionTrace
from memory_substrate.graph.schemas import ExtractionInput
from memory_substrate.importers.extraction_input import ExtractionGroup
from memory_substrate.importers.result_types import AppliedGroup
from memory_substrate.json_types import JsonObject
from memory_substrate.remember.service import summarize
from memory_substrate.validation import parse

EXTRACTOR = "agent"  # the importer supplies its extraction itself, as a calling agent does


def apply_extractions(
    memory: Memory, episode_id: str, groups: list[ExtractionGroup], *, summary: JsonObject
) -> list[AppliedGroup]:
    """Apply ``groups`` (each a ``memory_remember`` ``extraction`` input for ``episode_id``) in
    one patch; returns each group's summary, as ``memory_remember`` would, plus the patch id.

    Raises the first group's ``MemorySubstrateError`` (invalid input, missing evidence, unknown
    entity); then nothing of the part was written.
    """
    parsed = [parse(ExtractionInput, g, f"groups[{i}]") for i, g in enumerate(groups)]
    rt = memory.runtime
    embedder = rt.embedder_or_none()
    results: list[AppliedGroup] = []
    with rt.write("memory_remember", "extraction", parsed[0].reason if parsed else None) as (session, patch):
        applier = ExtractionApplier(patch, embedder, episode_limit=None)
        last_trace = None
        for data in parsed:
            gov = Governance(
                reason=data.reason,
                memory_source=data.memory_source,
                scope_refs=list(data.scope_refs),
                extractor=EXTRACTOR,
            )
            trace = applier.apply(data.episode_id, data, gov)
            trace["patch_id"] = patch.id
            last_trace = traces.record(session, "extraction", data.episode_id, trace)
            results.append(_applied(data.episode_id, last_trace.id, trace, patch.id))
        if last_trace is not None:
            jobs.finish(session, episode_id, trace_id=last_trace.id, extractor=EXTRACTOR)
        record = patch.commit({"mode": "extraction", "groups": len(parsed), **summary})
    for r in results:
        r["patch_id"] = record.id
    return results


def _applied(episode_id: str, trace_id: str, trace: ExtractionTrace, patch_id: str) -> AppliedGroup:
    """The group's answer as ``memory_remember`` gives it; ``patch_id`` is final once the patch commits."""
    outcome = summarize(trace)
    return {
        "status": "applied",
        "episode_id": episode_id,
        "trace_id": trace_id,
        "entities": outcome["entities"],
        "facts": outcome["facts"],
        "fact_ids": outcome["fact_ids"],
        "superseded_fact_ids": outcome["superseded_fact_ids"],
        "custom_predicates": outcome["custom_predicates"],
        "procedures": outcome["procedures"],
        "patch_id": patch_id,
    }
