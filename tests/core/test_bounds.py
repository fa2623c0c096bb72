"""The bounds of what a kept copy may say about time (core/bounds.py)."""

from __future__ import annotations

import math

import pytest

from scrapy_rerp.core.bounds import (
    CLOCK_SKEW,
    LATEST_TIME,
    bounded_expiry,
    longest_lifetime,
    longest_retry_wait,
    moment_problem,
)
from scrapy_rerp.core.settings import RerpSettings

NOW = 1_800_000_000.0


@pytest.mark.parametrize("value", [0, NOW, NOW + CLOCK_SKEW, 1.5])
def test_a_time_in_bounds(value: float) -> None:
    assert moment_problem("fetched_at", value, NOW) is None


@pytest.mark.parametrize(
    ("value", "begins"),
    [
        (NOW + CLOCK_SKEW + 1, "future: fetched_at is 301s ahead"),
        (NOW + 1e8, "future: fetched_at is 100000000s ahead"),
        (-1e308, "fetched_at -1e+308 is not a time between 1970 and 9999"),
        (LATEST_TIME + 1, "fetched_at 253402300800.0 is not a time between 1970 and 9999"),
        (math.inf, "fetched_at inf is not a time"),
        (math.nan, "fetched_at nan is not a time"),
        ("1", "fetched_at '1' is not a time"),
        (True, "fetched_at True is not a time"),
    ],
)
def test_a_time_out_of_bounds(value: object, begins: str) -> None:
    problem = moment_problem("fetched_at", value, NOW)
    assert problem is not None and problem.startswith(begins), problem


def test_an_expiry_may_be_in_the_future_not_past_9999() -> None:
    assert moment_problem("expires_at", NOW + 1e8, NOW, past=False) is None
    assert moment_problem("expires_at", 1e20, NOW, past=False) is not None


def test_the_lifetime_is_today_s_longest() -> None:
    settings = RerpSettings.from_settings(
        {"RERP_MAX_LIFETIME": 7200, "RERP_ERROR_LIFETIME": 3600}, require_obey=False
    )
    assert longest_lifetime(settings) == 7200
    assert bounded_expiry(NOW, NOW + 1e9, longest_lifetime(settings)) == NOW + 7200
    assert bounded_expiry(NOW, NOW + 60, longest_lifetime(settings)) == NOW + 60
    errors_longer = RerpSettings.from_settings({"RERP_ERROR_LIFETIME": 1e6}, require_obey=False)
    assert longest_lifetime(errors_longer) == 1e6
    assert longest_retry_wait(settings) == 86400
