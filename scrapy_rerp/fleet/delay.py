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

The invariant (docs/fleet.rst): **no request reaches a floored origin sooner than its floor
after the previous request of any worker.** It holds by construction, whatever path a request
took to the downloader (the scheduler, ``redis_key`` start URLs, a retry, a media download, a
request taken back from a slot), because every request of a floored origin passes one gate,
:meth:`FleetCoordination.admit`, and that gate lets one request at a time go, holding the turn,
at the moment it can leave:

* per origin and worker, one request (the head) waits in ``process_request``; the others are
  parked (no concurrency held), and released one by one as the head goes;
* the head waits first until its own download slot would send it at once (the slot's delay,
  AutoThrottle's included, and the request before it answered), then takes the turn: a turn
  is never taken for a request that then sits in a slot, where the turn could end before it
  leaves; should the slot be busy again once the turn is had, the turn is given back unused;
* so a worker's slot holds at most one request of a floored origin, and what it holds has its
  turn: when Redis comes back after an outage there is nothing queued to take back;
* the requests a worker admitted before the origin had a floor are taken back from its slots
  when the floor begins (:meth:`FleetCoordination.floor_began`), and take turns like the rest.

Nothing read from Redis is trusted: a turn or lock key without a TTL (or a longer one) is cut
to one turn's (or the lock timeout's) length by the script that finds it
(:mod:`scrapy_rerp.fleet.store`); a cool-down or raised floor read or heard is capped to
``RERP_SLOWDOWN_MAX_WAIT`` / ``RERP_SLOWDOWN_MAX_FLOOR``, as the worker's own would be; no wait
polls Redis more often than every :data:`TURN_POLL` seconds while a turn is held.

Redis down: no turn is taken, the worker's local floor, cool-downs and raised floors alone
apply (:mod:`scrapy_rerp.fleet.guard`); each turn still tries Redis, so that every worker
takes turns again from its first request after Redis is back. Stats:
``robotstxt/redis/turns`` (turns taken), ``robotstxt/redis/turns_given_back``,
``robotstxt/redis/capped`` (values from Redis beyond the caps),
``robotstxt/slowdown/fleet_cooldowns`` (cool-downs a worker learned from the fleet).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from scrapy_rerp.core import loggers
from scrapy_rerp.core.admission import (
    GO,
    PARKED,
    Admission,
    Admitting,
    ParkingKey,
    Purpose,
    refused,
)
from scrapy_rerp.core.slowdown import COOL_DOWN, FLOOR_GONE, META
from scrapy_rerp.core.wording import duration
from scrapy_rerp.fleet.store import RedisFailure

if TYPE_CHECKING:
    from scrapy_rerp.core.admission import Parking
    from scrapy_rerp.core.politeness import Politeness
    from scrapy_rerp.core.runtime import Runtime, Stats, Task
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.fleet.guard import RedisGuard
    from scrapy_rerp.fleet.store import TurnsAndSlowdowns

__all__ = [
    "STOP_LOOK",
    "TURN_HOLD",
    "TURN_LEEWAY",
    "TURN_META",
    "TURN_POLL",
    "FleetCoordination",
    "SharedDelay",
    "sleep_while",
    "turn_hold",
]

logger = logging.getLogger(loggers.FLEET)

#: Seconds before listening again for the fleet's slow-downs after the connection failed.
LISTEN_RETRY = 1.0

#: A turn lasts until its request is answered (or its download fails), then the floor. If
#: neither is heard (a worker killed, a download that outlasts it), it lasts at most this many
#: floors, or a floor and :data:`TURN_LEEWAY`, whichever is longer (:func:`turn_hold`), so that
#: a lost worker blocks no origin for long.
TURN_HOLD = 2.0

#: Seconds a turn covers beyond its floor, at least, before its request's answer is heard: a
#: worker starved of CPU between taking its turn and its request leaving (a loaded host, a long
#: garbage collection) still holds the turn when the request reaches the site. Two floors alone
#: (0.4 s for a Crawl-delay of 0.2 s) once let another worker's request follow it by 6 ms.
TURN_LEEWAY = 3.0

#: Seconds between two looks at a turn whose request is not answered yet (the turn's end is
#: then unknown): Redis is asked at most this often per waiting origin.
TURN_POLL = 0.1

#: Seconds between looks, while a turn is awaited, at whether the crawl closes.
STOP_LOOK = 0.25

#: Seconds a closing worker waits, at most, for the ends of its last turns to reach Redis.
FINISH_WITHIN = 3.0

#: ``request.meta`` key of a request that holds its origin's turn: (origin, floor, turn id).
TURN_META = "_rerp_turn"


