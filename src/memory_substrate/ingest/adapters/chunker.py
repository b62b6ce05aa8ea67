"""``document_chunker.v1``: bounded, line-addressed chunks of Markdown and plain text.

Markdown structure comes from markdown-it-py's token stream, never from matching lines
by hand, so a ``#`` inside a fenced block or an HTML block is not taken for a heading.
Every chunk knows its 1-based inclusive line range in the original text, so a locator
can always send a reader back to the exact lines of the file.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from dataclasses import dataclass, field, replace

from markdown_it import MarkdownIt
from markdown_it.token import Token

from memory_substrate.json_types import JsonObject
from memory_substrate.util import WIDE, WIDE_CHAR_WEIGHT, text_size

CHUNKER_NAME = "document_chunker.v1"

_FRONTMATTER_FENCES = {"---": ("---", "..."), "+++": ("+++",)}
# More candidate heading lines than this and a Markdown text is chunked as plain text: real
# documents have hundreds of headings at most (this repository's longest has under 200), and a
# section is a stored segment (about a millisecond each), as many as ``MAX_CHUNKS`` allows.
MAX_HEADINGS = 2000
# Nor past this many lines: markdown-it's block parser costs 10-20 µs a line (20-36 s for a 2 MB
# file of one-character lines); 50,000 lines is twice a 2 MB file of 80-character lines.
MAX_MARKDOWN_LINES = 50_000
# Windows per text by the line bound, at most (``scaled_for``).
MAX_CHUNKS = 2000
_HEADING_LINE = re.compile(r"^ {0,3}(?:#{1,6}(?=[ \t\r]|$)|=+[ \t\r]*$|-+[ \t\r]*$)", re.MULTILINE)


# ``max_chars`` counts each CJK character as ``WIDE_CHAR_WEIGHT`` characters (util.text_size): a
# chunk of CJK text holds as much as a chunk of English text.

# Where a line too long for one chunk may be cut: after a sentence end (CJK full stops need no
# space after them), else after a space.
_SENTENCE_END = re.compile(r"[。！？!?.;；][」』）)\"']*(?:\s+|(?=[^\x00-\x7f]))")


def _cut_long(text: str, max_size: int) -> list[str]:
    """Cut ``text`` into pieces of at most ``max_size`` (``text_size``), at sentence ends if possible.

    Linear in ``len(text)``: the sizes of all prefixes are summed once, and each piece's longest
    prefix within the bound is found by bisection over them (measuring every candidate prefix
    anew made a 1 MB line of CJK text take tens of seconds)."""
    weights = [1] * len(text)
    if not text.isascii():
        for m in WIDE.finditer(text):
            weights[m.start()] = WIDE_CHAR_WEIGHT
    prefix = [0, *itertools.accumulate(weights)]  # prefix[i] = text_size(text[:i])
    out: list[str] = []
    start = 0
    while prefix[-1] - prefix[start] > max_size:
        # The longest prefix of the rest within the bound (one character at least).
        lo = max(1, bisect.bisect_right(prefix, prefix[start] + max_size) - 1 - start)
        cut = lo
        half = lo // 2
        ends = [
            m.end() - start
            for m in _SENTENCE_END.finditer(text, start + half, start + lo)
            if m.end() - start <= lo
        ]
        if ends:
            cut = ends[-1]
        else:
            space = text.rfind(" ", start + half, start + lo) - start
            if space > 0:
                cut = space + 1
        out.append(text[start : start + cut])
        start += cut
    if start < len(text):
        out.append(text[start:])
    return out


@dataclass(frozen=True)
class ChunkLimits:
    """Bounds for one chunk; a section past either bound is split with ``overlap_lines``.

    ``max_chars`` is measured by ``text_size``: CJK characters count four times.
    """

    max_lines: int = 60
    max_chars: int = 4000
    overlap_lines: int = 3

    def __post_init__(self) -> None:
        if self.max_lines < 2 or self.max_chars < 80:
            raise ValueError("chunk limits too small: max_lines >= 2 and max_chars >= 80")
        if not 0 <= self.overlap_lines < self.max_lines // 2 + 1:
            raise ValueError("overlap_lines must be >= 0 and well below max_lines")


DEFAULT_LIMITS = ChunkLimits()


@dataclass
class Chunk:
    """One chunk: its text, where it lives (1-based inclusive lines) and what it is."""

    text: str
    line_start: int
    line_end: int
    chunk_kind: str  # frontmatter | preamble | section | paragraph | window
    heading_path: list[str] = field(default_factory=list)
    path: str = ""
    part: int | None = None  # 1-based when an oversized block was split
    part_count: int | None = None

    @property
    def heading(self) -> str | None:
        """The innermost heading this chunk sits under, if any."""
        return self.heading_path[-1] if self.heading_path else None

    def locator(self, path: str | None = None) -> JsonObject:
        """A ``{"kind": "line", ...}`` locator for this chunk."""
        loc: JsonObject = {
            "kind": "line",
            "path": self.path if path is None else path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "heading_path": list(self.heading_path),
        }
        if self.part is not None:
            loc["part"] = self.part
        return loc


def split_lines(text: str) -> list[str]:
    """Lines as numbered by editors: universal newlines, no phantom line after a final newline."""
    norm = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = norm.split("\n")
    if lines and lines[-1] == "" and norm.endswith("\n"):
        lines.pop()
    return lines


def _parser() -> MarkdownIt:
    # CommonMark plus GFM tables/strikethrough; "gfm-like" would pull in linkify-it-py.
    # Block structure only: chunks need headings, fences and tables, never emphasis or links,
    # and markdown-it's inline pass is quadratic on some text ("[[" * 200k took ~60 s).
    # Heading titles are parsed inline on their own (``_inline_text``), with a length cap.
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("inline")


MAX_INLINE_TITLE = 1000  # heading text longer than this is kept as written, not parsed inline


def _frontmatter_end(lines: list[str]) -> int:
    """Index of the closing fence line of a leading frontmatter block, or -1."""
    if not lines:
        return -1
    closers = _FRONTMATTER_FENCES.get(lines[0].rstrip())
    if not closers:
        return -1
    for i in range(1, len(lines)):
        if lines[i].rstrip() in closers:
            return i
    return -1


def _inline_text(tok: Token) -> str:
    parts: list[str] = []
    children = tok.children
    if children is None and tok.content and len(tok.content) <= MAX_INLINE_TITLE:
        children = (_inline_parser().parseInline(tok.content) or [tok])[0].children
    for child in children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    text = "".join(parts).strip()
    return text or tok.content.strip()


@functools.cache
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["strikethrough"])


def _is_blank(line: str) -> bool:
    return not line.strip()


def _trim(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """Shrink [start, end] (0-based inclusive) past blank edge lines; None if all blank."""
    while start <= end and _is_blank(lines[start]):
        start += 1
    while end >= start and _is_blank(lines[end]):
        end -= 1
    return (start, end) if start <= end else None


def _windows(
    lines: list[str], start: int, end: int, breaks: list[int], lim: ChunkLimits
) -> list[tuple[int, int]]:
    """Cut [start, end] into bounded windows, preferring block boundaries, with overlap."""
    out: list[tuple[int, int]] = []
    cur = start
    while True:
        stop, chars = cur, 0
        while stop <= end:
            add = text_size(lines[stop]) + 1
            if stop > cur and (stop - cur + 1 > lim.max_lines or chars + add > lim.max_chars):
                break
            chars += add
            stop += 1
        last = stop - 1
        if last >= end:
            out.append((cur, end))
            return out
        # A cut at a block start keeps tables and code fences whole when they fit; only
        # look in the back half so windows do not shrink to slivers.
        floor = cur + max(1, (last - cur + 1) // 2)
        # The last block start in [floor, last + 1], found by bisection: scanning every break per
        # window made a long section of many blocks cost windows x blocks.
        at = bisect.bisect_right(breaks, last + 1) - 1
        cut = breaks[at] - 1 if at >= 0 and breaks[at] >= floor else last
        out.append((cur, cut))
        cur = max(cut + 1 - lim.overlap_lines, cur + 1)


def _emit(
    lines: list[str],
    start: int,
    end: int,
    kind: str,
    heading_path: list[str],
    path: str,
    breaks: list[int],
    lim: ChunkLimits,
) -> list[Chunk]:
    """Chunks for one block of lines (0-based inclusive), split if it is oversized."""
    pieces: list[tuple[int, int, str]] = []
    for s, e in _windows(lines, start, end, breaks, lim):
        text = "\n".join(lines[s : e + 1])
        if text_size(text) <= lim.max_chars:
            pieces.append((s, e, text))
            continue
        # One line longer than the cap (minified code, a data URI, a paragraph of Chinese written
        # as one line): same locator, cut at sentence ends where there are some.
        pieces.extend((s, e, part) for part in _cut_long(text, lim.max_chars))
    many = len(pieces) > 1
    return [
        Chunk(
            text=text,
            line_start=s + 1,
            line_end=e + 1,
            chunk_kind=kind,
            heading_path=list(heading_path),
            path=path,
            part=i + 1 if many else None,
            part_count=len(pieces) if many else None,
        )
        for i, (s, e, text) in enumerate(pieces)
    ]


def scaled_for(lim: ChunkLimits, line_count: int) -> ChunkLimits:
    """``lim`` with ``max_lines`` raised so that ``line_count`` lines make at most ``MAX_CHUNKS``
    windows by the line bound (the character bound still holds). Each chunk is a stored,
    indexed segment (about a millisecond each); a 2 MB file of one-character lines would
    otherwise be 17,000 of them. Texts under ``MAX_CHUNKS * max_lines`` lines are unchanged."""
    need = -(-line_count // MAX_CHUNKS)
    return lim if need <= lim.max_lines else replace(lim, max_lines=need)


def heading_lines(text: str) -> int:
    """How many lines could be headings (ATX ``#`` lines and setext underlines): an upper bound
    found in one regex pass, before any Markdown parsing."""
    return sum(1 for _ in _HEADING_LINE.finditer(text))


def too_many_headings(text: str) -> bool:
    """Whether ``text`` is past what is chunked as Markdown: more than ``MAX_MARKDOWN_LINES`` lines
    or more candidate heading lines than ``MAX_HEADINGS``."""
    return text.count("\n") >= MAX_MARKDOWN_LINES or heading_lines(text) > MAX_HEADINGS


def chunk_markdown(text: str, path: str = "", *, limits: ChunkLimits | None = None) -> list[Chunk]:
    """Chunk Markdown by headings outside code, keeping frontmatter as its own chunk.

    Tables, lists and fenced code stay inside the section that holds them; a section past
    ``limits`` is split into parts that overlap by a few lines. A text with more than
    ``MAX_HEADINGS`` candidate heading lines or ``MAX_MARKDOWN_LINES`` lines is chunked as plain
    text (``chunk_text``): a section per heading would make a segment per line of a file of ``#``
    lines, and the Markdown parser alone costs 10-20 microseconds a line.
    """
    lim = limits or DEFAULT_LIMITS
    if too_many_headings(text):
        return chunk_text(text, path, limits=lim)
    lines = split_lines(text)
    if not lines:
        return []
    lim = scaled_for(lim, len(lines))
    chunks: list[Chunk] = []
    fm_end = _frontmatter_end(lines)
    if fm_end >= 0:
        chunks += _emit(lines, 0, fm_end, "frontmatter", [], path, [], lim)
    # Blank the frontmatter out rather than cut it, so token line maps stay file line numbers
    # (and its "---" lines cannot turn into a setext heading or a rule).
    body = [""] * (fm_end + 1) + lines[fm_end + 1 :]
    tokens = _parser().parse("\n".join(body) + "\n")

    headings: list[tuple[int, int, int, str]] = []  # (first line, last line, level, text)
    breaks: set[int] = set()
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.map is None:
            continue
        breaks.add(tok.map[0])
        if tok.type == "heading_open":
            title = _inline_text(tokens[i + 1]) if i + 1 < len(tokens) else ""
            headings.append((tok.map[0], tok.map[1] - 1, int(tok.tag[1:]), title))
    sorted_breaks = sorted(breaks)

    body_start = fm_end + 1
    first_heading = headings[0][0] if headings else len(lines)
    span = _trim(lines, body_start, first_heading - 1)
    if span:
        chunks += _emit(lines, span[0], span[1], "preamble", [], path, sorted_breaks, lim)

    stack: list[tuple[int, str]] = []
    for idx, (h_start, _h_end, level, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        next_start = headings[idx + 1][0] if idx + 1 < len(headings) else len(lines)
        span = _trim(lines, h_start, next_start - 1)
        if span:
            chunks += _emit(
                lines, span[0], span[1], "section", [t for _, t in stack], path, sorted_breaks, lim
            )
    return chunks


def chunk_text(text: str, path: str = "", *, limits: ChunkLimits | None = None) -> list[Chunk]:
    """Chunk plain text into groups of whole paragraphs; an oversized paragraph becomes windows."""
    lim = limits or DEFAULT_LIMITS
    lines = split_lines(text)
    paragraphs: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if _is_blank(lines[i]):
            i += 1
            continue
        j = i
        while j + 1 < len(lines) and not _is_blank(lines[j + 1]):
            j += 1
        paragraphs.append((i, j))
        i = j + 1

    chunks: list[Chunk] = []
    group: tuple[int, int] | None = None
    lim = scaled_for(lim, len(lines))
    # size[i] = text_size of lines[:i], newlines included: a group's size in O(1), so growing a
    # group paragraph by paragraph stays linear in the text.
    size = [0, *itertools.accumulate(text_size(x) + 1 for x in lines)]

    def fits(s: int, e: int) -> bool:
        return e - s + 1 <= lim.max_lines and size[e + 1] - size[s] <= lim.max_chars

    def flush() -> None:
        if group is not None:
            chunks.extend(_emit(lines, group[0], group[1], "paragraph", [], path, [], lim))

    for s, e in paragraphs:
        if not fits(s, e):
            flush()
            group = None
            chunks.extend(_emit(lines, s, e, "window", [], path, [], lim))
        elif group is not None and fits(group[0], e):
            group = (group[0], e)
        else:
            flush()
            group = (s, e)
    flush()
    return chunks


def markdown_title(chunks: list[Chunk]) -> str | None:
    """The first top-level heading text, a reasonable document title."""
    for c in chunks:
        if c.chunk_kind == "section" and c.heading_path:
            return c.heading_path[0]
    return None
