"""Redis calls that may fail: one WARNING when Redis goes away and one when it is back, a count
of each failure, and the caller carries on alone meanwhile (its own downloads, local cache and
local Crawl-delay floors). Stats: ``robotstxt/redis/errors`` (failed calls),
``robotstxt/redis/fallback`` (decisions taken alone)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from scrapy_rerp.fleet.store import RedisUnavailable

__all__ = ["RedisGuard"]

logger = logging.getLogger("scrapy_rerp.middleware")

_T = TypeVar("_T")


class RedisGuard:
    """Runs the fleet's Redis calls; shared by the robots.txt sharing and the shared delay."""

    def __init__(self, url: str, stats: Any, spider: Callable[[], Any] = lambda: None) -> None:
        self.url = url
        self.stats = stats
        self._spider = spider
        self.down = False

    async def call(self, call: Callable[[], Awaitable[_T]]) -> tuple[bool, _T | None]:
        """``(True, result)``, or ``(False, None)`` when Redis failed (logged, counted)."""
        try:
            result = await call()
        except RedisUnavailable as exc:
            self._failed(exc)
            return False, None
        if self.down:
            self.down = False
            logger.warning(
                "Redis at %(url)s answers again: robots.txt and Crawl-delay are shared again",
                {"url": self.url},
                extra={"spider": self._spider()},
            )
        return True, result

    def _failed(self, exc: RedisUnavailable) -> None:
        self.stats.inc_value("robotstxt/redis/errors")
        self.stats.inc_value("robotstxt/redis/fallback")
        if not self.down:
            self.down = True
            logger.warning(
                "Redis at %(url)s is unavailable (%(exc)s): this worker goes on alone with its "
                "own robots.txt downloads, cache and Crawl-delay until Redis answers again",
                {"url": self.url, "exc": exc},
                extra={"spider": self._spider()},
            )
