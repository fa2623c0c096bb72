"""The politeness controller: how far apart a crawl sends what it sends to each origin.

In one place, per origin:

* the **delay floor** from robots.txt: its Crawl-delay or the interval its Request-rate implies
  (seconds / requests), the larger, capped by ``RERP_MAX_CRAWL_DELAY`` (a warning, once per
  origin) and never below ``DOWNLOAD_DELAY``; applied through a :class:`Throttle` (Scrapy's
  download slots: :mod:`scrapy_rerp._throttle`, the one module that touches them);
* **slow-downs** (``RERP_SLOWDOWN``): a page answered 429, or 503, with a ``Retry-After`` puts
  its origin in a **cool-down** until then: its requests are parked (:class:`Parking`, outside
  the downloader), those already queued in its download slots are taken back and parked too,
  and a timer releases them all when it ends. Without a usable ``Retry-After`` the origin's floor
  is **raised** instead, and decays on good answers (:class:`scrapy_rerp._slowdown.FloorBackoff`);
  the floor applied is the larger of that and the robots.txt floor. Decisions are written to
  ``request.meta["rerp_slowdown"]``;
* the **outage backoff**: when an unreachable robots.txt is tried again (exponential, never
  sooner than its ``Retry-After``: :func:`scrapy_rerp._policy.backoff`);
* in a fleet, what the workers share: a :class:`Coordination` given to the controller
  (``scrapy_rerp.fleet.delay.FleetCoordination``: each download of a floored origin takes the
  origin's turn on Redis's clock, cool-downs and raised floors are shared). The controller
  calls it at each step below, and it calls back through the controller's public methods.

Every request decided allowed gets one :class:`Admission`: go on (:data:`GO`), parked
(:data:`PARKED`), or refused with a reason; or an awaitable of one when it must wait in place
(a fleet's turn, Redis's answer).

:class:`Politeness` is the controller. Standard library only: the throttle, the parking of
waiting requests and the runtime are given by the middleware.
Stats: ``robotstxt/crawl_delay/floor_applied``, ``floor_capped``, ``floor_cleared`` and
``max_floor``; ``robotstxt/slowdown/*`` (docs/stats.rst).
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from scrapy_rerp import _policy
from scrapy_rerp._slowdown import (
    COOL_DOWN,
    FLOOR_KEPT,
    FLOOR_RAISED,
    META,
    FloorBackoff,
    SlowAnswer,
)

if TYPE_CHECKING:
    from scrapy_rerp._runtime import Runtime, Task
    from scrapy_rerp._settings import RerpSettings
    from scrapy_rerp.engine import RobotsTxt

__all__ = [
    "GO",
    "PARKED",
    "TURN_META",
    "WAITING_FOR",
    "Admission",
    "Admitting",
    "Coordination",
    "Parking",
    "Politeness",
    "Throttle",
    "Verdict",
    "origin_and_purpose",
    "parking_key",
    "refused",
    "wanted_delay",
]

logger = logging.getLogger("scrapy_rerp.middleware")

STAT_APPLIED = "robotstxt/crawl_delay/floor_applied"
STAT_CAPPED = "robotstxt/crawl_delay/floor_capped"
STAT_CLEARED = "robotstxt/crawl_delay/floor_cleared"
STAT_MAX = "robotstxt/crawl_delay/max_floor"

STAT_COOLDOWNS = "robotstxt/slowdown/cooldowns"
STAT_EXTENDED = "robotstxt/slowdown/cooldown_extended"
STAT_CAPPED_WAIT = "robotstxt/slowdown/cooldown_capped"
STAT_PARKED = "robotstxt/slowdown/parked"
STAT_TAKEN_BACK = "robotstxt/slowdown/taken_back"
STAT_WAITED = "robotstxt/slowdown/seconds_waited"
STAT_RAISED = "robotstxt/slowdown/floor_raised"
STAT_DECAYED = "robotstxt/slowdown/floor_decayed"
STAT_DROPPED = "robotstxt/slowdown/floor_dropped"
STAT_MAX_FLOOR = "robotstxt/slowdown/max_floor"
STAT_RETRIES = "robotstxt/slowdown/retries"
STAT_TAKEN_BACK_CLOSING = "robotstxt/crawl_delay/taken_back_at_close"

#: What a request parked under a key of each purpose waits for (the closing summary says it).
#: A key without a purpose is its origin's: the request waits for its robots.txt.
WAITING_FOR = {
    "": "robots.txt",
    "cool-down": "the end of a cool-down",
    "Crawl-delay": "a Crawl-delay turn",
    "turns begin": "a Crawl-delay turn",
    "closing": "a Crawl-delay or raised floor in a download slot",
}


def parking_key(origin: str, purpose: str = "") -> str:
    """The key under which requests of ``origin`` wait for ``purpose`` (one of
    :data:`WAITING_FOR`)."""
    return f"{origin} ({purpose})" if purpose else origin


def origin_and_purpose(key: str) -> tuple[str, str]:
    """The origin and the purpose of a parking key (:func:`parking_key`)."""
    origin, _, purpose = key.rpartition(" (")
    if origin and purpose.endswith(")") and purpose[:-1] in WAITING_FOR:
        return origin, purpose[:-1]
    return key, ""


#: ``request.meta`` key of a request that holds its origin's fleet turn: (origin, floor, id).
TURN_META = "_rerp_turn"
#: ``request.meta`` key of a request parked for a cool-down: when it was parked (Unix time).
_COOLING_META = "_rerp_cooling_since"


class Verdict(enum.Enum):
    GO = "go"  # it goes on to its download slot
    PARKED = "parked"  # kept outside the downloader until it may go: return it
    REFUSED = "refused"  # dropped with IgnoreRequest(reason)


@dataclass(frozen=True)
class Admission:
    """What the politeness controller says of a request robots.txt allows."""

    verdict: Verdict
    reason: str = ""  # a refusal's message


GO = Admission(Verdict.GO)
PARKED = Admission(Verdict.PARKED)


def refused(reason: str) -> Admission:
    return Admission(Verdict.REFUSED, reason)


#: What :meth:`Politeness.admit` answers: an admission now, or an awaitable of one when the
#: request waits in place (a fleet's turn, Redis's answer).
Admitting = Admission | Awaitable[Admission]


class Throttle(Protocol):
    """Where floors are applied (Scrapy's download slots)."""

    def apply_floor(self, origin: str, floor: float) -> None: ...

    def clear_floor(self, origin: str) -> bool: ...

    def floor_of(self, origin: str) -> float | None: ...

    def floored_origins(self) -> list[str]: ...

    def take_back(self, origin: str, keep: Callable[[Any], bool]) -> int:
        """Offer each request of ``origin`` queued in a download slot (admitted, not sent yet)
        to ``keep``; those it keeps leave the downloader. Returns how many left."""

    def ready_in(self, origin: str) -> float:
        """Seconds until a request of ``origin`` admitted now would leave its slot (0: at
        once; an estimate, to look again then, while the slot sends or holds one already)."""


class Parking(Protocol):
    """Requests kept out of the downloader under a key (the middleware's parking lot)."""

    def park(self, key: str, request: Any) -> str | None: ...

    def release(self, key: str) -> int: ...

    def release_one(self, key: str) -> bool: ...

    def count(self, key: str) -> int: ...

    def watch_closing(self) -> None:
        """Tell the controller when the crawl starts to close (:meth:`Politeness.closing`)."""


class Coordination(Protocol):
    """What a fleet adds to one worker's controller (``scrapy_rerp.fleet.delay``): each
    method is called by :class:`Politeness` at the step of the same name."""

    async def before_sharing(self, origin: str, floor: float | None) -> None:
        """New rules of ``origin``, asking for ``floor``, are about to be shared."""

    def admit(self, origin: str, request: Any) -> Admitting:
        """A request that nothing known here holds back: may it go?"""

    def floor_began(self, origin: str) -> None:
        """``origin`` has a floor now, where it had none."""

    def slow_answer(self, origin: str, meta: dict[str, Any]) -> None:
        """A slow-down answered a request (its ``meta``, with the decision taken here)."""

    def good_answer(self, origin: str, meta: dict[str, Any]) -> bool:
        """A good answer from an origin with a raised floor: True when it is counted by the
        fleet (else here)."""

    def answered(self, meta: dict[str, Any]) -> None:
        """A request (its ``meta``) was answered, or taken back unsent."""

    def stop(self) -> None: ...

    async def finish(self) -> None:
        """The crawl is over: wait (briefly) for what is still being told to the fleet."""


@dataclass(eq=False)
class _CoolDown:
    until: float  # time.monotonic() when it ends
    task: Task | None = None  # the timer that releases the parked requests


def wanted_delay(robots: RobotsTxt, user_agent: str) -> float | None:
    """Seconds between requests ``robots`` asks of ``user_agent``: its Crawl-delay or the
    interval its Request-rate implies (seconds / requests), the larger; None when it asks for
    none."""
    wanted = 0.0
    delay = robots.crawl_delay(user_agent)
    if delay is not None and delay > 0:
        wanted = float(delay)
    rate = robots.request_rate(user_agent)
    if rate is not None and rate.requests > 0 and rate.seconds > 0:
        wanted = max(wanted, rate.seconds / rate.requests)
    return wanted if wanted > 0 else None


class Politeness:
    """A single process's politeness: floors on its own slots, its own backoff and cool-downs."""

    def __init__(
        self,
        settings: RerpSettings,
        download_delay: float,
        throttle: Throttle | None,
        stats: Any,
        parking: Parking | None = None,
        runtime: Runtime | None = None,
        spider: Callable[[], Any] = lambda: None,
    ) -> None:
        self.settings = settings
        self.download_delay = download_delay
        self.max_crawl_delay = float(settings.max_crawl_delay)
        # Crawl-delay floors are applied when RERP_CRAWL_DELAY is on and its cap above 0.
        # Slow-downs need the throttle too (raised floors, requests taken back from the
        # slots), somewhere to park requests and a timer: without them, there are none.
        self.robots_floors = settings.floors and throttle is not None
        self.slowdown = (
            settings.slowdown
            and throttle is not None
            and parking is not None
            and runtime is not None
        )
        self.throttle = throttle if (self.robots_floors or self.slowdown) else None
        self.stats = stats
        self.parking = parking
        self.runtime = runtime
        self._spider = spider
        self._warned_capped: set[str] = set()
        self._robots_floor: dict[str, float] = {}
        self.backoff = FloorBackoff(
            settings.slowdown_start_floor,
            settings.slowdown_max_floor,
            settings.slowdown_decay_after,
        )
        self._cooling: dict[str, _CoolDown] = {}
        # Once a slow-down was heard (or a request parked for one), admit() looks at each
        # request's meta: its wait, a retry.
        self._heard = False
        self._stopped = False  # the crawl is closing: no more timers
        self.coordination: Coordination | None = None  # a fleet's: coordinate_with()

    def coordinate_with(self, coordination: Coordination) -> None:
        """Share this worker's politeness with a fleet through ``coordination``."""
        self.coordination = coordination

    # -- robots.txt ----------------------------------------------------------------------------
    def floor_for(self, robots: RobotsTxt, user_agent: str) -> float | None:
        """The floor ``robots`` asks of ``user_agent``, capped and raised to DOWNLOAD_DELAY
        (no side effect: nothing is applied, counted or logged); None without floors."""
        if not self.robots_floors:
            return None
        wanted = wanted_delay(robots, user_agent)
        return None if wanted is None else self._floor_of(wanted)

    def _floor_of(self, wanted: float) -> float:
        return max(min(wanted, self.max_crawl_delay), self.download_delay)

    def rules_known(self, origin: str, robots: RobotsTxt, user_agent: str) -> float | None:
        """New rules for ``origin``: apply the floor they ask of ``user_agent`` (or clear an
        earlier one); call it before the requests that waited for them are released."""
        if not self.robots_floors:
            return None
        wanted = wanted_delay(robots, user_agent)
        if wanted is None:
            if self._robots_floor.pop(origin, None) is not None:
                self.stats.inc_value(STAT_CLEARED)
                self._apply_floor(origin)
            self._warned_capped.discard(origin)
            return None
        if wanted > self.max_crawl_delay:
            self.stats.inc_value(STAT_CAPPED)
            if origin not in self._warned_capped:
                self._warned_capped.add(origin)
                logger.warning(
                    "robots.txt of %s asks for %.3g s between requests; capped to "
                    "RERP_MAX_CRAWL_DELAY = %.3g s",
                    origin,
                    wanted,
                    self.max_crawl_delay,
                    extra={"spider": self._spider()},
                )
        floor = self._floor_of(wanted)
        self._robots_floor[origin] = floor
        self._apply_floor(origin)
        self.stats.inc_value(STAT_APPLIED)
        self.stats.max_value(STAT_MAX, floor)
        return floor

    def floor_of(self, origin: str) -> float | None:
        """The floor applied to ``origin`` now, if any (robots.txt's or a raised one)."""
        return None if self.throttle is None else self.throttle.floor_of(origin)

    def own_floor(self, origin: str) -> float:
        """The floor ``origin`` has without slow-downs: robots.txt's, else DOWNLOAD_DELAY."""
        return self._robots_floor.get(origin, self.download_delay)

    def _apply_floor(self, origin: str) -> None:
        """Apply the larger of ``origin``'s robots.txt floor and its raised floor, or none."""
        if self.throttle is None:
            return
        had_floor = self.throttle.floor_of(origin) is not None
        floor = max(self._robots_floor.get(origin, 0.0), self.backoff.floor(origin) or 0.0)
        if floor > 0:
            self.throttle.apply_floor(origin, max(floor, self.download_delay))
            if not had_floor:
                if self.parking is not None:
                    self.parking.watch_closing()  # to take back what its slots hold then
                if self.coordination is not None:
                    self.coordination.floor_began(origin)
        else:
            self.throttle.clear_floor(origin)

    def sync_floor(self, origin: str, floor: float, version: int, newer_only: bool) -> None:
        """Make the fleet's raised floor of ``origin`` (0: none) this worker's (a read gives
        way to a change this worker has just made and not heard back about: same version)."""
        if self.backoff.sync(origin, floor, version, time.monotonic(), newer_only):
            self._apply_floor(origin)

    @property
    def stopped(self) -> bool:
        """The crawl is closing."""
        return self._stopped

    def robots_retry_in(self, failures: int, retry_after: float | None) -> float:
        """Seconds before an unreachable robots.txt is tried again, after ``failures`` failures
        in a row."""
        return _policy.backoff(failures, retry_after, self.settings)

    async def before_sharing(self, origin: str, robots: RobotsTxt | None, user_agent: str) -> None:
        """A fleet worker is about to share new rules (nothing to do alone)."""
        if self.coordination is not None:
            floor = None if robots is None else self.floor_for(robots, user_agent)
            await self.coordination.before_sharing(origin, floor)

    # -- every request -------------------------------------------------------------------------
    def admit(self, origin: str, request: Any) -> Admitting:
        """May ``request`` (decided allowed) go on now? :data:`GO`, :data:`PARKED` (it waits
        for the end of its origin's cool-down), a refusal, or in a fleet an awaitable of one
        (its turn, what Redis says)."""
        if self._heard:
            self._looked_at(request)
        if self._cooling and origin in self._cooling:
            return self._park_cooling(origin, request)
        if self.coordination is None:
            return GO
        return self.coordination.admit(origin, request)

    def admit_cooling(self, origin: str, request: Any) -> Admission | None:
        """:data:`PARKED` (or a refusal) when ``origin`` is in a cool-down known here now."""
        if self._cooling and origin in self._cooling:
            return self._park_cooling(origin, request)
        return None

    def answered(self, meta: dict[str, Any]) -> None:
        """A response to a request arrived (its ``meta``), or it was taken back unsent."""
        if self.coordination is not None:
            self.coordination.answered(meta)

    # -- slow-downs ----------------------------------------------------------------------------
    @staticmethod
    def cool_key(origin: str) -> str:
        """The parking key of requests waiting for the end of ``origin``'s cool-down."""
        return parking_key(origin, "cool-down")

    @property
    def slowed(self) -> bool:
        """Whether some origin has a raised floor (good answers then count)."""
        return bool(self.backoff)

    def cooling(self, origin: str) -> float | None:
        """Seconds left in ``origin``'s cool-down, if it has one."""
        cool = self._cooling.get(origin)
        if cool is None:
            return None
        left = cool.until - time.monotonic()
        return left if left > 0 else None

    def cool_downs(self) -> dict[str, float]:
        """Each origin in a cool-down, with its end as a Unix time (kept across a pause)."""
        now, wall = time.monotonic(), time.time()
        return {o: wall + c.until - now for o, c in self._cooling.items() if c.until > now}

    def slow_answer(self, origin: str, answer: SlowAnswer, meta: dict[str, Any]) -> None:
        """A request of ``origin`` (its ``meta``) was answered with a slow-down: a cool-down
        until its Retry-After time, else a raised floor. The decision goes to its meta."""
        self._heard = True
        decision: dict[str, Any] = {
            "status": answer.status,
            "retry_after": answer.retry_after,
            "retry_times": meta.get("retry_times", 0),
        }
        if answer.wait is not None:
            wait = min(answer.wait, self.settings.slowdown_max_wait)
            capped = wait < answer.wait
            if capped:
                self.stats.inc_value(STAT_CAPPED_WAIT)
            self._start_cool_down(origin, wait, answer, capped)
            decision.update(decision=COOL_DOWN, until=time.time() + wait, wait=wait)
        else:
            now = time.monotonic()
            floor = self.backoff.raised(origin, _sent_at(meta, now), now, self.own_floor(origin))
            if floor is not None:
                self._floor_raised(origin, floor, answer)
            decision.update(
                decision=FLOOR_KEPT if floor is None else FLOOR_RAISED,
                floor=self.floor_of(origin),
            )
        _record(meta, decision)
        if self.coordination is not None:
            self.coordination.slow_answer(origin, meta)

    def good_answer(self, origin: str, meta: dict[str, Any]) -> None:
        """A request of ``origin`` with a raised floor was answered with no slow-down."""
        if self.coordination is None or not self.coordination.good_answer(origin, meta):
            self.count_good_answer(origin, meta)

    def count_good_answer(self, origin: str, meta: dict[str, Any]) -> None:
        """Count a good answer here (alone, or while the fleet cannot be told)."""
        now = time.monotonic()
        floor = self.backoff.good_answer(origin, _sent_at(meta, now), now, self.own_floor(origin))
        if floor is not None:
            self.floor_decayed(origin, floor)

    def cool_down(self, origin: str, seconds: float) -> bool:
        """Send nothing more to ``origin`` for ``seconds`` (a cool-down never ends sooner than
        one already running): its requests are parked until then, those queued in its download
        slots taken back. True when the cool-down started or now ends later."""
        if not self.slowdown or seconds <= 0:
            return False
        until = time.monotonic() + seconds
        cool = self._cooling.get(origin)
        if cool is not None and cool.until >= until:
            return False
        assert self.runtime is not None and self.throttle is not None
        if cool is None:
            cool = self._cooling[origin] = _CoolDown(until)
            if not self._stopped:  # else it is only kept, for a resumed crawl
                cool.task = self.runtime.spawn(self._cool_down_ends(origin, cool), _timer_done)
        else:
            cool.until = until  # its timer sleeps on
        self.throttle.take_back(origin, lambda request: self._take_back(origin, request))
        return True

    def _start_cool_down(
        self, origin: str, wait: float, answer: SlowAnswer, capped: bool = False
    ) -> None:
        running = origin in self._cooling
        if not self.cool_down(origin, wait):
            return
        if running:
            self.stats.inc_value(STAT_EXTENDED)
            level = logging.DEBUG
        else:
            self.stats.inc_value(STAT_COOLDOWNS)
            level = logging.INFO
        logger.log(
            level,
            "Slow down: %(origin)s answered %(status)d with Retry-After: %(retry_after)s; "
            "nothing more is sent to it until %(until)s (%(wait).3g s%(capped)s)",
            {
                "origin": origin,
                "status": answer.status,
                "retry_after": answer.retry_after,
                "until": _iso(time.time() + wait),
                "wait": wait,
                "capped": " (capped by RERP_SLOWDOWN_MAX_WAIT)" if capped else "",
            },
            extra={"spider": self._spider()},
        )

    def _floor_raised(self, origin: str, floor: float, answer: SlowAnswer | None) -> None:
        self._heard = True
        self._apply_floor(origin)
        self.stats.inc_value(STAT_RAISED)
        self.stats.max_value(STAT_MAX_FLOOR, floor)
        if answer is None:
            how = "the fleet raised it"
        elif answer.retry_after is None:
            how = f"it answered {answer.status} without Retry-After"
        else:
            how = f"it answered {answer.status} with an unusable Retry-After: {answer.retry_after}"
        logger.info(
            "Slow down: at least %(floor).3g s between requests to %(origin)s (%(how)s)",
            {"floor": self.floor_of(origin), "origin": origin, "how": how},
            extra={"spider": self._spider()},
        )

    def floor_decayed(self, origin: str, floor: float) -> None:
        """``origin``'s raised floor was halved (or dropped: 0) after good answers."""
        self._apply_floor(origin)
        self.stats.inc_value(STAT_DECAYED if floor > 0 else STAT_DROPPED)
        logger.debug(
            "Slow down: %(n)d good answers in a row from %(origin)s; its raised floor is now "
            "%(floor)s",
            {
                "n": self.backoff.decay_after,
                "origin": origin,
                "floor": f"{floor:.3g} s" if floor > 0 else "gone",
            },
            extra={"spider": self._spider()},
        )

    def _park_cooling(self, origin: str, request: Any) -> Admission:
        assert self.parking is not None
        if self.parking.park(self.cool_key(origin), request) is not None:
            return refused(f"too many requests wait for the cool-down of {origin}")
        request.meta[_COOLING_META] = time.time()
        self._heard = True
        self.stats.inc_value(STAT_PARKED)
        return PARKED

    def _take_back(self, origin: str, request: Any) -> bool:
        """A request of ``origin`` was queued in a download slot as its cool-down began."""
        assert self.parking is not None
        if self.parking.park(self.cool_key(origin), request) is not None:
            return False  # the lot is full or closing: it goes as it would have
        request.meta[_COOLING_META] = time.time()
        self._heard = True
        self.answered(request.meta)  # it is not sent: a fleet turn it held ends
        self.stats.inc_value(STAT_PARKED)
        self.stats.inc_value(STAT_TAKEN_BACK)
        return True

    def _looked_at(self, request: Any) -> None:
        """Account for a request coming back from a cool-down, and for a retry of a
        slow-down answer, once each."""
        meta = request.meta
        since = meta.pop(_COOLING_META, None)
        if since is not None:
            waited = max(0.0, time.time() - since)
            self.stats.inc_value(STAT_WAITED, waited)
            decision = meta.get(META) or {}
            _record(meta, {**decision, "waited": decision.get("waited", 0.0) + waited})
        decision = meta.get(META)
        if (
            decision is not None
            and "status" in decision
            and not decision.get("retried")
            and meta.get("retry_times", 0) > decision["retry_times"]
        ):
            self.stats.inc_value(STAT_RETRIES)
            _record(meta, {**decision, "retried": True})

    async def _cool_down_ends(self, origin: str, cool: _CoolDown) -> None:
        while (left := cool.until - time.monotonic()) > 0:
            await self.runtime.sleep(left)
        if self._cooling.get(origin) is cool:
            del self._cooling[origin]
        assert self.parking is not None
        self.parking.release(self.cool_key(origin))

    # -- what is kept per origin ---------------------------------------------------------------
    def forget(self, origin: str) -> None:
        """``origin`` left the cache: its floors go with it (a cool-down runs to its end)."""
        self._warned_capped.discard(origin)
        self._robots_floor.pop(origin, None)
        self.backoff.forget(origin)
        if self.throttle is not None and self.throttle.clear_floor(origin):
            self.stats.inc_value(STAT_CLEARED)

    def forget_all(self) -> None:
        if self.throttle is not None:
            for origin in self.throttle.floored_origins():
                self.forget(origin)
        for origin in self.backoff.origins():
            self.forget(origin)

    def take_back_queued(self) -> int:
        """The crawl is closing: the requests waiting in the download slots of floored origins
        (a Crawl-delay, a raised floor) come out into the parking lot, to be kept for a resumed
        crawl or dropped with what is parked there, rather than sent a floor apart while the
        crawl waits to close. Call it before the lot closes. Returns how many came out."""
        if self.throttle is None or self.parking is None:
            return 0
        parking = self.parking
        taken = 0
        for origin in self.throttle.floored_origins():
            key = parking_key(origin, "closing")

            def keep(request: Any, key: str = key) -> bool:
                if parking.park(key, request) is not None:
                    return False  # the lot is full: it goes as it would have
                self.answered(request.meta)  # not sent: a fleet turn it held ends
                return True

            taken += self.throttle.take_back(origin, keep)
        if taken:
            self.stats.inc_value(STAT_TAKEN_BACK_CLOSING, taken)
        return taken

    def stop(self) -> None:
        """The crawl is closing: cool-down timers end (their requests are kept or dropped with
        the parking lot's)."""
        self._stopped = True
        for cool in self._cooling.values():
            if cool.task is not None:
                cool.task.cancel()
                cool.task = None
        if self.coordination is not None:
            self.coordination.stop()

    async def finish(self) -> None:
        """The crawl is over: what is still being told to a fleet gets there first."""
        if self.coordination is not None:
            await self.coordination.finish()


def _sent_at(meta: dict[str, Any], now: float) -> float:
    """When the request of ``meta`` left (``now`` minus Scrapy's ``download_latency``)."""
    latency = meta.get("download_latency")
    return now - latency if isinstance(latency, (int, float)) else now


def _record(meta: dict[str, Any], decision: dict[str, Any]) -> None:
    # A new dict each time: Request.copy() (a retry) shares the old one with the original.
    meta[META] = dict(decision)


def _timer_done(error: BaseException | None) -> None:
    if error is not None:
        logger.error("A cool-down timer failed", exc_info=error)


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
