"""A fleet worker's politeness (its local controller given fleet/delay.py's
``FleetCoordination``) alone: the origin's turns and the slow-downs the workers share, with
fakes for the slots, the parking lot and Redis (no crawl). A fleet of worker processes on a
real Redis: test_crawls.py."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from scrapy_rerp.core.admission import GO, PARKED, Admission, refused
from scrapy_rerp.core.cool_downs import CoolDowns
from scrapy_rerp.core.politeness import Politeness
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.engine import parse
from scrapy_rerp.fleet.delay import STOP_LOOK, TURN_META, FleetCoordination, SharedDelay
from scrapy_rerp.fleet.guard import RedisGuard
from scrapy_rerp.fleet.store import RedisOriginCache
from tests.support import AsyncioRuntime, Stats
from tests.support.politeness import A, B, C, Parking, Request, Throttle, answer, sent
from tests.support.redis import RedisServer
from tests.support.scenarios import scenario


class Turns:
    """The fleet's turns, one at a time, each held until its request is answered."""

    def __init__(self) -> None:
        self.holder: Any = None
        self.done: list[bytes] = []
        self.first: list[tuple[str, float]] = []
        self.given_back: list[bytes] = []
        self.taken = 0

    async def wait_for_turn(
        self, origin: str, delay: float, wanted: Callable[[], bool] = lambda: True
    ) -> bytes | None:
        while self.holder is not None:
            if not wanted():
                return None
            await asyncio.sleep(0.001)
        self.taken += 1
        self.holder = b"turn-%d" % self.taken
        return self.holder

    async def turn_done(self, origin: str, delay: float, turn: bytes) -> None:
        self.done.append(turn)
        self.holder = None

    async def first_turn(self, origin: str, delay: float) -> None:
        self.first.append((origin, delay))

    async def give_back(self, origin: str, turn: bytes) -> None:
        self.given_back.append(turn)
        self.holder = None


def fleet(parking: Parking, turns: Turns, **settings: Any) -> tuple[Politeness, AsyncioRuntime]:
    """A fleet worker's politeness; its turns alone unless ``RERP_SLOWDOWN`` is given."""
    runtime = AsyncioRuntime()
    rerp = RerpSettings.from_settings({"RERP_SLOWDOWN": False, **settings}, require_obey=False)
    stats = Stats()
    p = Politeness(rerp, 0.0, Throttle(), stats=stats, parking=parking, runtime=runtime)  # type: ignore[arg-type]
    p.coordinate_with(
        FleetCoordination(p, turns, parking, runtime=runtime, settings=rerp, stats=stats)
    )  # type: ignore[arg-type]
    return p, runtime


def coordination(p: Politeness) -> FleetCoordination:
    assert isinstance(p.coordination, FleetCoordination)
    return p.coordination


def waits(admitted: Any) -> bool:
    """The admission is an awaitable: the request waits in place."""
    return not isinstance(admitted, Admission)


@scenario
async def test_fleet_requests_take_the_origin_s_turn_one_at_a_time() -> None:
    parking, turns = Parking(), Turns()
    p, runtime = fleet(parking, turns)
    robots = parse("User-agent: *\nCrawl-delay: 0.5\n")
    await p.before_sharing(A, robots, "Bot")  # the robots.txt answer takes the first turn
    assert turns.first == [(A, 0.5)]
    assert p.admit(B, Request("no floor")) is GO  # an origin without a floor goes on
    p.rules_known(A, robots, "Bot")
    first, second, third = Request("1"), Request("2"), Request("3")
    waiting = p.admit(A, first)
    assert waits(waiting)
    assert p.admit(A, second) is PARKED and p.admit(A, third) is PARKED
    assert await waiting is GO  # type: ignore[misc]
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
    coordination(p).KICK_INTERVAL = 0.01  # type: ignore[misc]
    p.rules_known(A, parse("User-agent: *\nCrawl-delay: 0.5\n"), "Bot")
    turns.holder = b"another worker's"
    head = p.admit(A, Request("head"))
    assert p.admit(A, Request("parked")) is PARKED
    too_many = refused(f"too many requests wait for the Crawl-delay of {A}")
    assert p.admit(A, Request("too many")) == too_many
    turns.holder = None
    await head  # type: ignore[misc]
    assert [r.name for r in parking.released] == ["parked"]
    # A parked request whose origin has no head here (the head went to another worker) is
    # released by the kick.
    parking.park(coordination(p).key(A), Request("orphan"))
    await asyncio.sleep(0.05)
    assert [r.name for r in parking.released] == ["parked", "orphan"]
    p.stop()


