"""Which rows a full-text query ranks when every one of its words is common (both backends).

An OR query ranks every row that holds any of its terms. On a large namespace whose query words
are all common (each in thousands of rows), that is tens of thousands of rows scored for the
few dozen a search keeps, and the cost grows with the store. Yet the rows that best match an OR
query are, nearly always, the rows that hold all its terms, then those that miss one; BM25 and
``ts_rank`` score a row by the terms it holds, so a row holding fewer terms outranks them only
through repeated or much rarer words.

So when an OR query would rank more than ``RANK_BUDGET`` rows, the backends ask for the rows
holding every term first, then (if those are too few) the rows holding all but one, and rank
only those, each by the whole query; only when those too are fewer than the search asked for
does the OR query run as before. A conjunction is cheap where the OR query is dear: an index
intersects its terms' row lists, stepping over the rows that cannot match. On a bare FTS5 table
of the scale bench's 1M salads (each query word in ~8% of the rows), ranking the rarest word's
rows took 40 / 63 ms (p50 / p95) and this took 10 / 26 ms; its top 40 shared 97% of the full OR
query's (docs/benchmarks.md has the product's figures).
"""

from __future__ import annotations

from collections.abc import Mapping

# Rows an OR query may rank before the conjunction is asked first (~5 ms of FTS5's bm25).
RANK_BUDGET = 10_000
# The rarest terms a conjunction is built of: "all but one" asks one query per term.
CONJUNCTION_TERMS = 6
# A term in more than this share of the rows narrows a conjunction too little to be worth it.
CONJUNCTION_SHARE = 0.5


def conjunctive_groups(rows_of: Mapping[str, float], total: float) -> list[list[list[str]]]:
    """Levels of term groups, asked in turn: ``[[all terms]]``, then, with three terms or more,
    every group missing one term. A row matches a group when it holds each of its terms.

    ``rows_of``: each query term's (estimated) number of rows; ``total``: rows in the namespace.
    Terms no row holds, or more than CONJUNCTION_SHARE of them, are left out; only the
    CONJUNCTION_TERMS rarest are used; fewer than two usable terms give no levels.
    """
    usable = sorted(
        (t for t, n in rows_of.items() if 0 < n <= CONJUNCTION_SHARE * total), key=lambda t: (rows_of[t], t)
    )[:CONJUNCTION_TERMS]
    if len(usable) < 2:
        return []
    levels = [[usable]]
    if len(usable) >= 3:
        levels.append([usable[:i] + usable[i + 1 :] for i in range(len(usable))])
    return levels