class SharedDelay:
    """One worker's side of the fleet's Crawl-delay turns."""

    def __init__(
        self,
        store: TurnsAndSlowdowns,
        guard: RedisGuard,
        *,
        stats: Stats,
        sleep: Callable[[float], Awaitable[Any]],
    ) -> None:
        self.store = store
        self.guard = guard
        self.stats = stats
        self._sleep = sleep

    async def wait_for_turn(
        self, origin: str, delay: float, wanted: Callable[[], bool] = lambda: True
    ) -> bytes | None:
        """Wait until this worker holds the turn of ``origin``: returns the turn's id, to be
        ended with :meth:`turn_done` when the request is answered, or None when Redis is down
        (the local floor alone applies) or once ``wanted()`` is false (the crawl closes)."""
        while wanted():
            # Tried even while Redis is down: a worker that sent alone after Redis came back
            # would send beside the fleet's turns (one gap under the floor per restart, not
            # one per worker).
            ok, answer = await self.guard.call(
                lambda: self.store.take_turn(origin, delay, turn_hold(delay)),
                even_when_down=True,
            )
            if not ok or answer is None:
                return None
            wait, turn = answer
            if not wait:
                self.stats.inc_value("robotstxt/redis/turns")
                return turn
            if wait > delay:
                # The holder's request is not answered yet; once it is, the turn ends a floor
                # later: look again soon rather than at the longest the turn may last (a wait
                # of at most a floor is the turn's exact end, slept at once).
                wait = min(wait - delay, max(TURN_POLL, delay / 4))
            await sleep_while(self._sleep, wait, wanted)
        return None

    async def turn_done(self, origin: str, delay: float, turn: bytes) -> None:
        """The request of ``turn`` was answered: the next turn comes ``delay`` from now."""
        # Told even while the guard holds calls back: a lost end holds the fleet the turn's longest.
        await self.guard.call(
            lambda: self.store.turn_done(origin, delay, turn), even_when_down=True
        )

    async def give_back(self, origin: str, turn: bytes) -> None:
        """``turn`` was not used (nothing was sent): the next may be taken at once."""
        await self.guard.call(lambda: self.store.turn_done(origin, 0.0, turn), even_when_down=True)

    # -- slow-downs ----------------------------------------------------------------------------
    async def hear(self, heard: Callable[[str, str, float, int], None]) -> None:
        """Hear the other workers' slow-downs as they are written (``heard(kind, origin,
        seconds, version)``), listening again after a pause when Redis goes away, until
        cancelled (the guard's calls tell Redis's health; this says nothing of it)."""
        while True:
            try:
                await self.store.listen(heard)
            except RedisFailure:
                await self._sleep(LISTEN_RETRY)

    async def read(
        self, origin: str, max_wait: float, max_floor: float
    ) -> tuple[float, float, int] | None:
        """The fleet's cool-down (seconds left) and raised floor (and its version) of
        ``origin``, within ``max_wait`` and ``max_floor``; None when Redis is down."""
        ok, answer = await self.guard.call(lambda: self.store.slowdown(origin, max_wait, max_floor))
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


