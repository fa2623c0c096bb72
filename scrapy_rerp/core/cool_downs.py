"""Origins in a cool-down: nothing is sent to them until it ends.

A page answered 429, or 503, with a usable ``Retry-After`` (``RERP_SLOWDOWN``) puts its
origin in a cool-down until then (capped by ``RERP_SLOWDOWN_MAX_WAIT``): its requests are
parked outside the downloader (a :class:`~scrapy_rerp.core.admission.Parking`), those already
queued in its download slots are taken back and parked too (a
:class:`~scrapy_rerp.core.admission.Throttle`), and a timer releases them all when it ends. A
cool-down never ends sooner than one already running. A request parked for one is marked with
when it was parked, so that the time it waited is counted when it comes back (the sum kept to
the millisecond). An origin's first cool-down is an INFO line, its later ones and extensions
DEBUG lines (docs/logging.rst).

Standard library only. Stats: ``robotstxt/slowdown/cooldowns``, ``cooldown_extended``,
``parked``, ``taken_back``, ``seconds_waited`` (docs/stats.rst).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy_rerp.core import loggers
from scrapy_rerp.core.admission import PARKED, Admission, ParkingKey, Purpose, refused
from scrapy_rerp.core.wording import FirstTimes, duration, stat_seconds

if TYPE_CHECKING:
    from scrapy_rerp.core.admission import Parking, Throttle
    from scrapy_rerp.core.runtime import Runtime, Stats, Task
    from scrapy_rerp.core.slowdown import SlowAnswer

__all__ = ["CoolDowns"]

logger = logging.getLogger(loggers.POLITENESS)

STAT_COOLDOWNS = "robotstxt/slowdown/cooldowns"
STAT_EXTENDED = "robotstxt/slowdown/cooldown_extended"
STAT_PARKED = "robotstxt/slowdown/parked"
STAT_TAKEN_BACK = "robotstxt/slowdown/taken_back"
STAT_WAITED = "robotstxt/slowdown/seconds_waited"

#: ``request.meta`` key of a request parked for a cool-down: when it was parked (Unix time).
_COOLING_META = "_rerp_cooling_since"


@dataclass(eq=False)
class _CoolDown:
    until: float  # time.monotonic() when it ends
    task: Task | None = None  # the timer that releases the parked requests


class CoolDowns:
    """The origins in a cool-down, their parked requests and the timers that release them.

    ``not_sent(meta)`` is called for each request taken back from a slot unsent (a fleet turn
    it held ends)."""

    def __init__(
        self,
        throttle: Throttle,
        parking: Parking,
        runtime: Runtime,
        *,
        stats: Stats,
        not_sent: Callable[[dict[str, Any]], None],
        spider: Callable[[], Any] = lambda: None,
    ) -> None:
        self.throttle = throttle
        self.parking = parking
        self.runtime = runtime
        self.stats = stats
        self._not_sent = not_sent
        self._spider = spider
        self._cooling: dict[str, _CoolDown] = {}
        self._stopped = False  # the crawl is closing: no more timers
        self._told = FirstTimes()  # the origins whose cool-down was told at INFO
        self._waited = 0.0  # seconds waited, summed: the stat holds it rounded

    def __contains__(self, origin: str) -> bool:
        return origin in self._cooling

    @staticmethod
    def key(origin: str) -> ParkingKey:
        """The parking key of requests waiting for the end of ``origin``'s cool-down."""
        return ParkingKey(origin, Purpose.COOL_DOWN)

    def left(self, origin: str) -> float | None:
        """Seconds left in ``origin``'s cool-down, if it has one."""
        cool = self._cooling.get(origin)
        if cool is None:
            return None
        left = cool.until - time.monotonic()
        return left if left > 0 else None

    def ends(self) -> dict[str, float]:
        """Each origin in a cool-down, with its end as a Unix time (kept across a pause)."""
        now, wall = time.monotonic(), time.time()
        return {o: wall + c.until - now for o, c in self._cooling.items() if c.until > now}

    def start(self, origin: str, seconds: float) -> bool:
        """Send nothing more to ``origin`` for ``seconds``: its requests are parked until then,
        those queued in its download slots taken back. True when the cool-down started or now
        ends later."""
        if seconds <= 0:
            return False
        until = time.monotonic() + seconds
        cool = self._cooling.get(origin)
        if cool is not None and cool.until >= until:
            return False
        if cool is None:
            cool = self._cooling[origin] = _CoolDown(until)
            if not self._stopped:  # else it is only kept, for a resumed crawl
                cool.task = self.runtime.spawn(self._ends(origin, cool), _timer_done)
        else:
            cool.until = until  # its timer sleeps on
        self.throttle.take_back(origin, lambda request: self._take_back(origin, request))
        return True

    def heard(self, origin: str, wait: float, answer: SlowAnswer, capped: bool) -> None:
        """``answer`` asked ``origin`` to wait ``wait`` seconds (``capped`` by
        ``RERP_SLOWDOWN_MAX_WAIT``): a cool-down, counted and logged."""
        running = origin in self._cooling
        if not self.start(origin, wait):
            return
        self.stats.inc_value(STAT_EXTENDED if running else STAT_COOLDOWNS)
        first = not running and self._told.first(origin)  # an origin's first cool-down
        logger.log(
            logging.INFO if first else logging.DEBUG,
            "Slow down: %(origin)s answered %(status)d with Retry-After: %(retry_after)s; "
            "nothing more is sent to it until %(until)s (%(wait)s%(capped)s)",
            {
                "origin": origin,
                "status": answer.status,
                "retry_after": answer.retry_after,
                "until": _iso(time.time() + wait),
                "wait": duration(wait),
                "capped": " (capped by RERP_SLOWDOWN_MAX_WAIT)" if capped else "",
            },
            extra={"spider": self._spider()},
        )

    def admit(self, origin: str, request: Any) -> Admission | None:
        """:data:`~scrapy_rerp.core.admission.PARKED` (or a refusal when the lot is full) when
        ``origin`` is in a cool-down; None when it is not."""
        if origin not in self._cooling:
            return None
        if self.parking.park(self.key(origin), request) is not None:
            return refused(f"too many requests wait for the cool-down of {origin}")
        request.meta[_COOLING_META] = time.time()
        self.stats.inc_value(STAT_PARKED)
        return PARKED

    def waited(self, meta: dict[str, Any]) -> float | None:
        """Seconds the request of ``meta`` waited for a cool-down, once, when it comes back
        from one (counted); None otherwise."""
        since = meta.pop(_COOLING_META, None)
        if since is None:
            return None
        waited = max(0.0, time.time() - since)
        self._waited += waited
        self.stats.set_value(STAT_WAITED, stat_seconds(self._waited))
        return waited

    def _take_back(self, origin: str, request: Any) -> bool:
        """A request of ``origin`` was queued in a download slot as its cool-down began: parked
        as :meth:`admit` parks one."""
        if self.admit(origin, request) is not PARKED:
            return False  # the lot is full or closing: it goes as it would have
        self._not_sent(request.meta)
        self.stats.inc_value(STAT_TAKEN_BACK)
        return True

    async def _ends(self, origin: str, cool: _CoolDown) -> None:
        while (left := cool.until - time.monotonic()) > 0:
            await self.runtime.sleep(left)
        if self._cooling.get(origin) is cool:
            del self._cooling[origin]
        self.parking.release(self.key(origin))

    def stop(self) -> None:
        """The crawl is closing: the timers end (their requests are kept or dropped with the
        parking lot's); a cool-down started from now on is only kept, for a resumed crawl."""
        self._stopped = True
        for cool in self._cooling.values():
            if cool.task is not None:
                cool.task.cancel()
                cool.task = None


def _timer_done(error: BaseException | None) -> None:
    if error is not None:
        logger.error("A cool-down timer failed", exc_info=error)


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
