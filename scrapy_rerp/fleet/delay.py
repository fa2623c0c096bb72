"""Crawl-delay held by a whole fleet: the origin's turn, on Redis's clock.

Every download of a floored origin (Crawl-delay, Request-rate) takes the origin's turn first.
A turn is taken by the worker about to send (``SET NX PX`` on Redis's clock) and lasts until
that request is answered, then the floor: the next request of any worker reaches the site at
least a floor after the previous one's answer, however late the previous one left its worker.
Two simpler schemes were measured first with ``benchmarks/bench_fleet.py`` (three workers on
two busy cores, Crawl-delay 0.5 s): reserving the next free time ahead and sleeping until then
(a late wake-up let the next worker's request follow 0.31 s after), and a turn of one floor
from the moment it was taken (a request that sat 0.4 s in its busy worker after taking its turn
arrived 0.12 s before the next one).

Redis down: no turn is taken, the worker's local floor alone applies
(:mod:`scrapy_rerp.fleet.guard`). Stat: ``robotstxt/redis/turns`` (turns taken).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from scrapy_rerp._politeness import PARKED, TURN_META, Admission, Parking, Politeness, Throttle

if TYPE_CHECKING:
    from scrapy_rerp._runtime import Runtime, Task
    from scrapy_rerp._settings import RerpSettings
    from scrapy_rerp.cache import SharedOriginCache
    from scrapy_rerp.engine import RobotsTxt
    from scrapy_rerp.fleet.guard import RedisGuard

__all__ = ["TURN_HOLD", "FleetPoliteness", "SharedDelay"]

#: A turn lasts until its request is answered, then the floor: at most this many floors if the
#: answer never comes (a failed download), so that a lost worker blocks no origin for long.
TURN_HOLD = 2.0


class SharedDelay:
    """One worker's side of the fleet's Crawl-delay turns."""

    def __init__(
        self,
        store: SharedOriginCache,
        guard: RedisGuard,
        stats: Any,
        sleep: Callable[[float], Awaitable[Any]],
    ) -> None:
        self.store = store
        self.guard = guard
        self.stats = stats
        self._sleep = sleep

    async def wait_for_turn(self, origin: str, delay: float) -> bytes | None:
        """Wait until this worker holds the turn of ``origin``: returns the turn's id, to be
        ended with :meth:`turn_done` when the request is answered, or None when Redis is down
        (the local floor alone applies)."""
        while True:
            ok, answer = await self.guard.call(
                lambda: self.store.take_turn(origin, delay, TURN_HOLD * delay)
            )
            if not ok or answer is None:
                return None
            wait, turn = answer
            if not wait:
                self.stats.inc_value("robotstxt/redis/turns")
                return turn
            if wait > delay:
                # The holder's request is not answered yet; once it is, the turn ends a floor
                # later: look again soon rather than at the longest the turn may last.
                wait = min(wait - delay, max(0.02, delay / 10))
            await self._sleep(wait)

    async def turn_done(self, origin: str, delay: float, turn: bytes) -> None:
        """The request of ``turn`` was answered: the next turn comes ``delay`` from now."""
        await self.guard.call(lambda: self.store.turn_done(origin, delay, turn))

    async def first_turn(self, origin: str, delay: float) -> None:
        """The robots.txt answer just arrived: it is the origin's first request on the fleet's
        clock, so the first page waits ``delay`` after it."""
        # A turn held for just the floor: the answer is already in.
        await self.guard.call(lambda: self.store.take_turn(origin, delay, delay))


class FleetPoliteness(Politeness):
    """A fleet worker's politeness: its local floors, and the fleet's turns on top.

    Per floored origin, one request (the head) waits in ``process_request`` until it gets the
    origin's turn, holding one of the worker's ``CONCURRENT_REQUESTS`` meanwhile; the others are
    parked (no concurrency held) and released one by one as the head goes. The worker's local
    floor on its slot still applies on top, and alone while Redis is down.
    """

    #: Seconds between looks for parked requests whose origin has no request waiting for its
    #: turn in this worker (see :meth:`_kick`).
    KICK_INTERVAL = 0.5

    def __init__(
        self,
        settings: RerpSettings,
        download_delay: float,
        throttle: Throttle | None,
        stats: Any,
        shared: SharedDelay,
        parking: Parking,
        runtime: Runtime,
        spider: Callable[[], Any] = lambda: None,
    ) -> None:
        super().__init__(settings, download_delay, throttle, stats, spider)
        self.shared = shared
        self.parking = parking
        self.runtime = runtime
        self._busy: set[str] = set()
        self._parked: set[str] = set()  # origins with requests parked here
        self._kicker: Task | None = None

    @staticmethod
    def key(origin: str) -> str:
        """The parking key of requests waiting for ``origin``'s turn."""
        return f"{origin} (Crawl-delay)"

    async def before_sharing(self, origin: str, robots: RobotsTxt | None, user_agent: str) -> None:
        floor = None if robots is None else self.floor_for(robots, user_agent)
        if floor is not None:
            # The robots.txt answer takes a turn on the fleet's clock, so that no worker's
            # first page follows it sooner than the floor.
            await self.shared.first_turn(origin, floor)

    def admit(self, origin: str, request: Any) -> Admission:
        floor = self.floor_of(origin)
        if floor is None:
            return None
        if origin in self._busy:
            if self.parking.park(self.key(origin), request) is not None:
                return f"too many requests wait for the Crawl-delay of {origin}"
            self._parked.add(origin)
            if self._kicker is None:
                self._kicker = self.runtime.every(self.KICK_INTERVAL, self._kick)
            return PARKED
        self._busy.add(origin)
        return self._wait_turn(origin, request, floor)

    async def _wait_turn(self, origin: str, request: Any, floor: float) -> None:
        try:
            turn = await self.shared.wait_for_turn(origin, floor)
            if turn is not None:
                request.meta[TURN_META] = (origin, floor, turn)
        finally:
            self._busy.discard(origin)
            self.parking.release_one(self.key(origin))

    def answered(self, meta: dict[str, Any]) -> None:
        turn = meta.pop(TURN_META, None)
        if turn is not None:
            origin, floor, turn_id = turn
            self.runtime.spawn(self.shared.turn_done(origin, floor, turn_id), _ignore)

    def _kick(self) -> None:
        """Release one parked request of each origin that has no request waiting for its turn
        here. A request released when a turn ends goes back through the scheduler, and in a
        fleet the shared queue may hand it to another worker: the requests still parked here
        would then wait for a turn that never comes."""
        for origin in list(self._parked):
            if not self.parking.count(self.key(origin)):
                self._parked.discard(origin)
            elif origin not in self._busy:
                self.parking.release_one(self.key(origin))

    def stop(self) -> None:
        if self._kicker is not None:
            self._kicker.cancel()
        self._kicker = None


def _ignore(error: BaseException | None) -> None:
    # Ending a turn fails only with Redis, which the guard logs and counts.
    pass
