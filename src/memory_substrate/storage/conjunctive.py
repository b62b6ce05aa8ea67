"""Which rows a full-text query ranks when every one of its words is common (both backends).

An OR query ranks every row that holds any of its terms. On a large namespace whose query words
are all common (each in thousands of rows), that is tens of thousands of rows scored for the
few dozen a search keeps, and the cost grows with the store. Yet the rows that best match an OR
query are, nearly always, the rows that hold all its terms, then those that miss one; BM25 and
``ts_rank`` score a row by the terms it holds, so a row holding fewer terms outranks them only
through repeated or much rarer words.

So when an OR query would rank too many rows (SQLite: more than ``RANK_BUDGET``; PostgreSQL:
when even its rarest term is estimated over its own budget, ``fts_plan.py``), the backends ask
for the rows holding every word first, then (if those are too few) the rows holding all but
one, and rank only those (PostgreSQL by the whole query, SQLite by the forms it asked for); only
when those too are fewer than the search asked for does the plain OR query run, over a
bounded share of its rows (SQLite: the newest ``RANK_BUDGET``) when even its rarest term is
over the budget. A conjunction is cheap where the OR query is dear: an index intersects its
terms' row lists, stepping over the rows that cannot match. On a bare FTS5 table of the scale
bench's 1M salads (each query word in ~8% of the rows), ranking the rarest word's rows took
40 / 63 ms (p50 / p95) and the conjunction 10 / 26 ms; its top 40 shared 97% of the full OR
query's (docs/benchmarks.md has the product's figures).
"""

from __future__ import annotations

from collections.abc import Mapping

# Rows an OR query may rank before the conjunction is asked first (~5 ms of FTS5's bm25); also
# the rows ranked, newest first, when the conjunction cannot fill the page (one common word).
RANK_BUDGET = 10_000
# The rarest words a conjunction is built of: "all but one" asks one query per word.
CONJUNCTION_WORDS = 6
# A word in more than this share of the rows narrows a conjunction too little to be worth its
# cost (the index reads its whole row list to weigh it).
CONJUNCTION_SHARE = 0.25

Word = tuple[str, ...]  # forms of one query word: a row holds the word when it holds any of them
Group = list[Word]  # a row matches a group when it holds every word of it


def words_of(terms: list[str]) -> list[Word]:
    """Query terms grouped into words: a term that begins or ends another is taken for a form of
    the same word (a stem and its word, ``book`` and ``booked``; a compound's head, ``platz`` of
    ``fensterplatz``). That also groups two words now and then (``car`` and ``carpet``), which a
    conjunction asking for either form only asks less of a row; splitting one word's forms
    would ask every row holding it for the same word twice."""
    words: list[list[str]] = []
    for t in sorted(dict.fromkeys(terms), key=lambda t: (len(t), t)):
        for w in words:
            if any(t.startswith(f) or f.startswith(t) or t.endswith(f) or f.endswith(t) for f in w):
                w.append(t)
                break
        else:
            words.append([t])
    return [tuple(w) for w in words]


def conjunctive_groups(rows_of: Mapping[str, float], total: float) -> list[list[Group]]:
    """Levels of groups, asked in turn: ``[[all words]]``, then, with three words or more, every
    group missing one word. Each word is asked for by two of its forms at most: its commonest
    (held by every row holding a form derived from another, as a stem or a compound's head is)
    and its longest (the word as written, when the grouping joined two words).

    ``rows_of``: each query term's (estimated) number of rows; ``total``: rows in the namespace.
    A word's rows are counted as its commonest form's. Words no row holds, or more than
    CONJUNCTION_SHARE of them, are left out; only the CONJUNCTION_WORDS rarest are used; fewer
    than two usable words give no levels.
    """
    # Two forms a word, not all: FTS5's bm25 reads the whole row list of every term it ranks by,
    # and a German compound brings five or ten forms of the same rows (its heads).
    words = []
    for w in words_of(list(rows_of)):
        commonest = min(w, key=lambda t: (-rows_of[t], t))
        words.append(tuple(dict.fromkeys((commonest, max(w, key=lambda t: (len(t), t))))))
    rows = {w: rows_of[w[0]] for w in words}
    usable = sorted(
        (w for w, n in rows.items() if 0 < n <= CONJUNCTION_SHARE * total), key=lambda w: (rows[w], w)
    )
    usable = usable[:CONJUNCTION_WORDS]
    if len(usable) < 2:
        return []
    levels = [[usable]]
    if len(usable) >= 3:
        levels.append([usable[:i] + usable[i + 1 :] for i in range(len(usable))])
    return levels