@scenario
async def test_the_turn_is_taken_only_when_the_slot_would_send_at_once() -> None:
    """A turn taken for a request that then waits in its slot (AutoThrottle's delay, the
    request before it still on the wire) could end before the request leaves: another worker
    would then send right before it."""
    parking, turns = Parking(), Turns()
    p, runtime = fleet(parking, turns)
    throttle: Any = p.throttle
    p.rules_known(A, parse("User-agent: *\nCrawl-delay: 0.5\n"), "Bot")
    throttle.busy[A] = 0.05  # the slot sends something else for 50 ms more
    head = Request("head")
    waiting = p.admit(A, head)
    assert waits(waiting)
    await asyncio.sleep(0.03)
    assert turns.taken == 0  # no turn while the slot could not send it
    throttle.busy[A] = 0.0
    assert await waiting is GO  # type: ignore[misc]
    assert turns.taken == 1 and head.meta[TURN_META] == (A, 0.5, b"turn-1")
    p.answered(head.meta)
    await runtime.settle()
    # The slot busy again once the turn is had: the turn goes back unused, and is taken again
    # when the slot is free.
    again = Request("again")

    async def busy_once(origin: str, delay: float, wanted: Callable[[], bool]) -> bytes | None:
        turn = await Turns.wait_for_turn(turns, origin, delay, wanted)
        if turns.taken == 2:
            throttle.busy[A] = 0.02
            runtime.spawn(free_later(), lambda error: None)
        return turn

    async def free_later() -> None:
        await asyncio.sleep(0.02)
        throttle.busy[A] = 0.0

    turns.wait_for_turn = busy_once  # type: ignore[method-assign]
    assert await p.admit(A, again) is GO  # type: ignore[misc]
    assert turns.given_back == [b"turn-2"]
    assert again.meta[TURN_META] == (A, 0.5, b"turn-3")
    assert p.stats.values["robotstxt/redis/turns_given_back"] == 1  # type: ignore[attr-defined]
    p.stop()


