"""Each origin's delay floor: how far apart requests to it leave, at least.

Two floors per origin, the larger applied through a :class:`~scrapy_rerp.core.admission.Throttle`
(Scrapy's download slots: :mod:`scrapy_rerp.crawl.slots`, the one module that touches them):

* **robots.txt's**: its Crawl-delay or the interval its Request-rate implies (seconds /
  requests), the larger, capped by ``RERP_MAX_CRAWL_DELAY`` and never below ``DOWNLOAD_DELAY``:
  one INFO line per origin when it first applies (a WARNING when capped), DEBUG after;
* a **raised** floor (``RERP_SLOWDOWN``): a 429 or 503 without a usable ``Retry-After`` raises
  it, good answers halve it again (the arithmetic: :class:`scrapy_rerp.core.slowdown.FloorBackoff`):
  one INFO line per origin when it is first raised, DEBUG after (docs/logging.rst).

Standard library only. Stats: ``robotstxt/crawl_delay/floor_applied``, ``floor_capped``,
``floor_cleared``, ``max_floor``; ``robotstxt/slowdown/floor_raised``, ``floor_decayed``,
``floor_dropped``, ``max_floor`` (docs/stats.rst).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy_rerp.core import loggers
from scrapy_rerp.core.slowdown import FloorBackoff, SlowAnswer
from scrapy_rerp.core.wording import FirstTimes, duration, stat_seconds

if TYPE_CHECKING:
    from scrapy_rerp.core.admission import Throttle
    from scrapy_rerp.core.runtime import Stats
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.engine import RobotsTxt

__all__ = ["Floors", "sent_at", "wanted_delay"]

logger = logging.getLogger(loggers.POLITENESS)

STAT_APPLIED = "robotstxt/crawl_delay/floor_applied"
STAT_CAPPED = "robotstxt/crawl_delay/floor_capped"
STAT_CLEARED = "robotstxt/crawl_delay/floor_cleared"
STAT_MAX = "robotstxt/crawl_delay/max_floor"
STAT_RAISED = "robotstxt/slowdown/floor_raised"
STAT_DECAYED = "robotstxt/slowdown/floor_decayed"
STAT_DROPPED = "robotstxt/slowdown/floor_dropped"
STAT_MAX_RAISED = "robotstxt/slowdown/max_floor"


def wanted_delay(robots: RobotsTxt, user_agent: str) -> float | None:
    """Seconds between requests ``robots`` asks of ``user_agent``: its Crawl-delay or the
    interval its Request-rate implies (seconds / requests), the larger; None when it asks for
    none."""
    delay = robots.crawl_delay(user_agent)
    wanted = float(delay) if delay is not None and delay > 0 else 0.0
    rate = robots.request_rate(user_agent)
    if rate is not None and rate.requests > 0 and rate.seconds > 0:
        wanted = max(wanted, rate.seconds / rate.requests)
    return wanted if wanted > 0 else None


def sent_at(meta: dict[str, Any], now: float) -> float:
    """When the request of ``meta`` left (``now`` minus Scrapy's ``download_latency``)."""
    latency = meta.get("download_latency")
    return now - latency if isinstance(latency, (int, float)) else now


class Floors:
    """The floors of every origin, applied to the throttle as they change.

    ``began(origin)`` is called when an origin gets a floor where it had none (the controller
    then watches for the crawl's close, and a fleet starts taking turns)."""

    def __init__(
        self,
        settings: RerpSettings,
        download_delay: float,
        throttle: Throttle | None,
        *,
        stats: Stats,
        began: Callable[[str], None],
        spider: Callable[[], Any] = lambda: None,
    ) -> None:
        self.download_delay = download_delay
        self.max_crawl_delay = float(settings.max_crawl_delay)
        # Crawl-delay floors are applied when RERP_CRAWL_DELAY is on and its cap above 0.
        self.robots_floors = settings.floors and throttle is not None
        self.throttle = throttle
        self.stats = stats
        self.backoff = FloorBackoff(
            settings.slowdown_start_floor,
            settings.slowdown_max_floor,
            settings.slowdown_decay_after,
        )
        self._began = began
        self._spider = spider
        self._robots_floor: dict[str, float] = {}
        # The origins whose floor was told at INFO (or WARNING): robots.txt's, raised ones.
        self._told = FirstTimes()
        self._told_capped = FirstTimes()
        self._told_raised = FirstTimes()

    # -- robots.txt's --------------------------------------------------------------------------
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
                self.apply(origin)
            return None
        capped = wanted > self.max_crawl_delay
        floor = self._floor_of(wanted)
        self._robots_floor[origin] = floor
        self.apply(origin)
        self.stats.inc_value(STAT_APPLIED)
        self.stats.max_value(STAT_MAX, stat_seconds(floor))
        # Told once per origin: its floor at INFO, a cap (each origin's first) at WARNING.
        told = self._told.first(origin)
        if capped:
            self.stats.inc_value(STAT_CAPPED)
            level = logging.WARNING if self._told_capped.first(origin) else logging.DEBUG
            message = (
                "robots.txt of %(origin)s asks for %(wanted)s between requests; capped to "
                "RERP_MAX_CRAWL_DELAY = %(max)s"
            )
        else:
            level = logging.INFO if told else logging.DEBUG
            message = "Crawl-delay: at least %(floor)s between requests to %(origin)s (%(why)s)"
        logger.log(
            level,
            message,
            {
                "origin": origin,
                "wanted": duration(wanted),
                "max": duration(self.max_crawl_delay),
                "floor": duration(floor),
                "why": f"its robots.txt asks for {duration(wanted)}"
                + ("" if floor == wanted else f", DOWNLOAD_DELAY = {duration(floor)}"),
            },
            extra={"spider": self._spider()},
        )
        return floor

    # -- what applies --------------------------------------------------------------------------
    def floor_of(self, origin: str) -> float | None:
        """The floor applied to ``origin`` now, if any (robots.txt's or a raised one)."""
        return None if self.throttle is None else self.throttle.floor_of(origin)

    def own_floor(self, origin: str) -> float:
        """The floor ``origin`` has without slow-downs: robots.txt's, else DOWNLOAD_DELAY."""
        return self._robots_floor.get(origin, self.download_delay)

    def apply(self, origin: str) -> None:
        """Apply the larger of ``origin``'s robots.txt floor and its raised floor, or none."""
        if self.throttle is None:
            return
        had_floor = self.throttle.floor_of(origin) is not None
        floor = max(self._robots_floor.get(origin, 0.0), self.backoff.floor(origin) or 0.0)
        if floor > 0:
            self.throttle.apply_floor(origin, max(floor, self.download_delay))
            if not had_floor:
                self._began(origin)
        else:
            self.throttle.clear_floor(origin)

    # -- raised ----------------------------------------------------------------------------------
    def is_raised(self, origin: str) -> bool:
        return origin in self.backoff

    def raise_after(self, origin: str, answer: SlowAnswer, meta: dict[str, Any]) -> float | None:
        """A slow-down without a usable ``Retry-After`` answered the request of ``meta``:
        ``origin``'s floor is raised (returned), or kept as it is (None: the request left
        before the last raise)."""
        now = time.monotonic()
        floor = self.backoff.raised(origin, sent_at(meta, now), now, self.own_floor(origin))
        if floor is None:
            return None
        self.apply(origin)
        self.stats.inc_value(STAT_RAISED)
        self.stats.max_value(STAT_MAX_RAISED, stat_seconds(floor))
        if answer.retry_after is None:
            how = f"it answered {answer.status} without Retry-After"
        else:
            how = f"it answered {answer.status} with an unusable Retry-After: {answer.retry_after}"
        logger.log(
            logging.INFO if self._told_raised.first(origin) else logging.DEBUG,
            "Slow down: at least %(floor)s between requests to %(origin)s (%(how)s)",
            {"floor": duration(self.floor_of(origin) or floor), "origin": origin, "how": how},
            extra={"spider": self._spider()},
        )
        return floor

    def sync(self, origin: str, floor: float, version: int, newer_only: bool) -> None:
        """Make the fleet's raised floor of ``origin`` (0: none) this worker's (a read gives
        way to a change this worker has just made and not heard back about: same version)."""
        if self.backoff.sync(origin, floor, version, time.monotonic(), newer_only):
            self.apply(origin)

    def good_answer(self, origin: str, meta: dict[str, Any]) -> None:
        """Count a good answer to the request of ``meta`` here (alone, or while the fleet
        cannot be told): enough in a row halve the raised floor."""
        now = time.monotonic()
        floor = self.backoff.good_answer(origin, sent_at(meta, now), now, self.own_floor(origin))
        if floor is not None:
            self.decayed(origin, floor)

    def decayed(self, origin: str, floor: float) -> None:
        """``origin``'s raised floor was halved (or dropped: 0) after good answers."""
        self.apply(origin)
        self.stats.inc_value(STAT_DECAYED if floor > 0 else STAT_DROPPED)
        logger.debug(
            "Slow down: %(n)d good answers in a row from %(origin)s; its raised floor is now "
            "%(floor)s",
            {
                "n": self.backoff.decay_after,
                "origin": origin,
                "floor": duration(floor) if floor > 0 else "gone",
            },
            extra={"spider": self._spider()},
        )

    # -- what is kept per origin ---------------------------------------------------------------
    def forget(self, origin: str) -> None:
        """``origin`` left the cache: its floors go with it."""
        for told in (self._told, self._told_capped, self._told_raised):
            told.forget(origin)
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
