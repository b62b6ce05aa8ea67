"""Time expressions in queries, resolved to calendar periods.

Absolute dates are recognised in English forms ("7 May 2023", "May 7, 2023", "May 2023",
"2023", ISO "2023-05-07"); relative ones ("yesterday", "last week", "last month", "last year",
"N days/weeks/months ago") are resolved against a reference time when one is given. A segment
whose ``created_at`` falls in such a period (or shortly after it: people tell of events after they
happen) is more likely to be what the query is about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
}
_MONTHS.update({name[:3]: num for name, num in list(_MONTHS.items())})
_MONTHS["sept"] = 9

_MON = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_P_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
_P_DMY = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b", re.I)
_P_MDY = re.compile(rf"\b{_MON}\s+{_DAY}(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.I)
_P_MY = re.compile(rf"\b{_MON},?\s+(?:of\s+)?{_YEAR}\b", re.I)
_P_Y = re.compile(rf"\b(?:in|of|during|since|from|year)\s+{_YEAR}\b|\b{_YEAR}\b", re.I)
_P_REL = re.compile(
    r"\b(yesterday|today|last\s+(?:week|weekend|month|year)|this\s+(?:week|month|year)"
    r"|(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago)\b",
    re.I,
)
_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True)
class Period:
    start: datetime
    end: datetime  # inclusive
    text: str  # the matched expression

    def contains(self, when: datetime, *, after_slack: timedelta = timedelta(0)) -> bool:
        return self.start <= when <= self.end + after_slack


def _month_end(year: int, month: int) -> datetime:
    nxt = datetime(year + (month == 12), month % 12 + 1, 1)
    return nxt - timedelta(microseconds=1)


def _day(y: int, m: int, d: int) -> tuple[datetime, datetime] | None:
    try:
        start = datetime(y, m, d)
    except ValueError:
        return None
    return start, start + timedelta(days=1) - timedelta(microseconds=1)


def find_periods(text: str, now: datetime | None = None) -> list[Period]:
    """Calendar periods named in ``text``; relative ones only when ``now`` is given."""
    periods: list[Period] = []
    spans: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return not any(a < span[1] and span[0] < b for a, b in spans)

    def add(span: tuple[int, int], rng: tuple[datetime, datetime] | None, expr: str) -> None:
        if rng is not None and free(span):
            periods.append(Period(rng[0], rng[1], expr))
            spans.append(span)

    for m in _P_ISO.finditer(text):
        add(m.span(), _day(int(m.group(1)), int(m.group(2)), int(m.group(3))), m.group(0))
    for m in _P_DMY.finditer(text):
        add(m.span(), _day(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1))), m.group(0))
    for m in _P_MDY.finditer(text):
        add(m.span(), _day(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2))), m.group(0))
    for m in _P_MY.finditer(text):
        y, mo = int(m.group(2)), _MONTHS[m.group(1).lower()]
        add(m.span(), (datetime(y, mo, 1), _month_end(y, mo)), m.group(0))
    for m in _P_Y.finditer(text):
        y = int(m.group(1) or m.group(2))
        add(m.span(), (datetime(y, 1, 1), _month_end(y, 12)), m.group(0))
    if now is not None:
        for m in _P_REL.finditer(text):
            rng = _relative(m, now)
            add(m.span(), rng, m.group(0))
    return periods


def _relative(m: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    expr = " ".join(m.group(1).lower().split())
    today = datetime(now.year, now.month, now.day)
    if expr == "today":
        return today, now
    if expr == "yesterday":
        return today - timedelta(days=1), today - timedelta(microseconds=1)
    if expr in ("last week", "last weekend"):
        return today - timedelta(days=14), today
    if expr == "this week":
        return today - timedelta(days=7), now
    if expr == "last month":
        return today - timedelta(days=62), today
    if expr == "this month":
        return datetime(now.year, now.month, 1), now
    if expr == "last year":
        return datetime(now.year - 1, 1, 1), _month_end(now.year - 1, 12)
    if expr == "this year":
        return datetime(now.year, 1, 1), now
    if m.group(2):
        n = int(m.group(2)) if m.group(2).isdigit() else _NUM.get(m.group(2).lower(), 1)
        unit = {"day": 1, "week": 7, "month": 30, "year": 365}[m.group(3).lower()]
        centre = today - timedelta(days=n * unit)
        half = timedelta(days=max(1, unit // 2))
        return centre - half, centre + half
    return None


def strip_periods(text: str, periods: list[Period]) -> str:
    """``text`` without the matched time expressions (so they do not count as content words)."""
    for p in periods:
        text = text.replace(p.text, " ")
    return " ".join(text.split())
