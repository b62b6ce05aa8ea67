"""One vector contract over the store's own vectors (``builtin``) and LanceDB (plus FalkorDB's
vector index for object vectors): the same data gives the same top-k, in the same order, with the
same cosine scores; semantic search through MCP returns the same items. SQLite and PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from mcp import Client

from memory_substrate import Memory
from memory_substrate.derived.access import mirror_of, vector_index
from memory_substrate.mcp.server import build_server
from tests.derived.conftest import configure
from tests.helpers import call
from tests.maintain.conftest import conversation, know

TOPICS = [
    "The payment service retries failed card charges three times",
    "Login failures spike after every release of the auth gateway",
    "We moved the graph store from Neo4j to an embedded database",
    "Nightly backups restore in under ten minutes",
    "The cache evicts least recently used entries at 80 percent memory",
    "Search latency doubled after the vector index rebuild",
    "Feature flags are cleaned up at the end of each quarter",
    "The deployment pipeline runs integration tests on two cores",
]
QUERIES = [
    "why do logins fail",
    "how are card payments retried",
    "graph database migration",
    "backup restore time",
]


def seed(mem: Memory) -> None:
    for i, text in enumerate(TOPICS):
        know(mem, text, f"Note {i}: {text.lower()}.")
    conversation(mem, *TOPICS[::-1], title="ops chat")


@pytest.fixture(params=["lancedb", "falkordb"])
def mirror(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _search(
    mem: Memory, mirror: str, owner_type: str, q: np.ndarray, model: str, k: int
) -> list[tuple[str, float]]:
    with mem.store.read(mem.namespace) as session:
        if mirror == "lancedb":
            index = vector_index(mem.runtime, session)
            assert index.name == "lancedb"
            return index.vector_search(model, q, owner_type=owner_type, limit=k)
        backend: Any = mirror_of(mem.runtime).indexes.backend("falkordb")  # type: ignore[union-attr]
        hits: list[tuple[str, float]] = backend.vector_search(
            mem.namespace, model, q, owner_type=owner_type, limit=k
        )
        return hits


def test_same_top_k_as_the_builtin_vectors(open_memory: Any, mirror: str) -> None:
    mem = open_memory(
        mirror if mirror == "falkordb" else "file",
        mirror if mirror == "lancedb" else "builtin",
        embedder="static",
    )
    seed(mem)  # half before the build ...
    if mirror == "lancedb":
        configure(mem, "file", "lancedb")
    else:
        configure(mem, "falkordb", "builtin")
    know(
        mem, "Release notes are written by the on-call engineer", "Who writes release notes."
    )  # ... and after
    conversation(mem, "the auth gateway release broke logins again", title="incident")
    emb = mem.runtime.embedder_or_none()
    assert emb is not None
    owner_types = ["object", "segment"] if mirror == "lancedb" else ["object"]
    for query in QUERIES:
        q = emb.embed_query(query)
        for owner_type in owner_types:
            with mem.store.read(mem.namespace) as session:
                want = session.vector_search(emb.name, q, owner_type=owner_type, limit=10)
            got = _search(mem, mirror, owner_type, q, emb.name, 10)
            assert [i for i, _ in got] == [i for i, _ in want], (query, owner_type)
            np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    repaired = mem.maintain("repair", {})["derived_indexes"]["derived_backends"]["backends"][mirror]
    assert repaired["in_line"] is True and repaired["families"]["vectors"]["canonical"]["count"] > 10


@pytest.mark.anyio
async def test_semantic_search_over_mcp_returns_the_same_items(open_memory: Any, namespace: str) -> None:
    builtin = open_memory("file", "builtin", embedder="static")
    lance = open_memory("file", "lancedb", embedder="static", ns=namespace + "-lance")
    configure(lance, "file", "lancedb")
    for mem in (builtin, lance):
        seed(mem)
    results, all_scores = [], []
    for mem in (builtin, lance):
        async with Client(build_server(mem)) as client:
            rows: list[list[str]] = []
            scores: list[list[float]] = []
            for query in QUERIES:
                out = await call(
                    client, "memory_query", "search", {"query": query}, {"max_items": 5, "detail": "full"}
                )
                rows.append([i["title"] for i in out["items"]])
                scores.append([i.get("semantic_score") or 0.0 for i in out["items"]])
                seg = await call(
                    client, "memory_query", "search", {"query": query}, {"result_unit": "segment"}
                )
                rows.append([line for s in seg["sources"] for line in s["lines"]])  # the compact shape
            results.append(rows)
            all_scores.append(scores)
    assert results[0] == results[1]
    for mine, theirs in zip(*all_scores, strict=True):
        np.testing.assert_allclose(mine, theirs, atol=2e-4)  # scores are rounded to 4 places


def test_a_large_table_gets_an_ann_index_and_still_finds_its_neighbours(
    open_memory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_substrate.derived import lancedb_vectors

    monkeypatch.setattr(lancedb_vectors, "ANN_MIN_ROWS", 300)  # the index threshold, lowered to test size
    mem = open_memory("file", "lancedb")
    configure(mem, "file", "lancedb")
    rng = np.random.default_rng(5)
    vecs = rng.standard_normal((400, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with mem.store.write(mem.namespace) as s:
        s.upsert_vectors("m", "segment", [(f"src:x#seg-{i}", v) for i, v in enumerate(vecs)])
    done = mem.maintain("reindex", {}, {"apply": True})
    assert done["derived_backends"]["rebuilt"]["lancedb"]["vectors"] == 400
    backend: Any = mirror_of(mem.runtime).indexes.backend("lancedb")  # type: ignore[union-attr]
    assert all(t["indexed"] for t in backend._state(mem.namespace)["tables"].values())
    with mem.store.read(mem.namespace) as session:
        index = vector_index(mem.runtime, session)
        hits = [index.vector_search("m", vecs[i], owner_type="segment", limit=5) for i in range(0, 400, 40)]
    assert [h[0][0] for h in hits] == [f"src:x#seg-{i}" for i in range(0, 400, 40)]
    assert all(abs(h[0][1] - 1.0) < 1e-3 for h in hits)
