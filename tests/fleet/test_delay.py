"""A fleet worker's politeness (fleet/delay.py's ``FleetPoliteness``) alone: the origin's
turns and the slow-downs the workers share, with fakes for the slots, the parking lot and Redis
(no crawl). A fleet of worker processes on a real Redis: test_crawls.py."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from scrapy_rerp._politeness import PARKED, TURN_META
from scrapy_rerp._settings import RerpSettings
from scrapy_rerp.engine import parse
from scrapy_rerp.fleet.delay import FleetPoliteness
from tests.support import AsyncioRuntime, Stats
from tests.support.politeness import A, B, C, Parking, Request, Throttle, answer, sent
from tests.support.scenarios import scenario


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
