"""Redis calls that may fail, and what a failure means.

* **An outage** (:class:`~scrapy_rerp.fleet.store.RedisUnavailable`: no connection, no answer in
  ``RERP_REDIS_TIMEOUT``): one WARNING when Redis goes away and one when it is back, each failed
  call counted, and the caller carries on alone meanwhile (its own downloads, local cache and
  local Crawl-delay floors). While Redis is down, a call is sent at most once per
  :data:`PROBE_INTERVAL` (the others fail at once, counted as decisions taken alone): a dead
  or hung Redis costs a worker no time per request, and a Redis that is back is used again
  within that interval. The one exception is a Crawl-delay turn (``even_when_down``): it is
  always tried, so that no worker sends beside the fleet's turns once Redis is back (the
  request waits for its floor anyway; a hung Redis costs it ``RERP_REDIS_TIMEOUT``).
* **A command error** (:class:`~scrapy_rerp.fleet.store.RedisCommandError`: Redis answered with
  an error: a full ``maxmemory``, a read-only replica, a value of the wrong type): not an
  outage. That call's caller goes on alone, the error is counted and logged once per kind, and
  Redis is used for everything else.

Stats: ``robotstxt/redis/errors`` (failed calls: outages), ``robotstxt/redis/command_errors``,
``robotstxt/redis/fallback`` (decisions taken alone).

The lines name Redis by its URL without its userinfo
(:func:`~scrapy_rerp.core.settings.redacted_url`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from scrapy_rerp.core import loggers
from scrapy_rerp.core.runtime import Stats
from scrapy_rerp.core.settings import redacted_url
from scrapy_rerp.fleet.store import RedisCommandError, RedisUnavailable

__all__ = ["PROBE_INTERVAL", "RedisGuard"]

logger = logging.getLogger(loggers.FLEET)

_T = TypeVar("_T")

#: Seconds between calls sent to a Redis that is down (to see whether it is back). Crawl-delay
#: turns are tried whatever this says (:meth:`RedisGuard.call`'s ``even_when_down``).
PROBE_INTERVAL = 0.5


class RedisGuard:
    """Runs the fleet's Redis calls; shared by the robots.txt sharing and the shared delay."""

    def __init__(
        self,
        url: str,
        stats: Stats,
        *,
        spider: Callable[[], Any] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = redacted_url(url)  # as every line shows it: never its password
        self.stats = stats
        #: The crawl's spider, for the ``extra`` of a log line (None before it opens).
        self.spider = spider
        self._clock = clock
        self.down = False
        self._next_probe = 0.0
        self._command_errors_said: set[str] = set()

    async def call(
        self, call: Callable[[], Awaitable[_T]], even_when_down: bool = False
    ) -> tuple[bool, _T | None]:
        """``(True, result)``, or ``(False, None)`` when Redis failed or is down (logged,
        counted): the caller goes on alone. While Redis is down the call is sent only as a
        probe (once per :data:`PROBE_INTERVAL`), unless ``even_when_down``."""
        if self.down and not even_when_down:
            now = self._clock()
            if now < self._next_probe:
                self.stats.inc_value("robotstxt/redis/fallback")
                return False, None
            self._next_probe = now + PROBE_INTERVAL  # this call is the probe: one at a time
        try:
            result = await call()
        except RedisUnavailable as exc:
            self._failed(exc)
        except RedisCommandError as exc:
            self._refused(exc)
        else:
            self.back()
            return True, result
        self.stats.inc_value("robotstxt/redis/fallback")
        return False, None

    def back(self) -> None:
        """Redis answered again (a call, or the slow-down listener's subscription)."""
        if not self.down:
            return
        self.down = False
        logger.warning(
            "Redis at %(url)s answers again: robots.txt and Crawl-delay are shared again",
            {"url": self.url},
            extra={"spider": self.spider()},
        )

    def _failed(self, exc: RedisUnavailable) -> None:
        self.stats.inc_value("robotstxt/redis/errors")
        self._next_probe = self._clock() + PROBE_INTERVAL
        if not self.down:
            self.down = True
            logger.warning(
                "Redis at %(url)s is unavailable (%(exc)s): this worker goes on alone with its "
                "own robots.txt downloads, cache and Crawl-delay until Redis answers again",
                {"url": self.url, "exc": exc},
                extra={"spider": self.spider()},
            )

    def _refused(self, exc: RedisCommandError) -> None:
        self.stats.inc_value("robotstxt/redis/command_errors")
        kind = _error_kind(exc)
        if kind not in self._command_errors_said:
            self._command_errors_said.add(kind)
            logger.warning(
                "Redis at %(url)s refused a command (%(exc)s): that decision is taken alone; "
                "Redis is still used for the rest (said once per kind of error)",
                {"url": self.url, "exc": exc},
                extra={"spider": self.spider()},
            )


def _error_kind(exc: RedisCommandError) -> str:
    """The kind of a command error: its exception class and Redis's error code (``OOM``,
    ``WRONGTYPE``, ``READONLY``, ...)."""
    name, _, message = str(exc).partition(": ")
    code = message.split(" ", 1)[0] if message[:1].isupper() else ""
    return f"{name} {code}".strip()