class FleetCoordination:
    """A fleet worker's side of politeness, given to its local controller
    (:class:`~scrapy_rerp.core.politeness.Politeness`, whose parts keep its floors and cool-downs):
    the origin's turn for each request of a floored origin, and the slow-downs shared.

    With slow-downs on, every request first reads the origin's slow-down hash (one Redis
    call). See the module's docstring for how the turn is taken.
    """

    #: Seconds between looks for parked requests whose origin has no request waiting for its
    #: turn in this worker (see :meth:`_kick`).
    KICK_INTERVAL = 0.5

    def __init__(
        self,
        local: Politeness,
        shared: SharedDelay,
        parking: Parking,
        *,
        runtime: Runtime,
        settings: RerpSettings,
        stats: Stats,
        spider: Callable[[], Any] = lambda: None,
    ) -> None:
        self.local = local
        self.shared = shared
        self.parking = parking
        self.runtime = runtime
        self.settings = settings
        self.stats = stats
        self._spider = spider
        self._busy: set[str] = set()  # origins whose head waits here
        self._parked: set[str] = set()  # origins with requests parked here
        self._kicker: Task | None = None
        self._listener: Task | None = None
        self._ending = 0  # turns whose end is being told to Redis

    @staticmethod
    def key(origin: str) -> ParkingKey:
        """The parking key of requests waiting for ``origin``'s turn."""
        return ParkingKey(origin, Purpose.CRAWL_DELAY)

    async def before_sharing(self, origin: str, floor: float | None) -> None:
        if floor is not None:
            # The robots.txt answer takes a turn on the fleet's clock, so that no worker's
            # first page follows it sooner than the floor.
            await self.shared.first_turn(origin, floor)

    # -- every request -------------------------------------------------------------------------
    def admit(self, origin: str, request: Any) -> Admitting:
        if self.local.slowdown:
            if self._listener is None and not self.local.stopped:
                # Started with the crawl's first request: the event loop runs by then.
                self._listener = self.runtime.spawn(self.shared.hear(self._fleet_said), _report)
            return self._admit_shared(origin, request)
        return self._take_turn(origin, request)

    async def _admit_shared(self, origin: str, request: Any) -> Admission:
        """Read what the fleet knows of ``origin``'s slow-down, then the turn, if any."""
        await self._read(origin)
        cooling = self.local.admit_cooling(origin, request)  # the fleet's, known here now
        if cooling is not None:
            return cooling
        turn = self._take_turn(origin, request)
        return turn if isinstance(turn, Admission) else await turn

    def _take_turn(self, origin: str, request: Any) -> Admitting:
        if self.local.floors.floor_of(origin) is None:
            return GO
        if origin in self._busy:
            return self._park(origin, request)
        self._busy.add(origin)
        return self._wait_turn(origin, request)

    def _park(self, origin: str, request: Any) -> Admission:
        """Park ``request`` until the head of ``origin`` has gone."""
        if self.parking.park(self.key(origin), request) is not None:
            if self.local.stopped:
                return refused("crawl closing")
            return refused(f"too many requests wait for the Crawl-delay of {origin}")
        self._parked.add(origin)
        if self._kicker is None and not self.local.stopped:
            self._kicker = self.runtime.every(self.KICK_INTERVAL, self._kick)
        return PARKED

    async def _wait_turn(self, origin: str, request: Any) -> Admission:
        try:
            while True:
                await self._until_ready(origin)
                floor = self.local.floors.floor_of(origin)
                if floor is None:
                    return GO  # the floor went meanwhile
                if self.local.stopped:
                    # Parked as the crawl closes: kept or dropped, and counted, with the rest.
                    return self._park(origin, request)
                turn = await self.shared.wait_for_turn(
                    origin, floor, lambda: not self.local.stopped
                )
                if self.local.stopped:
                    # The crawl began to close while the turn was awaited: a request let go
                    # now may never leave, and its turn would hold the fleet for its longest.
                    if turn is not None:
                        await self.shared.give_back(origin, turn)
                    return self._park(origin, request)
                if turn is None:
                    return GO  # Redis down: the local floor alone
                if self._ready_in(origin) <= 0:
                    request.meta[TURN_META] = (origin, floor, turn)
                    return GO
                # The slot got busy while the turn was awaited (another origin of its host, a
                # delay raised): the turn would end before the request left. Given back unused.
                self.stats.inc_value("robotstxt/redis/turns_given_back")
                await self.shared.give_back(origin, turn)
        finally:
            self._busy.discard(origin)
            self.parking.release_one(self.key(origin))

    def _ready_in(self, origin: str) -> float:
        throttle = self.local.throttle
        return 0.0 if throttle is None else throttle.ready_in(origin)

    async def _until_ready(self, origin: str) -> None:
        """Wait until a request of ``origin`` admitted now would leave its slot at once."""
        while (wait := self._ready_in(origin)) > 0 and not self.local.stopped:
            await sleep_while(self.runtime.sleep, wait, lambda: not self.local.stopped)

    def floor_began(self, origin: str) -> None:
        # From now on each request of the origin takes the fleet's turn. Those this worker
        # admitted without one, waiting in its download slots, would go at its own pace: they
        # are taken back and sent through the scheduler again, to take their turns.
        throttle = self.local.throttle
        assert throttle is not None
        key = ParkingKey(origin, Purpose.TURNS_BEGIN)
        if throttle.take_back(origin, lambda request: self.parking.park(key, request) is None):
            self.parking.release(key)

    # -- slow-downs shared ----------------------------------------------------------------------
    async def _read(self, origin: str) -> None:
        shared = await self.shared.read(
            origin, self.settings.slowdown_max_wait, self.settings.slowdown_max_floor
        )
        if shared is None:
            return  # Redis down: this worker's own knowledge
        left, floor, version = shared
        if left > 0:
            self._fleet_said("cool", origin, left, 0)
        self._take_floor(origin, floor, version, newer_only=True)

    def _fleet_said(self, kind: str, origin: str, seconds: float, version: int) -> None:
        """Another worker wrote a slow-down of ``origin`` (read, or heard on the channel)."""
        if kind == "cool":
            seconds = self._capped(seconds, self.settings.slowdown_max_wait)
            running = self.local.cooling(origin)
            if self.local.cool_down(origin, seconds) and running is None:
                self.stats.inc_value("robotstxt/slowdown/fleet_cooldowns")
                logger.debug(
                    "Slow down: the fleet keeps %(origin)s in a cool-down for %(left)s",
                    {"origin": origin, "left": duration(seconds)},
                    extra={"spider": self._spider()},
                )
        elif kind == "floor":
            self._take_floor(origin, seconds, version, newer_only=True)

    def _take_floor(self, origin: str, floor: float, version: int, newer_only: bool) -> None:
        floor = self._capped(floor, self.settings.slowdown_max_floor)
        self.local.floors.sync(origin, floor, version, newer_only)

    def _capped(self, seconds: float, cap: float) -> float:
        """A duration read from Redis, within this worker's own cap (counted when beyond)."""
        if not seconds <= cap:  # NaN too
            self.stats.inc_value("robotstxt/redis/capped")
            return cap
        return max(0.0, seconds)

    def slow_answer(self, origin: str, meta: dict[str, Any]) -> None:
        # Applied here at once (nothing more leaves this worker meanwhile); now for the fleet.
        decision = meta[META]
        if decision["decision"] == COOL_DOWN:
            self.runtime.spawn(self._share_cool_down(origin, decision["wait"]), _report)
        else:
            self.runtime.spawn(self._share_raise(origin, _latency(meta)), _report)

    async def _share_cool_down(self, origin: str, seconds: float) -> None:
        left = await self.shared.cool_down(origin, seconds)
        if left is not None:
            # Ends here no sooner than on Redis's clock (or than a longer one another worker
            # heard), so this worker never finds it running still when its own ends.
            self.local.cool_down(origin, self._capped(left, self.settings.slowdown_max_wait))

    async def _share_raise(self, origin: str, sent_ago: float) -> None:
        shared = await self.shared.raise_floor(
            origin,
            sent_ago,
            self.settings.slowdown_start_floor,
            self.settings.slowdown_max_floor,
            self.local.floors.own_floor(origin),
        )
        if shared is not None:
            floor, version, _ = shared
            self._take_floor(origin, floor, version, newer_only=False)

    def good_answer(self, origin: str, meta: dict[str, Any]) -> bool:
        if self.shared.guard.down:
            return False  # counted here
        self.runtime.spawn(self._share_good(origin, meta, _latency(meta)), _report)
        return True

    async def _share_good(self, origin: str, meta: dict[str, Any], sent_ago: float) -> None:
        shared = await self.shared.good_answer(
            origin,
            sent_ago,
            self.settings.slowdown_decay_after,
            self.local.floors.own_floor(origin),
        )
        if shared is None:
            self.local.floors.good_answer(origin, meta)  # Redis failed: counted here alone
            return
        floor, version, changed = shared
        self._take_floor(origin, floor, version, newer_only=False)
        if changed:
            self.local.floors.decayed(origin, floor)

    # -- turns ---------------------------------------------------------------------------------
    def answered(self, meta: dict[str, Any]) -> None:
        turn = meta.pop(TURN_META, None)
        if turn is not None:
            origin, floor, turn_id = turn
            # The next turn comes a floor after this answer: the floor now, if it was raised
            # meanwhile (by this very answer, say).
            floor = max(floor, self.local.floors.floor_of(origin) or 0.0)
            self._ending += 1
            self.runtime.spawn(self._end_turn(origin, floor, turn_id), _report)

    async def _end_turn(self, origin: str, floor: float, turn: bytes) -> None:
        try:
            await self.shared.turn_done(origin, floor, turn)
        finally:
            self._ending -= 1

    async def finish(self) -> None:
        # A worker that closes right after its last answer (or failure) would otherwise close
        # its connection before the turn's end reached Redis: the others would wait for the
        # turn's longest instead of one floor.
        deadline = time.monotonic() + FINISH_WITHIN
        while self._ending and time.monotonic() < deadline:
            await self.runtime.sleep(0.01)

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
        for task in (self._kicker, self._listener):
            if task is not None:
                task.cancel()
        self._kicker = self._listener = None


def turn_hold(floor: float) -> float:
    """The longest a turn of an origin with ``floor`` lasts when its request's answer is not
    heard: two floors, or a floor and :data:`TURN_LEEWAY`, whichever is longer."""
    return max(TURN_HOLD * floor, floor + TURN_LEEWAY)


async def sleep_while(
    sleep: Callable[[float], Awaitable[Any]], seconds: float, wanted: Callable[[], bool]
) -> None:
    """Sleep ``seconds``, or less once ``wanted()`` is false (looked at every
    :data:`STOP_LOOK` seconds): a closing crawl does not wait out a long floor."""
    deadline = time.monotonic() + seconds
    while wanted() and (left := deadline - time.monotonic()) > 0:
        await sleep(min(left, STOP_LOOK))


def _latency(meta: dict[str, Any]) -> float:
    """Seconds since the request of ``meta`` left (Scrapy's ``download_latency``), about."""
    latency = meta.get("download_latency")
    return float(latency) if isinstance(latency, (int, float)) else 0.0


def _report(error: BaseException | None) -> None:
    # Redis failures are the guard's (logged and counted): anything else is a bug, told.
    if error is not None:
        logger.error("A fleet politeness task failed", exc_info=error)
