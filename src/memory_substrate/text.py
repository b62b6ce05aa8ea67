"""Deterministic text normalisation shared by the write path (indexing) and the read path (queries).

Both sides produce the same terms, so a store only needs a whitespace-token full-text index:
latin words are lower-cased with a light stem added, and CJK runs become overlapping bigrams
(plus single characters for one-character runs), which makes Chinese, Japanese and Korean
searchable without a language-specific tokenizer on any backend.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from memory_substrate.analysis import analyse_words
from memory_substrate.retrieval.text import STOPWORDS
from memory_substrate.retrieval.text import stem as _stem

_CJK = (
    r"\u3040-\u30ff"  # hiragana, katakana
    r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    r"\uac00-\ud7af"  # hangul
)
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_CJK_RE = re.compile(rf"^[{_CJK}]+$")


# Domain vocabulary: a query term pulls in its group (and a type hint) so that an agent asking
# for "待办项" finds work items titled "task" and the reverse.
DOMAIN_GROUPS: list[tuple[frozenset[str], str | None]] = [
    (frozenset({"待办项", "待办", "todo", "todos", "task", "tasks", "work_item", "workitem", "任务"}), "work_item"),
    (frozenset({"decision", "decisions", "decided", "决策", "决定", "adr"}), None),
    (frozenset({"procedure", "procedures", "howto", "runbook", "步骤", "流程"}), None),
    (frozenset({"bug", "bugs", "defect", "缺陷", "故障"}), None),
    (frozenset({"fact", "facts", "knowledge", "知识", "事实"}), "knowledge"),
    (frozenset({"source", "sources", "evidence", "证据", "来源"}), "source"),
    (frozenset({"activity", "activities", "session", "活动"}), "activity"),
]


def tokens(text: str) -> list[str]:
    """Surface tokens in order: lower-cased words, and CJK runs as bigrams."""
    text = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        tok = match.group(0)
        if _CJK_RE.match(tok):
            if len(tok) == 1:
                out.append(tok)
            else:
                out.extend(tok[i : i + 2] for i in range(len(tok) - 1))
        else:
            out.append(tok)
    return out


def _analysed(text: str, *, drop_stopwords: bool) -> list[str] | None:
    """Surface words and their terms for text in a language ``analysis`` handles (else None)."""
    words = analyse_words(text, drop_stopwords=drop_stopwords)
    if words is None:
        return None
    out: list[str] = []
    for word, terms in words:
        out.append(unicodedata.normalize("NFKC", word))  # as ``tokens`` gives it, for unanalysed queries
        out.extend(t for t in terms if t != out[-1])
    return out


def index_text(*parts: str | None) -> str:
    """The string a full-text index stores for some text: tokens plus their stems."""
    words: list[str] = []
    for part in parts:
        if not part:
            continue
        analysed = _analysed(part, drop_stopwords=False)
        if analysed is not None:
            words.extend(analysed)
            continue
        for tok in tokens(part):
            words.append(tok)
            stem = _stem(tok)
            if stem != tok:
                words.append(stem)
    return " ".join(words)


def query_terms(text: str) -> list[str]:
    """Content terms of a query (stopwords dropped unless nothing else is left), stems included."""
    analysed = _analysed(text, drop_stopwords=True)
    if analysed:
        return list(dict.fromkeys(analysed))
    toks = tokens(text)
    content = [t for t in toks if t not in STOPWORDS] or toks
    out: list[str] = []
    for tok in content:
        out.append(tok)
        stem = _stem(tok)
        if stem != tok:
            out.append(stem)
    return list(dict.fromkeys(out))


def expand_terms(text: str, terms: Iterable[str]) -> tuple[list[str], list[str]]:
    """Domain expansions of a query: (extra terms, inferred object types)."""
    lowered = unicodedata.normalize("NFKC", text).lower()
    have = set(terms)
    extra: list[str] = []
    types: list[str] = []
    for group, object_type in DOMAIN_GROUPS:
        if any(g in have or (not g.isascii() and g in lowered) for g in group):
            for g in sorted(group):
                for t in tokens(g):
                    if t not in have and t not in extra:
                        extra.append(t)
            if object_type and object_type not in types:
                types.append(object_type)
    return extra, types


def normalize_phrase(text: str) -> str:
    return " ".join(tokens(text))
