"""Import a folder of Markdown notes (Obsidian vaults, basic-memory folders).

Each note is captured by the ``markdown`` ingest mode (``document_chunker.v1`` segments; the
frontmatter is kept as its own segment), so an unchanged note is a no-op and a changed one
becomes a new source that supersedes the old capture. For each new capture the importer writes,
in one governed patch through the applier of ``memory_remember`` mode ``extraction``
(``importers/bulk.py``):

* the note as an entity of type ``document`` (named by its file stem, as wiki links name it;
  frontmatter ``title`` and ``aliases`` become aliases);
* ``[[Target]]``, ``[[Target|label]]`` and ``[[Target#heading]]`` as facts
  ``note --links_to--> Target`` (Target a ``document`` entity, created if no note defines it yet);
* ``#tag`` in the text and ``tags:`` in the frontmatter as facts ``note --tagged--> #tag``, the
  tag an entity of type ``pattern`` named ``#tag`` (the taxonomy has no "topic" type; a tag
  names a recurring theme, which is what ``pattern`` holds).

Every fact cites the segment where the link or tag appears. Links inside code are ignored.
"""

from __future__ import annotations

import re
from pathlib import Path

from memory_substrate.app import Memory
from memory_substrate.errors import MemorySubstrateError, ValidationError
from memory_substrate.importers.bulk import apply_extractions
from memory_substrate.importers.common import DEFAULT_SCOPE, ImportReport, Progress, part_done
from memory_substrate.importers.extraction_input import ExtractedEntity, ExtractionGroup
from memory_substrate.importers.result_types import ImportResult
from memory_substrate.ingest.pathpolicy import PathPolicy, is_within, leaves_root
from memory_substrate.models import Segment
from memory_substrate.taxonomy import MAX_ENTITIES_PER_EPISODE, generic_reason, normalize_name

