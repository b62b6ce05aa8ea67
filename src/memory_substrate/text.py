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

_CJK = (
    r"\u3040-\u30ff"  # hiragana, katakana
    r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    r"\uac00-\ud7af"  # hangul
)
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_CJK_RE = re.compile(rf"^[{_CJK}]+$")

STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "do", "does", "did", "have", "has", "had", "i", "me", "my", "we", "our", "you", "your", "he", "him", "his", "she", "her", "it", "its", "they", "them", "their", "this", "that", "these", "those", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "there", "here", "not", "no", "so", "than", "too", "very", "can", "could", "would", "should", "will", "shall", "may", "might", "must", "about", "into", "over", "under", "again", "then", "once", "just", "also", "any", "all", "some", "such", "only", "own", "same", "other", "more", "most", "both", "each", "few", "up", "down", "out", "off", "until", "while", "during", "before", "after", "above", "below", "between", "through", "s", "t", "don", "did", "doesn", "isn", "aren", "wasn", "weren", "am", "let", "lets"]
)

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


def _stem(word: str) -> str:
    """A light English stem: enough to match plurals and common verb forms."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                return word
            return word[: len(word) - len(suffix)] + repl
    return word


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


def index_text(*parts: str | None) -> str:
    """The string a full-text index stores for some text: tokens plus their stems."""
    words: list[str] = []
    for part in parts:
        if not part:
            continue
        for tok in tokens(part):
            words.append(tok)
            stem = _stem(tok)
            if stem != tok:
                words.append(stem)
    return " ".join(words)


def query_terms(text: str) -> list[str]:
    """Content terms of a query (stopwords dropped unless nothing else is left), stems included."""
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
