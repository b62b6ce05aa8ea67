"""The Unicode ranges of the scripts the package tells apart, each defined once (regex class bodies).

A "CJK character" (``CJK``) is kana, a Han ideograph of the Basic Multilingual Plane or a hangul
syllable; users that need more say so by adding a named range (the term tokenizer adds the
astral Han extensions, the token counter the half-width katakana it charges like kana).
"""

from __future__ import annotations

KANA = "\u3040-\u30ff"  # hiragana, katakana
HALFWIDTH_KANA = "\uff66-\uff9f"
HAN_EXT_A = "\u3400-\u4dbf"
HAN = "\u4e00-\u9fff"
HAN_COMPAT = "\uf900-\ufaff"
HAN_ASTRAL = "\U00020000-\U0002fa1f"  # extensions B-F and the compatibility supplement
HANGUL = "\uac00-\ud7af"  # syllables
CYRILLIC_LETTERS = "\u0400-\u0481\u048a-\u052f"  # without the combining marks and signs between

CJK = KANA + HAN_EXT_A + HAN + HAN_COMPAT + HANGUL

# East Asian wide text, for sizes (``util.text_size``: what a chunk of ``document_chunker.v1``
# holds): hangul jamo and syllables, every CJK block from the radicals to the ideographs in one
# span, and the full- and half-width forms.
HANGUL_JAMO = "\u1100-\u11ff"
HANGUL_JAMO_EXT_A = "\ua960-\ua97f"
CJK_BLOCKS = "\u2e80-\u9fff"
WIDTH_FORMS = "\uff00-\uffef"
WIDE = HANGUL_JAMO + CJK_BLOCKS + HANGUL_JAMO_EXT_A + HANGUL + HAN_COMPAT + WIDTH_FORMS
