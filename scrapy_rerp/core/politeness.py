"""The politeness controller: how far apart a crawl sends what it sends to each origin.

The controller joins parts, each with its own module, and decides between them:

* the **delay floors** (:class:`scrapy_rerp.core.floors.Floors`): robots.txt's Crawl-delay or
  Request-rate, and a raised floor after slow-downs without a usable ``Retry-After``;
* the **cool-downs** (:class:`scrapy_rerp.core.cool_downs.CoolDowns`): a 429, or 503, with a
  ``Retry-After`` parks its origin's requests until then;
* in a fleet, a :class:`Coordination` given to the controller
  (``scrapy_rerp.fleet.delay.FleetCoordination``: each download of a floored origin takes the
  origin's turn on Redis's clock, cool-downs and raised floors are shared). The controller
  calls it at each step below, and it calls back through the controller and its parts' public
  methods.

A slow-down heard (``RERP_SLOWDOWN``) becomes a cool-down or a raised floor here, and the
decision is written to ``request.meta["rerp_slowdown"]``. Every request decided allowed gets one
:class:`~scrapy_rerp.core.admission.Admission` (:mod:`scrapy_rerp.core.admission`): go on,
parked, or refused; or an awaitable of one when it must wait in place. The outage backoff of an
unreachable robots.txt is :func:`scrapy_rerp.core.status.backoff`'s.

Standard library only: the throttle, the parking of waiting requests and the runtime are given
by the middleware. Stats: the parts'; ``robotstxt/slowdown/cooldown_capped``, ``retries``,
``robotstxt/crawl_delay/taken_back_at_close`` (docs/stats.rst).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from scrapy_rerp.core import loggers
from scrapy_rerp.core import status as ladder
from scrapy_rerp.core.admission import GO, Admission, Admitting, ParkingKey, Purpose
from scrapy_rerp.core.cool_downs import CoolDowns
from scrapy_rerp.core.floors import Floors
from scrapy_rerp.core.slowdown import COOL_DOWN, FLOOR_KEPT, FLOOR_RAISED, META, SlowAnswer

if TYPE_CHECKING:
    from scrapy_rerp.core.admission import Parking, Throttle
    from scrapy_rerp.core.runtime import Runtime, Stats
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.engine import RobotsTxt

__all__ = ["Coordination", "Politeness"]

logger = logging.getLogger(loggers.POLITENESS)

STAT_CAPPED_WAIT = "robotstxt/slowdown/cooldown_capped"
STAT_RETRIES = "robotstxt/slowdown/retries"
STAT_TAKEN_BACK_CLOSING = "robotstxt/crawl_delay/taken_back_at_close"


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


class Politeness:
    """A single process's politeness: its floors and cool-downs, and a fleet's coordination
    when it is given one."""

    def __init__(
        self,
        settings: RerpSettings,
        download_delay: float,
        throttle: Throttle | None,
        *,
        stats: Stats,
        parking: Parking | None = None,
        runtime: Runtime | None = None,
        spider: Callable[[], Any] = lambda: None,
    ) -> None:
        self.settings = settings
        self.stats = stats
        self.parking = parking
        self._spider = spider
        # Slow-downs need the throttle (raised floors, requests taken back from the slots),
        # somewhere to park requests and a timer: without them, there are none.
        self.cool_downs: CoolDowns | None = None
        if (
            settings.slowdown
            and throttle is not None
            and parking is not None
            and runtime is not None
        ):
            self.cool_downs = CoolDowns(
                throttle, parking, runtime, stats=stats, not_sent=self.answered, spider=spider
            )
        self.slowdown = self.cool_downs is not None
        # Floors need the throttle too; Floors decides whether robots.txt's apply.
        self.throttle = throttle if (settings.floors or self.slowdown) else None
        self.floors = Floors(
            settings,
            download_delay,
            self.throttle,
            stats=stats,
            began=self._floor_began,
            spider=spider,
        )
        # Once a slow-down was heard (or a cool-down began), admit() looks at each request's
        # meta: its wait, a retry.
        self._heard = False
        self.stopped = False  # the crawl is closing
        self.coordination: Coordination | None = None  # a fleet's: coordinate_with()

    def coordinate_with(self, coordination: Coordination) -> None:
        """Share this worker's politeness with a fleet through ``coordination``."""
        self.coordination = coordination

    def _floor_began(self, origin: str) -> None:
        if self.parking is not None:
            self.parking.watch_closing()  # to take back what its slots hold then
        if self.coordination is not None:
            self.coordination.floor_began(origin)

    # -- robots.txt ----------------------------------------------------------------------------
    def rules_known(self, origin: str, robots: RobotsTxt, user_agent: str) -> float | None:
        """New rules for ``origin``: its floor (:meth:`Floors.rules_known`)."""
        return self.floors.rules_known(origin, robots, user_agent)

    def robots_retry_in(self, failures: int, retry_after: float | None) -> float:
        """Seconds before an unreachable robots.txt is tried again, after ``failures`` failures
        in a row."""
        return ladder.backoff(failures, retry_after, self.settings)

    async def before_sharing(self, origin: str, robots: RobotsTxt | None, user_agent: str) -> None:
        """A fleet worker is about to share new rules (nothing to do alone)."""
        if self.coordination is not None:
            floor = None if robots is None else self.floors.floor_for(robots, user_agent)
            await self.coordination.before_sharing(origin, floor)

    # -- every request -------------------------------------------------------------------------
    def admit(self, origin: str, request: Any) -> Admitting:
        """May ``request`` (decided allowed) go on now? :data:`GO`, :data:`PARKED` (it waits
        for the end of its origin's cool-down), a refusal, or in a fleet an awaitable of one
        (its turn, what Redis says)."""
        if self._heard:
            self._looked_at(request)
        cooling = self.admit_cooling(origin, request)
        if cooling is not None:
            return cooling
        return GO if self.coordination is None else self.coordination.admit(origin, request)

    def admit_cooling(self, origin: str, request: Any) -> Admission | None:
        """:data:`PARKED` (or a refusal) when ``origin`` is in a cool-down known here now."""
        if self.cool_downs is None or origin not in self.cool_downs:
            return None
        return self.cool_downs.admit(origin, request)

    def answered(self, meta: dict[str, Any]) -> None:
        """A response to a request arrived (its ``meta``), or it was taken back unsent."""
        if self.coordination is not None:
            self.coordination.answered(meta)

    # -- slow-downs ----------------------------------------------------------------------------
    @property
    def slowed(self) -> bool:
        """Whether some origin has a raised floor (good answers then count)."""
        return bool(self.floors.backoff)

    def cooling(self, origin: str) -> float | None:
        """Seconds left in ``origin``'s cool-down, if it has one."""
        return None if self.cool_downs is None else self.cool_downs.left(origin)

    def cool_down_ends(self) -> dict[str, float]:
        """Each origin in a cool-down, with its end as a Unix time (kept across a pause)."""
        return {} if self.cool_downs is None else self.cool_downs.ends()

    def cool_down(self, origin: str, seconds: float) -> bool:
        """Send nothing more to ``origin`` for ``seconds`` (:meth:`CoolDowns.start`; nothing
        without slow-downs). True when the cool-down started or now ends later."""
        if self.cool_downs is None:
            return False
        self._heard = True
        return self.cool_downs.start(origin, seconds)

    def slow_answer(self, origin: str, answer: SlowAnswer, meta: dict[str, Any]) -> None:
        """A request of ``origin`` (its ``meta``) was answered with a slow-down: a cool-down
        until its Retry-After time, else a raised floor. The decision goes to its meta."""
        assert self.cool_downs is not None
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
            self.cool_downs.heard(origin, wait, answer, capped)
            decision.update(decision=COOL_DOWN, until=time.time() + wait, wait=wait)
        else:
            floor = self.floors.raise_after(origin, answer, meta)
            decision.update(
                decision=FLOOR_KEPT if floor is None else FLOOR_RAISED,
                floor=self.floors.floor_of(origin),
            )
        _record(meta, decision)
        if self.coordination is not None:
            self.coordination.slow_answer(origin, meta)

    def good_answer(self, origin: str, meta: dict[str, Any]) -> None:
        """A request of ``origin`` with a raised floor was answered with no slow-down."""
        if self.coordination is None or not self.coordination.good_answer(origin, meta):
            self.floors.good_answer(origin, meta)

    def _looked_at(self, request: Any) -> None:
        """Account for a request coming back from a cool-down, and for a retry of a
        slow-down answer, once each."""
        meta = request.meta
        waited = None if self.cool_downs is None else self.cool_downs.waited(meta)
        if waited is not None:
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

    # -- what is kept per origin ---------------------------------------------------------------
    def forget(self, origin: str) -> None:
        """``origin`` left the cache: its floors go with it (a cool-down runs to its end)."""
        self.floors.forget(origin)

    def forget_all(self) -> None:
        self.floors.forget_all()

    # -- closing -------------------------------------------------------------------------------
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
            key = ParkingKey(origin, Purpose.CLOSING)

            def keep(request: Any, key: ParkingKey = key) -> bool:
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
        self.stopped = True
        if self.cool_downs is not None:
            self.cool_downs.stop()
        if self.coordination is not None:
            self.coordination.stop()

    async def finish(self) -> None:
        """The crawl is over: what is still being told to a fleet gets there first."""
        if self.coordination is not None:
            await self.coordination.finish()


def _record(meta: dict[str, Any], decision: dict[str, Any]) -> None:
    # A new dict each time: Request.copy() (a retry) shares the old one with the original.
    meta[META] = dict(decision)
