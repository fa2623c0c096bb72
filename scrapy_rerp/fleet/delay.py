"""Crawl-delay and slow-downs held by a whole fleet: the origin's turn, its cool-down and its
raised floor, on Redis's clock.

Every download of a floored origin (Crawl-delay, Request-rate) takes the origin's turn first.
A turn is taken by the worker about to send (``SET NX PX`` on Redis's clock) and lasts until
that request is answered, then the floor: the next request of any worker reaches the site at
least a floor after the previous one's answer, however late the previous one left its worker.
Two simpler schemes were measured first with ``benchmarks/bench_fleet.py`` (three workers on
two busy cores, Crawl-delay 0.5 s): reserving the next free time ahead and sleeping until then
(a late wake-up let the next worker's request follow 0.31 s after), and a turn of one floor
from the moment it was taken (a request that sat 0.4 s in its busy worker after taking its turn
arrived 0.12 s before the next one).

Slow-downs (``RERP_SLOWDOWN``): a worker that hears one applies it at once (its own requests
stop, or slow down) and writes it to the origin's slow-down hash
(:mod:`scrapy_rerp.fleet.store`): a cool-down only ever ends later, and the raised floor is
doubled or halved there by a script, so that a burst of 429s heard by three workers raises it
once. Before a request is sent, its worker reads that hash: a cool-down parks the request
until the end Redis gave (the worker then takes back its own queued requests of that origin,
too), and a raised floor becomes the worker's floor for the origin, which its turns make the
fleet's. Every change is also published, and each worker listens: a cool-down heard by one
worker reaches the others' requests already admitted and waiting in their download slots, which
no read before sending could stop. Good answers are counted on Redis for the origins with a
raised floor only.

Redis down: no turn is taken, the worker's local floor, cool-downs and raised floors alone
apply (:mod:`scrapy_rerp.fleet.guard`). Stats: ``robotstxt/redis/turns`` (turns taken),
``robotstxt/slowdown/fleet_cooldowns`` (cool-downs a worker learned from the fleet).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from scrapy_rerp._politeness import PARKED, TURN_META, Admission, Parking, Politeness, Throttle
from scrapy_rerp._slowdown import COOL_DOWN, FLOOR_GONE, META, SlowAnswer
from scrapy_rerp.fleet.store import RedisUnavailable

if TYPE_CHECKING:
    from scrapy_rerp._runtime import Runtime, Task
    from scrapy_rerp._settings import RerpSettings
    from scrapy_rerp.cache import SharedOriginCache
    from scrapy_rerp.engine import RobotsTxt
    from scrapy_rerp.fleet.guard import RedisGuard

__all__ = ["TURN_HOLD", "FleetPoliteness", "SharedDelay"]

logger = logging.getLogger("scrapy_rerp.middleware")

STAT_FLEET_COOLDOWNS = "robotstxt/slowdown/fleet_cooldowns"

#: Seconds before listening again for the fleet's slow-downs after the connection failed.
LISTEN_RETRY = 1.0

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

    # -- slow-downs ----------------------------------------------------------------------------
    async def hear(self, heard: Callable[[str, str, float, int], None]) -> None:
        """Hear the other workers' slow-downs as they are written (``heard(kind, origin,
        seconds, version)``), listening again after a pause when Redis goes away, until
        cancelled (the guard's calls tell Redis's health; this says nothing of it)."""
        while True:
            try:
                await self.store.listen(heard)
            except RedisUnavailable:
                await self._sleep(LISTEN_RETRY)

    async def read(self, origin: str) -> tuple[float, float, int] | None:
        """The fleet's cool-down (seconds left) and raised floor (and its version) of
        ``origin``; None when Redis is down."""
        ok, answer = await self.guard.call(lambda: self.store.slowdown(origin))
        return answer if ok else None

    async def cool_down(self, origin: str, seconds: float) -> float | None:
        """Write a cool-down of ``origin``: the seconds it has left (a longer one may run
        already); None when Redis is down."""
        ok, answer = await self.guard.call(lambda: self.store.cool_down(origin, seconds))
        return answer[0] if ok and answer is not None else None

    async def raise_floor(
        self, origin: str, sent_ago: float, start: float, maximum: float, own: float
    ) -> tuple[float, int, bool] | None:
        ok, answer = await self.guard.call(
            lambda: self.store.raise_floor(origin, sent_ago, start, maximum, own)
        )
        return answer if ok else None

    async def good_answer(
        self, origin: str, sent_ago: float, decay_after: int, own: float
    ) -> tuple[float, int, bool] | None:
        ok, answer = await self.guard.call(
            lambda: self.store.good_answer(origin, sent_ago, decay_after, own, FLOOR_GONE)
        )
        return answer if ok else None

    async def first_turn(self, origin: str, delay: float) -> None:
        """The robots.txt answer just arrived: it is the origin's first request on the fleet's
        clock, so the first page waits ``delay`` after it."""
        # A turn held for just the floor: the answer is already in.
        await self.guard.call(lambda: self.store.take_turn(origin, delay, delay))


class FleetPoliteness(Politeness):
    """A fleet worker's politeness: its local floors and cool-downs, and the fleet's on top.

    Per floored origin, one request (the head) waits in ``process_request`` until it gets the
    origin's turn, holding one of the worker's ``CONCURRENT_REQUESTS`` meanwhile; the others are
    parked (no concurrency held) and released one by one as the head goes. The worker's local
    floor on its slot still applies on top, and alone while Redis is down. With slow-downs on,
    every request first reads the origin's slow-down hash (one Redis call).
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
        parking: Parking,
        runtime: Runtime,
        shared: SharedDelay,
        spider: Callable[[], Any] = lambda: None,
    ) -> None:
        super().__init__(settings, download_delay, throttle, stats, parking, runtime, spider)
        self.shared = shared
        self._busy: set[str] = set()
        self._parked: set[str] = set()  # origins with requests parked here
        self._kicker: Task | None = None
        self._listener: Task | None = None

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
        admitted = super().admit(origin, request)  # a cool-down known here
        if admitted is not None:
            return admitted
        if self.slowdown:
            if self._listener is None and not self._stopped:
                # Started with the crawl's first request: the event loop runs by then.
                self._listener = self.runtime.spawn(self.shared.hear(self._fleet_said), _report)
            return self._admit_shared(origin, request)
        return self._take_turn(origin, request)

    async def _admit_shared(self, origin: str, request: Any) -> None | object | str:
        """Read what the fleet knows of ``origin``'s slow-down, then the turn, if any."""
        await self._read(origin)
        admitted = super().admit(origin, request)  # the fleet's cool-down, known here now
        if admitted is not None:
            return admitted  # type: ignore[return-value]
        turn = self._take_turn(origin, request)
        if turn is None or turn is PARKED or isinstance(turn, str):
            return turn
        return await turn  # type: ignore[misc]

    def _take_turn(self, origin: str, request: Any) -> Admission:
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

    # -- slow-downs shared ----------------------------------------------------------------------
    async def _read(self, origin: str) -> None:
        shared = await self.shared.read(origin)
        if shared is None:
            return  # Redis down: this worker's own knowledge
        left, floor, version = shared
        if left > 0:
            self._fleet_said("cool", origin, left, 0)
        self._take_floor(origin, floor, version, newer_only=True)

    def _apply_floor(self, origin: str) -> None:
        had_floor = self.floor_of(origin) is not None
        super()._apply_floor(origin)
        if had_floor or self.floor_of(origin) is None:
            return
        # From now on each request of the origin takes the fleet's turn. Those this worker
        # admitted without one, waiting in its download slots, would go at its own pace: they
        # are taken back and sent through the scheduler again, to take their turns.
        assert self.throttle is not None
        key = f"{origin} (turns begin)"
        if self.throttle.take_back(origin, lambda request: self.parking.park(key, request) is None):
            self.parking.release(key)

    def _fleet_said(self, kind: str, origin: str, seconds: float, version: int) -> None:
        """Another worker wrote a slow-down of ``origin``."""
        if kind == "cool":
            running = self.cooling(origin)
            if self.cool_down(origin, seconds) and running is None:
                self.stats.inc_value(STAT_FLEET_COOLDOWNS)
                logger.debug(
                    "Slow down: the fleet keeps %(origin)s in a cool-down for %(left).3g s",
                    {"origin": origin, "left": seconds},
                    extra={"spider": self._spider()},
                )
        elif kind == "floor":
            self._take_floor(origin, seconds, version, newer_only=True)

    def _take_floor(self, origin: str, floor: float, version: int, newer_only: bool) -> None:
        """Make the fleet's raised floor of ``origin`` this worker's (a read gives way to a
        change this worker has just made and not heard back about: same version)."""
        if self.backoff.sync(origin, floor, version, time.monotonic(), newer_only):
            self._apply_floor(origin)

    def slow_answer(self, origin: str, answer: SlowAnswer, meta: dict[str, Any]) -> None:
        # At once here (nothing more leaves this worker meanwhile), then for the fleet.
        super().slow_answer(origin, answer, meta)
        decision = meta[META]
        if decision["decision"] == COOL_DOWN:
            self.runtime.spawn(self._share_cool_down(origin, decision["wait"]), _report)
        else:
            sent_ago = _latency(meta)
            self.runtime.spawn(self._share_raise(origin, sent_ago), _report)

    async def _share_cool_down(self, origin: str, seconds: float) -> None:
        left = await self.shared.cool_down(origin, seconds)
        if left is not None:
            # Ends here no sooner than on Redis's clock (or than a longer one another worker
            # heard), so this worker never finds it running still when its own ends.
            self.cool_down(origin, left)

    async def _share_raise(self, origin: str, sent_ago: float) -> None:
        settings = self.settings
        shared = await self.shared.raise_floor(
            origin,
            sent_ago,
            settings.slowdown_start_floor,
            settings.slowdown_max_floor,
            self._own_floor(origin),
        )
        if shared is not None:
            floor, version, _ = shared
            self._take_floor(origin, floor, version, newer_only=False)

    def good_answer(self, origin: str, meta: dict[str, Any]) -> None:
        if self.shared.guard.down:
            super().good_answer(origin, meta)
            return
        self.runtime.spawn(self._share_good(origin, meta, _latency(meta)), _report)

    async def _share_good(self, origin: str, meta: dict[str, Any], sent_ago: float) -> None:
        shared = await self.shared.good_answer(
            origin, sent_ago, self.settings.slowdown_decay_after, self._own_floor(origin)
        )
        if shared is None:
            Politeness.good_answer(self, origin, meta)  # Redis failed: counted here alone
            return
        floor, version, changed = shared
        self._take_floor(origin, floor, version, newer_only=False)
        if changed:
            self._floor_decayed(origin, floor)

    # -- turns ---------------------------------------------------------------------------------
    def answered(self, meta: dict[str, Any]) -> None:
        turn = meta.pop(TURN_META, None)
        if turn is not None:
            origin, floor, turn_id = turn
            # The next turn comes a floor after this answer: the floor now, if it was raised
            # meanwhile (by this very answer, say).
            floor = max(floor, self.floor_of(origin) or 0.0)
            self.runtime.spawn(self.shared.turn_done(origin, floor, turn_id), _report)

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
        super().stop()
        for task in (self._kicker, self._listener):
            if task is not None:
                task.cancel()
        self._kicker = self._listener = None


def _latency(meta: dict[str, Any]) -> float:
    """Seconds since the request of ``meta`` left (Scrapy's ``download_latency``), about."""
    latency = meta.get("download_latency")
    return float(latency) if isinstance(latency, (int, float)) else 0.0


def _report(error: BaseException | None) -> None:
    # Redis failures are the guard's (logged and counted): anything else is a bug, told.
    if error is not None:
        logger.error("A fleet politeness task failed", exc_info=error)
