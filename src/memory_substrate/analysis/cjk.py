"""Chinese and Japanese word segmentation, when the ``cjk`` extra is installed.

``pip install 'memory-substrate[cjk]'`` brings ``jieba`` (Chinese, MIT, its dictionary inside the
package) and ``fugashi`` with ``unidic-lite`` (Japanese: MeCab with a small UniDic, BSD; about
250 MB installed). Without them, or for Korean, ``segment`` answers None and the callers index CJK
runs as overlapping character bigrams; a store switched either way needs ``reindex``
so that its rows and its queries are cut the same way.

Chinese text is cut into jieba's words; Japanese into UniDic words given by their lemma (so
"走りました" and "走る" meet), particles, auxiliaries and symbols dropped. Latin words inside CJK
text are kept, lower-cased.
"""

from __future__ import annotations

import threading
from typing import Any

# Chinese function words (particles, pronouns, copula, common auxiliaries): no retrieval value.
_ZH_FUNCTION_WORDS = (
    "的 了 着 过 地 得 之 和 与 及 或 而 但 就 都 也 还 又 在 是 有 没 没有 不 会 能 要 把 被 给 对 从 向 "
    "到 为 为了 以 于 我 你 他 她 它 我们 你们 他们 她们 这 那 这个 那个 哪 哪里 什么 怎么 为什么 吗 呢 "
    "吧 啊 呀 个 些 上 下 里"
)
ZH_STOPWORDS = frozenset(_ZH_FUNCTION_WORDS.split(" "))
# UniDic parts of speech that carry no content: particles, auxiliary verbs, symbols, blanks.
JA_DROP_POS = frozenset({"助詞", "助動詞", "補助記号", "記号", "空白"})

_lock = threading.Lock()
_state: dict[str, object] = {}  # name -> jieba's module, a fugashi tagger, or None (not installed)


def _load(name: str) -> Any:
    if name not in _state:
        with _lock:
            if name not in _state:
                try:
                    if name == "zh":
                        import jieba

                        jieba.setLogLevel(60)
                        jieba.initialize()
                        _state[name] = jieba
                    else:
                        import fugashi

                        _state[name] = fugashi.Tagger()
                except Exception:  # not installed (or its dictionary is missing): bigrams then
                    _state[name] = None
    return _state[name]


def available(lang: str) -> bool:
    return lang in ("zh", "ja") and _load(lang) is not None


def segment(text: str, lang: str) -> list[str] | None:
    """Content words of ``text`` in ``lang`` ("zh" or "ja"), or None without a segmenter."""
    engine = _load(lang) if lang in ("zh", "ja") else None
    if engine is None:
        return None
    out: list[str] = []
    if lang == "zh":
        for word in engine.cut(text):
            word = word.strip().lower()
            if word and word not in ZH_STOPWORDS and any(ch.isalnum() for ch in word):
                out.append(word)
        return out
    for node in engine(text):
        feature = node.feature
        if getattr(feature, "pos1", None) in JA_DROP_POS:
            continue
        lemma = getattr(feature, "lemma", None) or node.surface
        word = lemma.split("-", 1)[0] if not lemma.startswith("-") else node.surface  # "コピー-copy"
        word = word.lower()
        if word and any(ch.isalnum() for ch in word):
            out.append(word)
    return out
