"""The politeness controller alone: floors, backoff and the fleet's turns, with fakes for the
slots, the parking lot and Redis (no crawl). Gaps measured at a server are in test_throttle.py."""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

import pytest
import pytest_twisted
from scrapy.utils.defer import deferred_from_coro

from scrapy_rerp._politeness import (
    PARKED,
    STAT_APPLIED,
    STAT_CAPPED,
    STAT_CLEARED,
    STAT_MAX,
    TURN_META,
    Politeness,
    wanted_delay,
)
from scrapy_rerp._settings import RerpSettings
from scrapy_rerp.engine import parse
from scrapy_rerp.fleet.delay import FleetPoliteness
from tests.support import AsyncioRuntime, Stats

A, B = "http://a.test:80", "http://b.test:80"


class Throttle:
    def __init__(self) -> None:
        self.floors: dict[str, float] = {}

    def apply_floor(self, origin: str, floor: float) -> None:
        self.floors[origin] = floor

    def clear_floor(self, origin: str) -> bool:
        return self.floors.pop(origin, None) is not None

    def floor_of(self, origin: str) -> float | None:
        return self.floors.get(origin)

    def floored_origins(self) -> list[str]:
        return list(self.floors)


def politeness(download_delay: float = 0.0, **settings: Any) -> Politeness:
    rerp = RerpSettings.from_settings(settings, require_obey=False)
    return Politeness(rerp, download_delay, Throttle(), Stats())


@pytest.mark.parametrize(
    ("lines", "wanted"),
    [
        ("Crawl-delay: 2", 2.0),
        ("Request-rate: 3/15", 5.0),
        ("Crawl-delay: 2\nRequest-rate: 1/10s", 10.0),
        ("Crawl-delay: 0", None),
        ("Disallow: /x", None),
    ],
)
def test_the_wanted_delay_is_crawl_delay_or_the_request_rate_interval(
    lines: str, wanted: float | None
) -> None:
    assert wanted_delay(parse(f"User-agent: *\n{lines}\n"), "Bot") == wanted


def test_floors_are_capped_raised_to_download_delay_and_applied(
    caplog: pytest.LogCaptureFixture,
) -> None:
    p = politeness(download_delay=1.5, RERP_MAX_CRAWL_DELAY=10)
    throttle = p.throttle
    assert isinstance(throttle, Throttle)
    assert p.rules_known(A, parse("User-agent: *\nCrawl-delay: 100\n"), "Bot") == 10.0
    assert p.rules_known(A, parse("User-agent: *\nCrawl-delay: 100\n"), "Bot") == 10.0
    assert p.rules_known(B, parse("User-agent: *\nCrawl-delay: 1\n"), "Bot") == 1.5
    assert throttle.floors == {A: 10.0, B: 1.5}
    stats = p.stats
    assert stats.get_value(STAT_APPLIED) == 3 and stats.get_value(STAT_CAPPED) == 2
    assert stats.get_value(STAT_MAX) == 10.0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [  # once per origin
        f"robots.txt of {A} asks for 100 s between requests; capped to RERP_MAX_CRAWL_DELAY = 10 s"
    ]
    # No delay any more: the floor goes; forgetting an origin clears its floor too.
    assert p.rules_known(A, parse("User-agent: *\nDisallow: /x\n"), "Bot") is None
    p.forget(B)
    assert throttle.floors == {} and stats.get_value(STAT_CLEARED) == 2
    assert p.floor_for(parse("User-agent: *\nCrawl-delay: 3\n"), "Bot") == 3.0  # no side effect
    assert throttle.floors == {}


@pytest.mark.parametrize("settings", [{"RERP_CRAWL_DELAY": False}, {"RERP_MAX_CRAWL_DELAY": 0}])
def test_floors_off(settings: dict[str, Any]) -> None:
    p = politeness(**settings)
    robots = parse("User-agent: *\nCrawl-delay: 3\n")
    assert p.throttle is None
    assert p.rules_known(A, robots, "Bot") is None and p.floor_for(robots, "Bot") is None


def test_robots_txt_retries_back_off_and_honour_retry_after() -> None:
    p = politeness(RERP_RETRY_BACKOFF_BASE=1, RERP_RETRY_BACKOFF_MAX=8)
    assert [p.robots_retry_in(n, None) for n in range(1, 6)] == [1, 2, 4, 8, 8]
    assert p.robots_retry_in(1, 30.0) == 30.0
    assert p.robots_retry_in(1, 10**9) == 24 * 3600  # a day at most


