"""The politeness controller: how far apart a crawl sends what it sends to each origin.

In one place, per origin:

* the **delay floor** from robots.txt: its Crawl-delay or the interval its Request-rate implies
  (seconds / requests), the larger, capped by ``RERP_MAX_CRAWL_DELAY`` (a warning, once per
  origin) and never below ``DOWNLOAD_DELAY``; applied through a :class:`Throttle` (Scrapy's
  download slots: :mod:`scrapy_rerp._throttle`, the one module that touches them);
* the **outage backoff**: when an unreachable robots.txt is tried again (exponential, never
  sooner than its ``Retry-After``: :func:`scrapy_rerp._policy.backoff`);
* in a fleet, the floor held by all workers together, each download of a floored origin taking
  the origin's turn on Redis's clock first: ``scrapy_rerp.fleet.delay.FleetPoliteness``, the
  same interface.

:class:`Politeness` is the single-process controller. Standard library only: the throttle and
(in a fleet) the parking of waiting requests and the runtime are given by the middleware.
Stats: ``robotstxt/crawl_delay/floor_applied``, ``floor_capped``, ``floor_cleared`` and
``max_floor``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from scrapy_rerp import _policy

if TYPE_CHECKING:
    from scrapy_rerp._settings import RerpSettings
    from scrapy_rerp.engine import RobotsTxt

__all__ = [
    "PARKED",
    "TURN_META",
    "Admission",
    "Parking",
    "Politeness",
    "Throttle",
    "wanted_delay",
]

logger = logging.getLogger("scrapy_rerp.middleware")

STAT_APPLIED = "robotstxt/crawl_delay/floor_applied"
STAT_CAPPED = "robotstxt/crawl_delay/floor_capped"
STAT_CLEARED = "robotstxt/crawl_delay/floor_cleared"
STAT_MAX = "robotstxt/crawl_delay/max_floor"

#: ``request.meta`` key of a request that holds its origin's fleet turn: (origin, floor, id).
TURN_META = "_rerp_turn"


class _Parked:
    def __repr__(self) -> str:
        return "PARKED"


#: :meth:`Politeness.admit`: the request was parked; return it from ``process_request``.
PARKED = _Parked()

#: What :meth:`Politeness.admit` answers: None (go on), :data:`PARKED`, an awaitable that ends
#: when the request may go, or the message of a refusal.
Admission = None | _Parked | Awaitable[None] | str


class Throttle(Protocol):
    """Where floors are applied (Scrapy's download slots)."""

    def apply_floor(self, origin: str, floor: float) -> None: ...

    def clear_floor(self, origin: str) -> bool: ...

    def floor_of(self, origin: str) -> float | None: ...

    def floored_origins(self) -> list[str]: ...


class Parking(Protocol):
    """Requests kept out of the downloader under a key (the middleware's parking lot)."""

    def park(self, key: str, request: Any) -> str | None: ...

    def release_one(self, key: str) -> bool: ...

    def count(self, key: str) -> int: ...


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
    """A single process's politeness: floors on its own slots, its own backoff."""

    def __init__(
        self,
        settings: RerpSettings,
        download_delay: float,
        throttle: Throttle | None,
        stats: Any,
        spider: Callable[[], Any] = lambda: None,
    ) -> None:
        self.settings = settings
        self.download_delay = download_delay
        self.max_crawl_delay = float(settings.max_crawl_delay)
        # Floors are applied when RERP_CRAWL_DELAY is on and its cap above 0.
        self.throttle = throttle if settings.floors else None
        self.stats = stats
        self._spider = spider
        self._warned_capped: set[str] = set()

    # -- robots.txt ----------------------------------------------------------------------------
    def floor_for(self, robots: RobotsTxt, user_agent: str) -> float | None:
        """The floor ``robots`` asks of ``user_agent``, capped and raised to DOWNLOAD_DELAY
        (no side effect: nothing is applied, counted or logged); None without floors."""
        if self.throttle is None:
            return None
        wanted = wanted_delay(robots, user_agent)
        return None if wanted is None else self._floor_of(wanted)

    def _floor_of(self, wanted: float) -> float:
        return max(min(wanted, self.max_crawl_delay), self.download_delay)

    def rules_known(self, origin: str, robots: RobotsTxt, user_agent: str) -> float | None:
        """New rules for ``origin``: apply the floor they ask of ``user_agent`` (or clear an
        earlier one); call it before the requests that waited for them are released."""
        if self.throttle is None:
            return None
        wanted = wanted_delay(robots, user_agent)
        if wanted is None:
            self.forget(origin)
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
        self.throttle.apply_floor(origin, floor)
        self.stats.inc_value(STAT_APPLIED)
        self.stats.max_value(STAT_MAX, floor)
        return floor

    def floor_of(self, origin: str) -> float | None:
        """The floor applied to ``origin`` now, if any."""
        return None if self.throttle is None else self.throttle.floor_of(origin)

    def robots_retry_in(self, failures: int, retry_after: float | None) -> float:
        """Seconds before an unreachable robots.txt is tried again, after ``failures`` failures
        in a row."""
        return _policy.backoff(failures, retry_after, self.settings)

    async def before_sharing(self, origin: str, robots: RobotsTxt | None, user_agent: str) -> None:
        """A fleet worker is about to share new rules (nothing to do alone)."""

    # -- every request -------------------------------------------------------------------------
    def admit(self, origin: str, request: Any) -> Admission:
        """May ``request`` (decided allowed) go on now? None: yes. The fleet's answers are
        :data:`PARKED`, an awaitable that ends at the request's turn, or the message of a
        refusal."""
        return None

    def answered(self, meta: dict[str, Any]) -> None:
        """A response to a request arrived (its ``meta``)."""

    # -- what is kept per origin ---------------------------------------------------------------
    def forget(self, origin: str) -> None:
        """``origin`` left the cache: its floor goes with it."""
        self._warned_capped.discard(origin)
        if self.throttle is not None and self.throttle.clear_floor(origin):
            self.stats.inc_value(STAT_CLEARED)

    def forget_all(self) -> None:
        if self.throttle is not None:
            for origin in self.throttle.floored_origins():
                self.forget(origin)

    def stop(self) -> None:
        """The crawl is closing."""