@scenario
async def test_slow_downs_read_from_the_fleet_are_capped_as_the_worker_s_own() -> None:
    parking, turns = Parking(), Turns()
    p, runtime = fleet(
        parking, turns, RERP_SLOWDOWN=True, RERP_SLOWDOWN_MAX_WAIT=5, RERP_SLOWDOWN_MAX_FLOOR=8
    )
    said = coordination(p)._fleet_said
    said("cool", A, 10.0**9, 0)  # what a hash or a message held: now + 30 years
    assert 4.9 < (p.cooling(A) or 0) <= 5.0
    said("floor", B, float("inf"), 7)
    assert p.floors.floor_of(B) == 8.0
    said("floor", C, 3.0, 8)  # within the cap: as it is
    assert p.floors.floor_of(C) == 3.0
    assert p.stats.values["robotstxt/redis/capped"] == 2  # type: ignore[attr-defined]
    p.stop()
    await runtime.settle()


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

    async def read(
        self, origin: str, max_wait: float, max_floor: float
    ) -> tuple[float, float, int] | None:
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
    assert waits(admitted)
    assert await admitted is GO  # type: ignore[misc]
    assert store.reads == 1
    # One worker hears a cool-down: the other's next request, and what waits in its slot, wait.
    waiting = Request("queued in two's slot")
    two.throttle.queued = [(A, waiting)]  # type: ignore[union-attr]
    one.slow_answer(A, answer(429, 0.3), sent())
    await asyncio.sleep(0.01)  # written to the fleet (its own timer runs on)
    later = Request("later")
    assert await two.admit(A, later) is PARKED  # type: ignore[misc]
    assert two.parking.parked[CoolDowns.key(A)] == [waiting, later]  # type: ignore[attr-defined]
    assert two.stats.values["robotstxt/slowdown/fleet_cooldowns"] == 1
    assert 0.2 < (two.cooling(A) or 0) <= 0.3
    # A raised floor: one worker's raise becomes the other's floor, and its turns apply it.
    store.until = 0.0
    await asyncio.sleep(0.3)
    one.slow_answer(B, answer(429), sent())
    await asyncio.sleep(0.02)  # told to the fleet
    assert one.floors.floor_of(B) == 0.5
    taking = two.admit(B, Request("on B"))
    assert await taking is GO  # type: ignore[misc]
    assert two.floors.floor_of(B) == 0.5 and store.taken == 1  # it took B's turn
    # Good answers are counted on Redis: two of them, from either worker, halve it.
    one.good_answer(B, sent())
    two.good_answer(B, sent())
    await asyncio.sleep(0.02)  # counted on the fleet (the listener runs on: no settle)
    assert store.floor == 0.25 and two.floors.floor_of(B) == 0.25
    # What another worker publishes: heard at once (requests queued in a slot come out).
    queued = Request("queued for C")
    two.throttle.queued = [(C, queued)]  # type: ignore[union-attr]
    coordination(two)._fleet_said("cool", C, 0.3, 0)
    coordination(two)._fleet_said("floor", B, 2.0, store.version + 1)
    assert two.parking.parked[CoolDowns.key(C)] == [queued]  # type: ignore[attr-defined]
    assert two.admit(C, Request("later")) is PARKED and two.floors.floor_of(B) == 2.0
    one.stop()
    two.stop()
    await one_runtime.settle()
    await two_runtime.settle()


@scenario
async def test_fleet_worker_alone_while_redis_is_down() -> None:
    store = FleetStore()
    store.guard.down = True
    p, runtime = fleet(Parking(), store, RERP_SLOWDOWN=True, RERP_SLOWDOWN_DECAY_AFTER=1)
    assert await p.admit(A, Request("r")) is GO  # type: ignore[misc]
    p.slow_answer(A, answer(429, 0.2), sent())
    p.slow_answer(B, answer(429), sent())
    await asyncio.sleep(0.01)  # the fleet could not be told
    assert p.admit(A, Request("waits")) is PARKED  # its own cool-down, known at once
    assert p.floors.floor_of(B) == 0.5
    p.good_answer(B, sent())  # counted here: Redis is down
    assert p.floors.floor_of(B) == 0.25
    p.stop()
    await runtime.settle()


@scenario
async def test_a_turn_awaited_behind_a_long_floor_is_given_up_as_the_crawl_closes(
    redis_server: RedisServer,
) -> None:
    store = RedisOriginCache(redis_server.url, "d", timeout=0.5)
    shared = SharedDelay(store, RedisGuard(store.url, Stats()), stats=Stats(), sleep=asyncio.sleep)
    assert (await store.take_turn(A, 30.0, 30.0))[0] == 0  # another worker's, for 30 s
    closing = False

    async def close_soon() -> None:
        nonlocal closing
        await asyncio.sleep(0.3)
        closing = True

    started = time.monotonic()
    closer = asyncio.ensure_future(close_soon())
    assert await shared.wait_for_turn(A, 30.0, lambda: not closing) is None
    assert time.monotonic() - started < 0.3 + STOP_LOOK + 0.2  # not the 30 s floor
    await closer
    await store.close()