class Parking:
    def __init__(self, limit: int = 10) -> None:
        self.parked: dict[str, list[Any]] = {}
        self.released: list[Any] = []
        self.limit = limit

    def park(self, key: str, request: Any) -> str | None:
        waiting = self.parked.setdefault(key, [])
        if len(waiting) >= self.limit:
            return "park_limit"
        waiting.append(request)
        return None

    def release_one(self, key: str) -> bool:
        if not self.parked.get(key):
            return False
        self.released.append(self.parked[key].pop(0))
        return True

    def count(self, key: str) -> int:
        return len(self.parked.get(key, ()))


class Turns:
    """The fleet's turns, one at a time, each held until its request is answered."""

    def __init__(self) -> None:
        self.holder: Any = None
        self.done: list[bytes] = []
        self.first: list[tuple[str, float]] = []
        self.taken = 0

    async def wait_for_turn(self, origin: str, delay: float) -> bytes | None:
        while self.holder is not None:
            await asyncio.sleep(0.001)
        self.taken += 1
        self.holder = b"turn-%d" % self.taken
        return self.holder

    async def turn_done(self, origin: str, delay: float, turn: bytes) -> None:
        self.done.append(turn)
        self.holder = None

    async def first_turn(self, origin: str, delay: float) -> None:
        self.first.append((origin, delay))


class Request:
    def __init__(self, name: str) -> None:
        self.name = name
        self.meta: dict[str, Any] = {}


def scenario(test: Any) -> Any:
    @pytest_twisted.ensureDeferred
    @functools.wraps(test)
    async def run(*args: Any, **kwargs: Any) -> None:
        await deferred_from_coro(test(*args, **kwargs))

    return run


def fleet(parking: Parking, turns: Turns) -> tuple[FleetPoliteness, AsyncioRuntime]:
    runtime = AsyncioRuntime()
    rerp = RerpSettings.from_settings({}, require_obey=False)
    p = FleetPoliteness(rerp, 0.0, Throttle(), Stats(), turns, parking, runtime)  # type: ignore[arg-type]
    return p, runtime


@scenario
async def test_fleet_requests_take_the_origin_s_turn_one_at_a_time() -> None:
    parking, turns = Parking(), Turns()
    p, runtime = fleet(parking, turns)
    robots = parse("User-agent: *\nCrawl-delay: 0.5\n")
    await p.before_sharing(A, robots, "Bot")  # the robots.txt answer takes the first turn
    assert turns.first == [(A, 0.5)]
    assert p.admit(B, Request("no floor")) is None  # an origin without a floor goes on
    p.rules_known(A, robots, "Bot")
    first, second, third = Request("1"), Request("2"), Request("3")
    waiting = p.admit(A, first)
    assert waiting is not None and waiting is not PARKED and not isinstance(waiting, str)
    assert p.admit(A, second) is PARKED and p.admit(A, third) is PARKED
    await waiting  # type: ignore[misc]
    assert first.meta[TURN_META] == (A, 0.5, b"turn-1")
    assert parking.released == [second]  # the next one goes back to take its turn
    p.answered(first.meta)  # its response: the turn ends
    await runtime.settle()
    assert turns.done == [b"turn-1"] and TURN_META not in first.meta
    p.stop()


@scenario
async def test_fleet_parking_is_bounded_and_kicked() -> None:
    parking, turns = Parking(limit=1), Turns()
    p, runtime = fleet(parking, turns)
    p.KICK_INTERVAL = 0.01  # type: ignore[misc]
    p.rules_known(A, parse("User-agent: *\nCrawl-delay: 0.5\n"), "Bot")
    turns.holder = b"another worker's"
    head = p.admit(A, Request("head"))
    assert p.admit(A, Request("parked")) is PARKED
    assert p.admit(A, Request("too many")) == f"too many requests wait for the Crawl-delay of {A}"
    turns.holder = None
    await head  # type: ignore[misc]
    assert [r.name for r in parking.released] == ["parked"]
    # A parked request whose origin has no head here (the head went to another worker) is
    # released by the kick.
    parking.park(p.key(A), Request("orphan"))
    await asyncio.sleep(0.05)
    assert [r.name for r in parking.released] == ["parked", "orphan"]
    p.stop()
