"""The politeness controller alone: floors, backoff, cool-downs, raised floors and the fleet's
turns, with fakes for the slots, the parking lot and Redis (no crawl). Gaps measured at a server
are in test_throttle.py; slow-downs in real crawls in test_slowdown_crawl.py."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
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
    STAT_RETRIES,
    TURN_META,
    Politeness,
    wanted_delay,
)
from scrapy_rerp._settings import RerpSettings
from scrapy_rerp._slowdown import COOL_DOWN, FLOOR_KEPT, FLOOR_RAISED, META, SlowAnswer
from scrapy_rerp.engine import parse
from scrapy_rerp.fleet.delay import FleetPoliteness
from tests.support import AsyncioRuntime, Stats

A, B, C = "http://a.test:80", "http://b.test:80", "http://c.test:80"


class Throttle:
    def __init__(self) -> None:
        self.floors: dict[str, float] = {}
        self.queued: list[tuple[str, Any]] = []  # (origin, request) waiting in a slot

    def take_back(self, origin: str, keep: Callable[[Any], bool]) -> int:
        taken = [(o, r) for o, r in self.queued if o == origin and keep(r)]
        self.queued = [item for item in self.queued if item not in taken]
        return len(taken)

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

    def release(self, key: str) -> int:
        n = 0
        while self.release_one(key):
            n += 1
        return n

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


def fleet(
    parking: Parking, turns: Turns, **settings: Any
) -> tuple[FleetPoliteness, AsyncioRuntime]:
    """A fleet worker's politeness; its turns alone unless ``RERP_SLOWDOWN`` is given."""
    runtime = AsyncioRuntime()
    rerp = RerpSettings.from_settings({"RERP_SLOWDOWN": False, **settings}, require_obey=False)
    p = FleetPoliteness(rerp, 0.0, Throttle(), Stats(), parking, runtime, turns)  # type: ignore[arg-type]
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


# -- slow-downs ---------------------------------------------------------------------------------


def slowing(
    download_delay: float = 0.0, **settings: Any
) -> tuple[Politeness, Parking, AsyncioRuntime]:
    """A single process's politeness with a parking lot and a runtime: slow-downs on."""
    parking, runtime = Parking(), AsyncioRuntime()
    rerp = RerpSettings.from_settings(settings, require_obey=False)
    p = Politeness(rerp, download_delay, Throttle(), Stats(), parking, runtime)
    return p, parking, runtime


def answer(status: int = 429, wait: float | None = None) -> SlowAnswer:
    return SlowAnswer(status, None if wait is None else f"{wait:g}", wait)


def sent(seconds_ago: float = 0.0, **meta: Any) -> dict[str, Any]:
    """The meta of a request answered now, sent ``seconds_ago`` (Scrapy's download_latency)."""
    return {"download_latency": seconds_ago, **meta}


@scenario
async def test_a_cool_down_parks_the_origin_s_requests_and_its_end_releases_them() -> None:
    p, parking, runtime = slowing()
    queued_a, queued_b = Request("queued a"), Request("queued b")
    p.throttle.queued = [(A, queued_a), (B, queued_b)]  # type: ignore[union-attr]
    meta = sent(retry_times=0)
    before = time.time()
    p.slow_answer(A, answer(429, 0.2), meta)
    decision = meta[META]
    assert decision["decision"] == COOL_DOWN and decision["status"] == 429
    assert decision["retry_after"] == "0.2" and decision["wait"] == 0.2
    assert before + 0.2 <= decision["until"] <= time.time() + 0.2
    # What waited in A's slot left it, parked; B's did not.
    assert parking.parked[p.cool_key(A)] == [queued_a]
    assert p.throttle.queued == [(B, queued_b)]  # type: ignore[union-attr]
    later = Request("later")
    assert p.admit(A, later) is PARKED
    assert p.admit(B, Request("other origin")) is None
    assert 0.1 < (p.cooling(A) or 0) <= 0.2 and p.cooling(B) is None
    assert set(p.cool_downs()) == {A}
    await asyncio.sleep(0.3)
    assert parking.released == [queued_a, later] and p.cooling(A) is None
    # Back from the cool-down: admitted, with the wait counted once in meta and stats.
    assert p.admit(A, later) is None
    assert 0.2 <= later.meta[META]["waited"] < 0.5
    stats = p.stats.values
    assert stats["robotstxt/slowdown/cooldowns"] == 1
    assert stats["robotstxt/slowdown/parked"] == 2
    assert stats["robotstxt/slowdown/taken_back"] == 1
    assert stats["robotstxt/slowdown/seconds_waited"] == pytest.approx(
        later.meta[META]["waited"], abs=0.2
    )
    await runtime.settle()


