"""How messages word durations and counts, and the origins told once at INFO."""

from __future__ import annotations

import pytest

from scrapy_rerp.core.wording import FirstTimes, counted, duration, stat_seconds


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0.0, "0 s"),
        (0.0004, "0 s"),
        (0.25, "0.25 s"),
        (1.0, "1 s"),
        (2.993825912475586, "2.99 s"),
        (42.5, "42.5 s"),
        (119.0, "119 s"),
        (120.0, "2.0 minutes"),
        (45 * 60.0, "45 minutes"),
        (2 * 3600.0, "2.0 hours"),
        (172803.0, "2.0 days"),
        (2.592e06, "30 days"),
        (float("inf"), "forever"),
    ],
)
def test_a_duration_is_said_in_the_unit_a_reader_takes_in(seconds: float, said: str) -> None:
    assert duration(seconds) == said


def test_a_count_is_singular_for_one() -> None:
    assert [counted(n, "entry", "entries") for n in (0, 1, 2)] == [
        "0 entries",
        "1 entry",
        "2 entries",
    ]
    assert counted(1, "request") == "1 request" and counted(3, "request") == "3 requests"


def test_stats_hold_seconds_to_the_millisecond() -> None:
    assert stat_seconds(2.993825912475586) == 2.994
    assert stat_seconds(0.1 + 0.2) == 0.3


def test_an_origin_is_told_once_and_the_memory_is_bounded() -> None:
    told = FirstTimes(limit=2)
    assert [told.first(o) for o in ("a", "a", "b", "a")] == [True, False, True, False]
    assert told.first("c") and len(told) == 2  # "a", the longest known, is forgotten
    assert told.first("a")
    told.forget("a")
    assert told.first("a")
