"""Main-text extraction from HTML: trafilatura when installed, a plain HTML walker otherwise."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from html.parser import HTMLParser

_SKIP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "head", "nav", "footer", "aside", "form"}
)
_BLOCK_TAGS = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "ul", "ol", "li", "table", "tr", "br",
        "pre", "blockquote", "dl", "dt", "dd", "figure", "figcaption", "hr",
    }
)  # fmt: skip
_VOID_TAGS = frozenset(
    {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "wbr"}
)
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


@dataclass(frozen=True)
class Extracted:
    """Main text as light Markdown (headings as ``#`` lines), the page title and who extracted it."""

    text: str
    title: str | None
    extractor: str  # trafilatura | html_fallback


class _Walker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip_depth = 0
        self.in_title = False
        self.title_parts: list[str] = []
        self.in_pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIP_TAGS and tag not in _VOID_TAGS:
            self.skip_depth += 1
        elif tag in _HEADINGS and not self.skip_depth:
            self.out.append("\n\n" + "#" * _HEADINGS[tag] + " ")
        elif tag in _BLOCK_TAGS and not self.skip_depth:
            self.out.append("\n- " if tag == "li" else "\n")
            self.in_pre = self.in_pre or tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIP_TAGS and tag not in _VOID_TAGS:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif (tag in _HEADINGS or tag in _BLOCK_TAGS) and not self.skip_depth:
            self.out.append("\n\n" if tag in _HEADINGS or tag == "p" else "\n")
            if tag == "pre":
                self.in_pre = False

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
        if self.skip_depth:
            return
        self.out.append(data if self.in_pre else re.sub(r"\s+", " ", data))


def _fallback(html: str) -> Extracted:
    walker = _Walker()
    walker.feed(html)
    walker.close()
    lines = [ln.rstrip() for ln in "".join(walker.out).split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(ln if ln.strip() else "" for ln in lines)).strip()
    title = " ".join("".join(walker.title_parts).split()) or None
    return Extracted(text=text, title=title, extractor="html_fallback")


def decode_html(body: bytes, declared: str | None) -> str:
    """Decode a response body: declared charset, then a ``<meta charset>``, then UTF-8, then cp1252."""
    candidates = [declared]
    m = _META_CHARSET.search(body[:4096])
    if m:
        candidates.append(m.group(1).decode("ascii", "replace"))
    for enc in [*candidates, "utf-8"]:
        if not enc:
            continue
        try:
            return body.decode(enc)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("cp1252", errors="replace")


def extract_main_text(html: str, url: str | None = None) -> Extracted:
    """The main content of a page; boilerplate (menus, footers, scripts) is dropped."""
    try:
        import trafilatura
    except ImportError:
        return _fallback(html)
    # trafilatura and its date parser may emit library warnings; they are not capture failures.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            text = trafilatura.extract(
                html,
                url=url,
                output_format="markdown",
                include_tables=True,
                include_comments=False,
                include_links=False,
                favor_recall=True,
            )
            meta = trafilatura.extract_metadata(html)
        except Exception:  # a crash in the extractor should cost quality, not the capture
            text, meta = None, None
    fallback = _fallback(html)
    title = (meta.title if meta is not None and meta.title else None) or fallback.title
    if not text or not text.strip():
        return Extracted(text=fallback.text, title=title, extractor="html_fallback")
    return Extracted(text=text.strip(), title=title, extractor="trafilatura")