@scenario
async def test_a_cool_down_only_ends_later_and_is_capped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="scrapy_rerp")
    p, _, runtime = slowing(RERP_SLOWDOWN_MAX_WAIT=0.3)
    p.slow_answer(A, answer(503, 0.2), sent())
    p.slow_answer(A, answer(503, 0.1), sent())  # ends sooner: nothing changes
    assert p.stats.values.get("robotstxt/slowdown/cooldown_extended") is None
    meta = sent()
    p.slow_answer(A, answer(429, 3600), meta)  # capped to 0.3 s
    assert meta[META]["wait"] == 0.3
    assert 0.25 < (p.cooling(A) or 0) <= 0.3
    stats = p.stats.values
    assert stats["robotstxt/slowdown/cooldowns"] == 1
    assert stats["robotstxt/slowdown/cooldown_extended"] == 1
    assert stats["robotstxt/slowdown/cooldown_capped"] == 1
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert len(infos) == 1  # one INFO line per cool-down, naming the origin and its end
    assert infos[0].startswith(f"Slow down: {A} answered 503 with Retry-After: 0.2; nothing more")
    assert "until 20" in infos[0]
    p.stop()  # the timer ends with the crawl; the cool-down is still known (kept at a pause)
    assert set(p.cool_downs()) == {A}
    await runtime.settle()


@scenario
async def test_without_retry_after_the_floor_doubles_then_halves_on_good_answers() -> None:
    p, _, _ = slowing(
        RERP_SLOWDOWN_START_FLOOR=0.5, RERP_SLOWDOWN_MAX_FLOOR=1.5, RERP_SLOWDOWN_DECAY_AFTER=3
    )
    throttle = p.throttle
    assert isinstance(throttle, Throttle)
    first = sent(0.01)
    p.slow_answer(A, answer(429), first)
    assert first[META]["decision"] == FLOOR_RAISED and first[META]["floor"] == 0.5
    # A request that left before the raise says nothing about the new floor.
    stale = sent(60.0)
    p.slow_answer(A, answer(503), stale)
    assert stale[META]["decision"] == FLOOR_KEPT and throttle.floors[A] == 0.5
    p.slow_answer(A, answer(429), sent())
    assert throttle.floors[A] == 1.0
    p.slow_answer(A, answer(429), sent())
    assert throttle.floors[A] == 1.5  # RERP_SLOWDOWN_MAX_FLOOR
    # Good answers: those of requests sent before the change do not count.
    p.good_answer(A, sent(60.0))
    for _ in range(2):
        p.good_answer(A, sent())
    assert throttle.floors[A] == 1.5
    p.good_answer(A, sent())
    assert throttle.floors[A] == 0.75
    for _ in range(3 * 7):  # 0.375, 0.1875, ... 0.0117, then below FLOOR_GONE
        p.good_answer(A, sent())
    assert A not in throttle.floors and not p.slowed  # halved below FLOOR_GONE: dropped
    stats = p.stats.values
    assert stats["robotstxt/slowdown/floor_raised"] == 3
    assert stats["robotstxt/slowdown/floor_decayed"] >= 1
    assert stats["robotstxt/slowdown/floor_dropped"] == 1
    assert stats["robotstxt/slowdown/max_floor"] == 1.5


@scenario
async def test_a_raised_floor_never_goes_below_crawl_delay_or_download_delay() -> None:
    p, _, _ = slowing(download_delay=0.2, RERP_SLOWDOWN_START_FLOOR=0.1)
    throttle = p.throttle
    assert isinstance(throttle, Throttle)
    p.rules_known(A, parse("User-agent: *\nCrawl-delay: 2\n"), "Bot")
    p.slow_answer(A, answer(429), sent())
    assert throttle.floors[A] == 4.0  # twice the origin's own floor
    p.slow_answer(B, answer(429), sent())
    assert throttle.floors[B] == 0.4  # twice DOWNLOAD_DELAY
    # New rules without Crawl-delay keep the raised floor; its decay ends at the own floor.
    p.rules_known(A, parse("User-agent: *\nDisallow: /x\n"), "Bot")
    assert throttle.floors[A] == 4.0
    p.forget(A)  # the origin left the cache: its floors go
    assert A not in throttle.floors and A not in p.backoff


@scenario
async def test_a_retry_of_a_slow_down_answer_is_counted_once() -> None:
    p, _, _ = slowing()
    original = Request("answered 429")
    original.meta.update(sent(retry_times=0))
    p.slow_answer(A, answer(429), original.meta)
    retry = Request("its retry")
    retry.meta = dict(original.meta, retry_times=1)  # as RetryMiddleware copies it
    assert p.admit(A, retry) is None
    assert p.admit(A, retry) is None  # seen again (parked and released, say)
    assert p.stats.values[STAT_RETRIES] == 1
    assert retry.meta[META]["retried"] and not original.meta[META].get("retried")


def test_slowdown_off() -> None:
    p, parking, _ = slowing(RERP_SLOWDOWN=False)
    assert not p.slowdown and not p.cool_down(A, 10)
    assert p.admit(A, Request("r")) is None and parking.parked == {}
    # Without a parking lot and a runtime, there is no slow-down either.
    bare = politeness()
    assert not bare.slowdown


# -- slow-downs in a fleet ----------------------------------------------------------------------


class Guard:
    down = False


