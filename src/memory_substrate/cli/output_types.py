"""What CLI commands print or hand on whose keys are known (progress lines, graph answers, the
hook runner's options)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NotRequired, TypedDict

Progress = Callable[[int, int, str], None]  # (done, total, phase) of a long run


class HookOverrides(TypedDict):
    """The global options a plain ``hook`` command line gives ``hooks.run.run`` (the namespace is
    the project's, never the command line's)."""

    root: Path | None
    namespace: None
    database_url: str | None
    embedder: str | None


class ProgressLine(TypedDict):
    """``--progress json``: one step; an extraction step names its episode and how it went."""

    done: int
    total: int
    phase: str
    episode_id: NotRequired[str]
    outcome: NotRequired[str]


class ProgressOption(TypedDict, total=False):
    """The ``progress`` keyword of a long-running tool mode, only when progress is shown."""

    progress: Progress


class SemanticStatus(TypedDict):
    """``doctor``'s semantic backend when there is no store yet (the embedder alone)."""

    enabled: bool
    provider: str
    reason: NotRequired[str]
    model: NotRequired[str]
    dimensions: NotRequired[int]


class RelationLine(TypedDict):
    id: str
    rel_type: str
    source_id: str
    target_id: str


class GraphPath(TypedDict):
    node_ids: list[str]
    relations: list[RelationLine]


class GraphPaths(TypedDict):
    """``graph --paths``: the shortest paths between two ids."""

    backend: str
    paths: list[GraphPath]


class GraphNeighbourhood(TypedDict):
    """``graph``: the nodes within the depth (id -> hops) and the relations between them."""

    backend: str
    nodes: dict[str, int]
    truncated: bool
    edges: list[RelationLine]