FORMAT = "markdown"
SUFFIXES = (".md", ".markdown")
SKIP_DIRS = {".obsidian", ".git", ".trash", "node_modules", ".venv"}
MAX_FACTS = 100
WIKI_LINK = re.compile(r"!?\[\[([^\[\]|#^\n]+)(?:[#^][^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
TAG = re.compile(r"(?<![\w/#&;:=.\-\[(])#([A-Za-z_][\w/\-]*)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def _strip_code(text: str) -> str:
    return INLINE_CODE.sub(" ", FENCE.sub(" ", text))


def _frontmatter(text: str) -> dict[str, list[str]]:
    """``title``, ``aliases`` and ``tags`` of a YAML frontmatter block (inline or dash lists)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, list[str]] = {}
    key = None
    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            break
        m = re.match(r"^([A-Za-z_][\w\-]*)\s*:\s*(.*)$", line)
        if m:
            key, value = m.group(1).lower(), m.group(2).strip()
            if value.startswith("[") and value.endswith("]"):
                out[key] = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
            elif value:
                out[key] = (
                    [value.strip("'\"")]
                    if key != "tags"
                    else [v.strip("'\"#") for v in re.split(r"[,\s]+", value) if v]
                )
            else:
                out[key] = []
        elif key and re.match(r"^\s+-\s+", line):
            out.setdefault(key, []).append(re.sub(r"^\s+-\s+", "", line).strip().strip("'\""))
    return out


def _target_name(raw: str) -> str:
    return raw.strip().rsplit("/", 1)[-1].removesuffix(".md").strip()


class MarkdownImporter:
    def __init__(
        self, memory: Memory, root: Path, *, scope: str = DEFAULT_SCOPE, progress: Progress | None = None
    ) -> None:
        self.memory = memory
        # The server's path policy decides whether this folder may be read (ingest/pathpolicy.py).
        self.policy = PathPolicy.from_settings(memory.settings)
        self.root = self.policy.resolve(root, "directory")
        self.scope = scope
        self.progress = progress
        self.report = ImportReport(FORMAT, str(self.root))
        self.reason = f"imported from the Markdown notes folder {self.root.name}"

    def notes(self) -> list[Path]:
        found = []
        for p in sorted(self.root.rglob("*")):
            rel = p.relative_to(self.root).parts
            if any(part in SKIP_DIRS or part.startswith(".") for part in rel[:-1]):
                continue
            if p.suffix.lower() not in SUFFIXES:
                continue
            if leaves_root(p, self.root) or not is_within(p.resolve(), self.root):
                # A symlinked note pointing outside the vault: never read (a vault is not a way out).
                self.report.skip("symlink_outside_root", path=str(p.relative_to(self.root)))
                continue
            if not self.policy.contains(p.resolve()):
                continue  # under a directory the policy denies (the store's own), though below the vault
            if p.is_file():
                found.append(p)
        return found

    def run(self) -> ImportResult:
        if not self.root.is_dir():
            raise ValidationError(f"{self.root} is not a directory", details={"path": str(self.root)})
        notes = self.notes()
        for i, path in enumerate(notes):
            if self.progress is not None:
                self.progress(i, len(notes), path.name)
            try:
                self._note(path)
            except MemorySubstrateError as exc:
                self.report.skip(exc.code, path=str(path), error=exc.message[:300])
        if self.progress is not None:
            self.progress(len(notes), len(notes), "done")
        return self.report.to_dict()

    def _note(self, path: Path) -> None:
        source_id = self._capture(path)
        if source_id is None:
            return
        with self.memory.runtime.read_with_expired() as s:
            segments = s.get_segments(source_id)
        name = path.stem
        front = _frontmatter(segments[0].text) if segments else {}
        aliases = [a for a in front.get("title", []) + front.get("aliases", []) if a and a != name][:20]
        if generic_reason(name):
            self.report.skip("note_name_too_generic", path=str(path), name=name)
            return
        links, tags = _links_and_tags(segments, front, name)
        kept = self._kept(path, links, tags)
        groups = self._groups(path, source_id, name, aliases, kept)
        results = apply_extractions(self.memory, source_id, groups, summary={"importer": FORMAT})
        self.report.patches += 1
        new_ids: set[object] = set()
        for result in results:
            new_ids.update(e["entity_id"] for e in result["entities"]["new"])
            self.report.add("relations_new", result["facts"].get("created", 0))
            self.report.add("relations_reinforced", result["facts"].get("reinforced", 0))
            for refused in result["entities"]["refused"]:
                self.report.skip(f"entity_{refused['reason']}", path=str(path), name=refused["name"])
        self.report.add("entities_new", len(new_ids))
        self.report.add("links_found", len(links))
        self.report.add("tags_found", len(tags))

    def _capture(self, path: Path) -> str | None:
        """Ingest the note; its source id, or ``None`` when an earlier import already linked it."""
        res = self.memory.ingest("markdown", {"path": str(path)})
        if res["status"] == "noop":
            if part_done(self.memory, res["source_id"]):
                self.report.add("notes_unchanged")
                return None
            self.report.add("notes_resumed")  # captured by an import that stopped before its links
        else:
            self.report.patches += 1
            self.report.add("notes_new" if "superseded_source_id" not in res else "notes_changed")
        source_id: str = res["source_id"]
        return source_id

    def _kept(
        self, path: Path, links: dict[str, str], tags: dict[str, str]
    ) -> list[tuple[str, str, str, str]]:
        """(target, entity type, predicate, segment id) of each link and tag whose target is
        specific enough to be an entity; the others are reported as skipped."""
        related = [(t, "document", "links_to", s) for t, s in links.items()] + [
            (t, "pattern", "tagged", s) for t, s in tags.items()
        ]
        kept = []
        for target, etype, predicate, seg_id in related:
            why = generic_reason(target)
            if why:
                self.report.skip(
                    f"{'link' if predicate == 'links_to' else 'tag'}_{why}", path=str(path), target=target
                )
                continue
            kept.append((target, etype, predicate, seg_id))
        return kept

    def _groups(
        self,
        path: Path,
        source_id: str,
        name: str,
        aliases: list[str],
        kept: list[tuple[str, str, str, str]],
    ) -> list[ExtractionGroup]:
        """The note's extraction inputs, at most an episode's worth of entities each."""
        # Every group (an extraction holds 10 entities) lists the note itself, so each resolves
        # it exactly; all groups of a note are applied in one governed patch.
        note: ExtractedEntity = {
            "name": name,
            "type": "document",
            "aliases": aliases,
            "summary": f"Markdown note {path.relative_to(self.root)}",
        }
        batch_size = MAX_ENTITIES_PER_EPISODE - 1
        groups: list[ExtractionGroup] = []
        for start in range(0, max(len(kept), 1), batch_size):
            chunk = kept[start : start + batch_size]
            groups.append(
                {
                    "episode_id": source_id,
                    "reason": self.reason,
                    "memory_source": "imported",
                    "scope_refs": [self.scope],
                    "entities": [note, *(ExtractedEntity(name=t, type=e) for t, e, _, _ in chunk)],
                    "facts": [
                        {"subject": name, "predicate": p, "object": t, "segment_ids": [s]}
                        for t, _, p, s in chunk
                    ],
                }
            )
        return groups


def _links_and_tags(
    segments: list[Segment], front: dict[str, list[str]], name: str
) -> tuple[dict[str, str], dict[str, str]]:
    """Wiki-link targets and tags of a note, each with the first segment that holds it (code
    blocks and inline code left out; a link to the note itself is no link)."""
    links: dict[str, str] = {}  # target name -> segment id
    tags: dict[str, str] = {}
    for seg in segments:
        if seg.metadata.get("chunk_kind") == "frontmatter":
            for t in front.get("tags", []):
                if t:
                    tags.setdefault("#" + t.lstrip("#"), seg.id)
            continue
        text = _strip_code(seg.text)
        for m in WIKI_LINK.finditer(text):
            target = _target_name(m.group(1))
            if target and normalize_name(target) != normalize_name(name):
                links.setdefault(target, seg.id)
        for m in TAG.finditer(text):
            tags.setdefault("#" + m.group(1), seg.id)
    return links, tags


def import_markdown(
    memory: Memory, root: str | Path, *, scope: str = DEFAULT_SCOPE, progress: Progress | None = None
) -> ImportResult:
    """Import every Markdown note under ``root``. Raises ``ValidationError`` if it is not a folder."""
    return MarkdownImporter(memory, Path(root), scope=scope, progress=progress).run()
