"""fleet/bounds.py: what a worker takes from an origin's hash, held to its settings' bounds,
with the clock skew allowed on each (the crawls of planted hashes: test_planted.py)."""

from __future__ import annotations

import pytest

from scrapy_rerp.core.bounds import CLOCK_SKEW
from scrapy_rerp.core.data import Outcome, RobotsEntry
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.core.status import RETRY_AFTER_MAX
from scrapy_rerp.fleet.bounds import HashBounds

NOW = 2_000_000_000.0
SETTINGS = RerpSettings.from_settings(
    {"RERP_MAX_LIFETIME": 7200, "RERP_RETRY_BACKOFF_MAX": 60}, require_obey=False
)
BOUNDS = HashBounds.of(SETTINGS)


def entry(**fields: object) -> RobotsEntry:
    values: dict[str, object] = {"robots": None, "fetched_at": NOW, "expires_at": NOW + 3600}
    return RobotsEntry(**{**values, **fields})  # type: ignore[arg-type]


def test_the_bounds_are_the_settings() -> None:
    assert BOUNDS.lifetime == 7200 and BOUNDS.outage == RETRY_AFTER_MAX
    # The longest TTL: RERP_STALE_MAX_AGE (30 days) plus the stale window, plus the skew.
    assert BOUNDS.keep == SETTINGS.stale_max_age + 7200 + CLOCK_SKEW


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({}, None),
        ({"fetched_at": NOW + CLOCK_SKEW, "expires_at": NOW + CLOCK_SKEW + 60}, None),
        ({"fetched_at": NOW + CLOCK_SKEW + 1}, f"fetched {CLOCK_SKEW + 1:.0f} s in the future"),
        ({"expires_at": NOW + 7200 + CLOCK_SKEW}, None),
        (
            {"expires_at": NOW + 7200 + CLOCK_SKEW + 1},
            f"a lifetime of {7200 + CLOCK_SKEW + 1:.0f} s, beyond RERP_MAX_LIFETIME's 7200 s",
        ),
        ({"outcome": Outcome.ALLOW_ALL, "expires_at": NOW + 1e9}, "a lifetime of 1000000000 s"),
        (
            {"outcome": Outcome.UNREACHABLE, "failures": 1, "expires_at": NOW + RETRY_AFTER_MAX},
            None,
        ),
        (
            {"outcome": Outcome.UNREACHABLE, "failures": 1, "expires_at": NOW + 1e9},
            "an outage retried in 1000000000 s, beyond the longest backoff of 86400 s",
        ),
        # Rules kept through an outage: fetched long ago, retried soon.
        ({"fetched_at": NOW - 20 * 86400, "expires_at": NOW + 60, "failures": 4}, None),
        (
            {"failures": 1, "outage_since": NOW + 3600},
            "an outage beginning 3600 s in the future",
        ),
        ({"failures": -1}, "-1 failures"),
    ],
)
def test_an_entry_is_within_the_bounds_or_says_why_not(
    fields: dict[str, object], problem: str | None
) -> None:
    found = BOUNDS.problem(entry(**fields), NOW)
    if problem is None:
        assert found is None
    else:
        assert found is not None and found.startswith(problem), found