class FleetStore(Turns):
    """The fleet's side of slow-downs (what fleet/store.py's scripts do), shared by the workers
    built on it; None from every call while ``down``."""

    def __init__(self) -> None:
        super().__init__()
        self.guard = Guard()
        self.until = 0.0
        self.floor = 0.0
        self.version = 0
        self.good = 0
        self.reads = 0

    async def hear(self, heard: Callable[[str, str, float, int], None]) -> None:
        await asyncio.Event().wait()  # what the others write is read here, or told by tests

    async def read(self, origin: str) -> tuple[float, float, int] | None:
        self.reads += 1
        if self.guard.down:
            return None
        return max(0.0, self.until - time.monotonic()), self.floor, self.version

    async def cool_down(self, origin: str, seconds: float) -> float | None:
        if self.guard.down:
            return None
        self.until = max(self.until, time.monotonic() + seconds)
        return self.until - time.monotonic()

    async def raise_floor(
        self, origin: str, sent_ago: float, start: float, maximum: float, own: float
    ) -> tuple[float, int, bool] | None:
        if self.guard.down:
            return None
        self.floor = min(2 * self.floor if self.floor else max(start, 2 * own), maximum)
        self.version += 1
        return self.floor, self.version, True

    async def good_answer(
        self, origin: str, sent_ago: float, decay_after: int, own: float
    ) -> tuple[float, int, bool] | None:
        if self.guard.down:
            return None
        self.good += 1
        if self.good < decay_after:
            return self.floor, self.version, False
        self.good, self.floor, self.version = 0, self.floor / 2, self.version + 1
        return self.floor, self.version, True


@scenario
async def test_fleet_workers_share_cool_downs_and_raised_floors() -> None:
    store = FleetStore()
    one, one_runtime = fleet(Parking(), store, RERP_SLOWDOWN=True, RERP_SLOWDOWN_DECAY_AFTER=2)
    two, two_runtime = fleet(Parking(), store, RERP_SLOWDOWN=True, RERP_SLOWDOWN_DECAY_AFTER=2)
    # Every request reads the fleet's slow-down first: nothing yet.
    admitted = two.admit(A, Request("first"))
    assert admitted is not None and not isinstance(admitted, str) and admitted is not PARKED
    assert await admitted is None  # type: ignore[misc]
    assert store.reads == 1
    # One worker hears a cool-down: the other's next request, and what waits in its slot, wait.
    waiting = Request("queued in two's slot")
    two.throttle.queued = [(A, waiting)]  # type: ignore[union-attr]
    one.slow_answer(A, answer(429, 0.3), sent())
    await asyncio.sleep(0.01)  # written to the fleet (its own timer runs on)
    later = Request("later")
    assert await two.admit(A, later) is PARKED  # type: ignore[misc]
    assert two.parking.parked[two.cool_key(A)] == [waiting, later]  # type: ignore[attr-defined]
    assert two.stats.values["robotstxt/slowdown/fleet_cooldowns"] == 1
    assert 0.2 < (two.cooling(A) or 0) <= 0.3
    # A raised floor: one worker's raise becomes the other's floor, and its turns apply it.
    store.until = 0.0
    await asyncio.sleep(0.3)
    one.slow_answer(B, answer(429), sent())
    await asyncio.sleep(0.02)  # told to the fleet
    assert one.floor_of(B) == 0.5
    taking = two.admit(B, Request("on B"))
    assert await taking is None  # type: ignore[misc]
    assert two.floor_of(B) == 0.5 and store.taken == 1  # it took B's turn
    # Good answers are counted on Redis: two of them, from either worker, halve it.
    one.good_answer(B, sent())
    two.good_answer(B, sent())
    await asyncio.sleep(0.02)  # counted on the fleet (the listener runs on: no settle)
    assert store.floor == 0.25 and two.floor_of(B) == 0.25
    # What another worker publishes: heard at once (requests queued in a slot come out).
    queued = Request("queued for C")
    two.throttle.queued = [(C, queued)]  # type: ignore[union-attr]
    two._fleet_said("cool", C, 0.3, 0)
    two._fleet_said("floor", B, 2.0, store.version + 1)
    assert two.parking.parked[two.cool_key(C)] == [queued]  # type: ignore[attr-defined]
    assert two.admit(C, Request("later")) is PARKED and two.floor_of(B) == 2.0
    one.stop()
    two.stop()
    await one_runtime.settle()
    await two_runtime.settle()


@scenario
async def test_fleet_worker_alone_while_redis_is_down() -> None:
    store = FleetStore()
    store.guard.down = True
    p, runtime = fleet(Parking(), store, RERP_SLOWDOWN=True, RERP_SLOWDOWN_DECAY_AFTER=1)
    assert await p.admit(A, Request("r")) is None  # type: ignore[misc]
    p.slow_answer(A, answer(429, 0.2), sent())
    p.slow_answer(B, answer(429), sent())
    await asyncio.sleep(0.01)  # the fleet could not be told
    assert p.admit(A, Request("waits")) is PARKED  # its own cool-down, known at once
    assert p.floor_of(B) == 0.5
    p.good_answer(B, sent())  # counted here: Redis is down
    assert p.floor_of(B) == 0.25
    p.stop()
    await runtime.settle()
