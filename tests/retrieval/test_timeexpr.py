from __future__ import annotations

from datetime import datetime

from memory_substrate.retrieval.timeexpr import find_periods, strip_periods


def test_absolute_dates_of_several_precisions() -> None:
    ps = find_periods("What happened on 7 May 2023, in June 2023, on July 4, 2022 and in 2021? 2023-01-02")
    got = sorted((p.start, p.end.date()) for p in ps)
    assert (datetime(2023, 5, 7), datetime(2023, 5, 7).date()) in got
    assert (datetime(2023, 6, 1), datetime(2023, 6, 30).date()) in got
    assert (datetime(2022, 7, 4), datetime(2022, 7, 4).date()) in got
    assert (datetime(2021, 1, 1), datetime(2021, 12, 31).date()) in got
    assert (datetime(2023, 1, 2), datetime(2023, 1, 2).date()) in got
    assert len(ps) == 5  # "May 2023" inside "7 May 2023" is not counted twice


def test_invalid_dates_and_plain_numbers_are_ignored() -> None:
    (p,) = find_periods("31 February 2023")  # no such day: falls back to the month
    assert (p.start, p.end.day) == (datetime(2023, 2, 1), 28)
    assert find_periods("I have 3 cats and 12 dogs") == []


def test_relative_expressions_need_a_reference_time() -> None:
    assert find_periods("what did I do yesterday?") == []
    now = datetime(2024, 3, 10, 15, 0)
    (p,) = find_periods("what did I do yesterday?", now)
    assert p.start == datetime(2024, 3, 9) and p.end < datetime(2024, 3, 10)
    (q,) = find_periods("two weeks ago", now)
    assert q.contains(datetime(2024, 2, 25))


def test_strip_periods() -> None:
    text = "Where did she travel in May 2023?"
    assert strip_periods(text, find_periods(text)) == "Where did she travel in ?"
