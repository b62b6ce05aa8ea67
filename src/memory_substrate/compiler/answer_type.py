"""What kind of answer a task asks for, and whether a turn can give it. Pure, for tests.

One kind for now: *when*. A task that asks when something happened ("When did Ana move to
Lisbon?", "What year did we drop Redis?", "How long ago was the outage?") is answered by a turn
that says when: "we moved last spring", "I finally went yesterday", "back in 2021", "on Friday".
The segment ranker matches the task's words and meaning; that a turn carries a time expression
is a separate piece of evidence that it answers a *when* question, the way question answering
matches a question's answer type. Episode recall (episodes.py) adds ``WHEN_BONUS`` to such turns
for such tasks (temporal questions of LoCoMo dev 0.910 -> 0.921 at 1,500 tokens, the others
unchanged: notebooks/context-compiler-log.md).

The time expressions are the ones people use in conversation: relative days and periods
(yesterday, last week, this weekend, two months ago, next Friday), weekdays, months and years.
A turn's own time (its message date) is not one: every turn has it.
"""

from __future__ import annotations

import itertools
import re

_AUX = r"(?:did|does|do|is|was|were|will|are|has|have|had|can|could|should|would|shall|might)"
_ASKS_WHEN = re.compile(
    rf"^\W*when(?:'s|\s+{_AUX})\b"  # "When did ...", "When's ..." (not "When the build fails, ...")
    r"|\b(?:what|which)\s+(?:date|day|month|year|week|weekend)\b"
    r"|\bhow\s+long\s+ago\b",
    re.I,
)
_SPACES = str.maketrans({c: " " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~’“”…"})
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january",
    "february",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)  # "May" and "March" count only capitalised: "may" and "march" are verbs as often
_DAY_WORDS = frozenset(
    ("yesterday", "today", "tonight", "tomorrow", *_WEEKDAYS, *(d + "s" for d in _WEEKDAYS), *_MONTHS)
)
_CASED = frozenset(("May", "March"))
_YEARS = frozenset(str(y) for y in range(1900, 2100))
_SHIFT = frozenset(("last", "next", "this", "past"))
_PERIODS = frozenset(
    (
        "day",
        "week",
        "weekend",
        "month",
        "year",
        "night",
        "morning",
        "evening",
        "summer",
        "winter",
        "spring",
        "fall",
        "autumn",
    )
)


def asks_when(task: str) -> bool:
    """Whether ``task`` asks when something happened."""
    return bool(_ASKS_WHEN.search(task))


def says_when(text: str) -> bool:
    """Whether ``text`` says when something happened (a time expression of its own). Its words
    are looked up in sets, in C: episode recall asks this of 200 turns, and one regular
    expression of every alternative cost several times as much."""
    spaced = text.translate(_SPACES)
    if not _CASED.isdisjoint(spaced.split()):
        return True
    words = spaced.casefold().split()
    seen = set(words)
    if not _DAY_WORDS.isdisjoint(seen) or not _YEARS.isdisjoint(seen):
        return True
    if "ago" in seen or not _SHIFT.isdisjoint(seen):
        for prev, word in itertools.pairwise(words):
            if prev in _SHIFT and word in _PERIODS:  # last week, this spring, next weekend
                return True
            if word == "ago" and prev.removesuffix("s") in _PERIODS:  # two weeks ago, a year ago
                return True
    return False


# A task about the work in front of someone: an instruction to do it ("Fix the refund 409s and add
# a test"), or a question about what is open, left, next, or being picked up. Closed
# work items stay out of its package even when it names them (rank.py); a task that asks about
# past work ("didn't we fix this already?", "did the prototype ever get finished?") may get them.
_DO_WORK = re.compile(
    r"^\W*(?:please\s+|let's\s+|can\s+you\s+|could\s+you\s+)?(?:fix|add|implement|build|write|update|refactor|"
    r"debug|investigate|migrate|ship|deploy|create|remove|make|change|set\s+up|configure|finish|complete|start|"
    r"continue|resolve|handle|look\s+into|dig\s+into)\b",
    re.I,
)
_WHAT_IS_OPEN = re.compile(
    r"\b(?:still\s+open|open\s+(?:items?|work|tasks?|tickets?|bugs?)|what(?:'s|\s+is|\s+are)\s+(?:still\s+)?(?:open|left|"
    r"pending|outstanding|remaining|next)|left\s+to\s+do|to-?dos?|backlog|outstanding|remaining\s+work|"
    r"in\s+progress|where\s+are\s+we|what\s+should\s+i\s+(?:pick\s+up|work\s+on|do\s+next)|pick(?:ing)?\s+up|"
    r"what(?:'s|\s+is)\s+blocked|blockers?)\b",
    re.I,
)


# A question that asks for the open work itself, as a list: "What's still open before we go live?",
# "What work remains?", "Which tickets are unresolved?". Narrower than _WHAT_IS_OPEN, whose looser
# phrases ("where are we", "outstanding", "backlog", "pick up") also name other things ("Where
# are we storing the tokens?", "an outstanding balance", "the consumer backlog").
_LIST_OPEN = re.compile(
    r"\b(?:still\s+open|open\s+(?:items?|work|tasks?|tickets?|bugs?|issues?|prs?|pull\s+requests?)|"
    r"(?:what|which)(?:'s|\s+is|\s+are)?\s+(?:still\s+)?(?:open|left|pending|remaining|unresolved|blocked|next)\b"
    r"(?!\s+(?:of|in|on)\b)|"
    r"(?:what|which)\s+(?:work|tasks?|tickets?|items?|bugs?|issues?)\s+(?:is\s+|are\s+)?(?:still\s+)?"
    r"(?:open|left|remains?|remaining|pending|unresolved|blocked)|left\s+to\s+do|"
    r"what\s+should\s+i\s+(?:pick\s+up|work\s+on|do)\s+next)",
    re.I,
)


def asks_what_is_open(task: str) -> bool:
    """Whether ``task`` asks for the open work as a list (what is open, left, next or blocked):
    a question the open work items answer whatever words each of them shares with it."""
    return _LIST_OPEN.search(task) is not None


# A task that asks for an account of work already done: a postmortem, release notes, a changelog
# entry, a summary of why something was dropped or what changed. Its instruction ("Write ...") is
# to write about the work, not to do it, so it is no task about work still to do, and the closed
# items it recounts enter like any other item the task matches (rank.py), not only when named.
_PAST_WORK = re.compile(
    r"\b(?:post[-\s]?mortems?|retro(?:spective)?s?|release\s+notes?|change-?logs?|incident\s+reports?|write-?ups?|"
    r"what\s+(?:we\s+)?changed|what\s+went\s+(?:wrong|well)|what\s+happened|what\s+we\s+(?:shipped|did|got\s+done)|"
    r"why\s+we\s+(?:dropped|abandoned|cancelled|canceled|stopped|chose|picked|moved|switched|decided|gave\s+up))\b",
    re.I,
)
# The instructions that produce an account rather than do the work.
_WRITE = re.compile(
    r"^\W*(?:please\s+|let's\s+|can\s+you\s+|could\s+you\s+)?(?:write|draft|summari[sz]e|document|"
    r"prepare|compose|put\s+together)\b",
    re.I,
)


def recounts_past_work(task: str) -> bool:
    """Whether ``task`` asks for an account of work already done (a postmortem, release notes, a
    changelog entry, why something was dropped or what changed), and is not an instruction to do
    work: "Investigate what happened and fix it" and "Fix the changelog generator" do work."""
    if _PAST_WORK.search(task) is None:
        return False
    return _DO_WORK.search(task) is None or _WRITE.search(task) is not None


def work_stance(task: str) -> tuple[bool, bool]:
    """(about open work, an account of past work) for ``task``: a question about what is open is
    about open work whatever else it names; otherwise an account of past work is not an
    instruction to do the work it recounts."""
    past = recounts_past_work(task)
    if asks_what_is_open(task) or (_WHAT_IS_OPEN.search(task) is not None and not past):
        return True, False
    return (_DO_WORK.search(task) is not None and not past), past
