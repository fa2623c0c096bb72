"""The cache: each origin's document in memory, bounded, least recently used out.

The middleware keeps one :class:`RobotsEntry` per origin (``scheme://host:port``). The
default backend, :class:`MemoryOriginCache`, is an ``OrderedDict`` bounded by
``RERP_CACHE_MAX_ORIGINS``. Another backend can be named with ``RERP_CACHE`` (a dotted path,
built with Scrapy's ``build_from_crawler``, like ``HTTPCACHE_STORAGE``):

* a synchronous one provides the :class:`OriginCache` methods. The middleware treats any
  exception from it as a cache failure: it logs it once, counts it, and carries on with an
  in-memory cache (:class:`FailoverCache`);
* a fleet's store (``is_shared = True``; ``RedisOriginCache``, :mod:`scrapy_rerp.fleet.store`)
  is no cache: it persists, and stands behind a ``MemoryOriginCache``, asked by the robots.txt
  downloads only (:class:`~scrapy_rerp.core.origins.Store`).

The public path of these names is ``scrapy_rerp.cache``, which re-exports them.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from scrapy_rerp.core import loggers
from scrapy_rerp.core.data import RobotsEntry

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.runtime import Stats

__all__ = ["FailoverCache", "MemoryOriginCache", "OriginCache", "RobotsEntry"]


logger = logging.getLogger(loggers.ROBOTSTXT)


class OriginCache(Protocol):
    """What the middleware needs from a cache backend."""

    def get(self, origin: str) -> RobotsEntry | None:
        """The entry for ``origin``, marking it recently used; None when absent."""

    def set(self, origin: str, entry: RobotsEntry) -> list[str]:
        """Store ``entry``; return the origins evicted to make room (may be empty)."""

    def delete(self, origin: str) -> None: ...

    def __len__(self) -> int: ...


class MemoryOriginCache:
    """An in-memory LRU cache of at most ``max_origins`` entries."""

    def __init__(self, max_origins: int = 10_000) -> None:
        if max_origins < 1:
            raise ValueError(f"max_origins must be >= 1, got {max_origins!r}")
        self.max_origins = max_origins
        self._entries: OrderedDict[str, RobotsEntry] = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MemoryOriginCache:
        from scrapy_rerp.core.settings import RerpSettings

        settings = RerpSettings.from_settings(crawler.settings, require_obey=False)
        return cls(settings.cache_max_origins)

    def get(self, origin: str) -> RobotsEntry | None:
        entry = self._entries.get(origin)
        if entry is not None:
            self._entries.move_to_end(origin)
        return entry

    def set(self, origin: str, entry: RobotsEntry) -> list[str]:
        self._entries[origin] = entry
        self._entries.move_to_end(origin)
        evicted: list[str] = []
        while len(self._entries) > self.max_origins:
            evicted.append(self._entries.popitem(last=False)[0])
        return evicted

    def delete(self, origin: str) -> None:
        self._entries.pop(origin, None)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, origin: object) -> bool:
        return origin in self._entries

    def origins(self) -> list[str]:
        """Cached origins, least recently used first."""
        return list(self._entries)


class FailoverCache:
    """The middleware's view of a backend: any exception from it is a cache failure, logged
    once at ERROR and counted, after which a fresh :class:`MemoryOriginCache` takes over.

    ``on_evicted(origin)`` is called for every origin the backend evicts, ``on_failover()``
    when the backend is replaced (every origin will be fetched again), so that what the
    middleware keeps beside an entry goes with it.
    """

    def __init__(
        self,
        backend: OriginCache,
        max_origins: int,
        *,
        stats: Stats,
        on_evicted: Callable[[str], None],
        on_failover: Callable[[], None],
        spider: Callable[[], Any] = lambda: None,
    ) -> None:
        self.backend = backend
        self.max_origins = max_origins
        self.stats = stats
        self._on_evicted = on_evicted
        self._on_failover = on_failover
        self._spider = spider

    def get(self, origin: str) -> RobotsEntry | None:
        try:
            return self.backend.get(origin)
        except Exception:
            self._failover("get")
            return self.backend.get(origin)

    def set(self, origin: str, entry: RobotsEntry) -> None:
        try:
            evicted = self.backend.set(origin, entry)
        except Exception:
            self._failover("set")
            evicted = self.backend.set(origin, entry)
        for old in evicted:
            self.stats.inc_value("robotstxt/cache/evicted")
            self._on_evicted(old)

    def _failover(self, operation: str) -> None:
        self.stats.inc_value("robotstxt/cache/errors")
        logger.error(
            "robots.txt cache %(cache)s failed on %(op)s; using an in-memory cache instead",
            {"cache": type(self.backend).__name__, "op": operation},
            exc_info=True,
            extra={"spider": self._spider()},
        )
        self.backend = MemoryOriginCache(self.max_origins)
        self._on_failover()
