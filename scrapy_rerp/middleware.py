"""``RobotsTxtMiddleware``: robots.txt per origin, with RFC 9309's status policy and expiry.

A drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``
(enable it at the same priority, 100, and disable Scrapy's; ``scrapy_rerp.Addon`` does both).

How a request goes through :meth:`RobotsTxtMiddleware.process_request`:

* skipped when ``dont_obey_robotstxt`` is set or the URL is ``data:``/``file:`` (as Scrapy);
* its origin (scheme, host, port) is looked up in the origin cache. Fresh rules decide at
  once; expired rules still decide while one background refetch runs;
* with no rules yet (robots.txt downloading, or the origin unreachable), the request is
  *parked* outside the downloader (:mod:`scrapy_rerp._parking`) while the origin's single
  robots.txt download runs (:mod:`scrapy_rerp._fetcher`), and handed back to the engine once
  the rules are known: a slow or dead origin holds none of the crawl's concurrency;
* an origin that stays unreachable for ``RERP_UNREACHABLE_MAX_WAIT`` seconds from its first
  failed fetch has its parked requests dropped with ``IgnoreRequest``; later requests for it are
  dropped at once until a retry (at the backoff rate, only while requests want the origin)
  succeeds;
* with ``RERP_USAGE`` set, a URL that robots.txt marks as not for the crawl's purpose is dropped
  before its download, and a page whose ``Content-Usage`` header says so before the spider sees
  it (:mod:`scrapy_rerp._usage_policy`).

This module glues the parts together and speaks to Scrapy: the status policy is
:mod:`scrapy_rerp._policy`, the downloads :mod:`scrapy_rerp._fetcher`, the waiting
:mod:`scrapy_rerp._parking`, the Crawl-delay floors :mod:`scrapy_rerp._slots` and the sitemaps
:mod:`scrapy_rerp._sitemaps`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request, Response
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.python import to_unicode

from scrapy_rerp._fetcher import Fetched, Flight, OriginFetcher
from scrapy_rerp._fleet import DelayGate, Fleet
from scrapy_rerp._parking import (
    ERROR,
    PARK_LIMIT,
    UNREACHABLE,
    ParkingLot,
    drop_verdict,
    restore_dont_filter,
)
from scrapy_rerp._resume import ResumeStore
from scrapy_rerp._settings import CLOSE_REASON, RerpSettings, settings_for
from scrapy_rerp._sitemaps import RobotsTxtForTheSpider, SitemapDiscovery
from scrapy_rerp._slots import CrawlDelayFloors
from scrapy_rerp._urls import (
    crawl_allowed,
    crawl_decision,
    origin_of,
    origin_of_parts,
    robots_url_of,
)
from scrapy_rerp._usage_policy import UsagePolicy
from scrapy_rerp.cache import FailoverCache, MemoryOriginCache, OriginCache, RobotsEntry
from scrapy_rerp.robotparser import RerpRobotParser

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

    from scrapy_rerp.engine import RobotsTxt


__all__ = ["RobotsTxtMiddleware"]

logger = logging.getLogger(__name__)

#: URL schemes with a robots.txt (RFC 9309 2.3: any URI-based protocol with a /robots.txt).
_OBEYED_SCHEMES = ("http:", "https:", "ftp:")


class RobotsTxtMiddleware:
    """Obey robots.txt, one download per origin, with RFC 9309's status policy and expiry.

    Stats (all under ``robotstxt/``) and settings are documented in docs/stats.rst and
    docs/settings.rst.
    """

    def __init__(
        self,
        crawler: Crawler,
        settings: RerpSettings,
        cache: OriginCache,
        floors: CrawlDelayFloors | None = None,
        sitemaps: SitemapDiscovery | None = None,
        fleet: Fleet | None = None,
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self._cache = FailoverCache(
            cache,
            settings.cache_max_origins,
            self.stats,
            on_evicted=self._forget,
            on_failover=self._forget_all,
            spider=lambda: crawler.spider,
        )
        self._floors = floors
        self._sitemaps = sitemaps
        self.fleet = fleet
        self.fetcher = OriginFetcher(crawler, settings, self, fleet)
        self.lot = ParkingLot(crawler, settings.max_parked_per_origin, on_closing=self._closing)
        self._resume = ResumeStore(crawler)
        self._gate = DelayGate(fleet, self.lot) if fleet is not None and floors else None
        self._for_spider = RobotsTxtForTheSpider(self.stats)
        self._usage = UsagePolicy(crawler, settings) if settings.usage else None
        crawler.signals.connect(self._for_spider.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self | _Misconfigured:
        settings = settings_for(crawler)
        if settings is None:
            # A bad setting, logged once: the crawl closes as the spider opens.
            return _Misconfigured()
        if not settings.obey:
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        cache_cls = load_object(settings.cache)
        backend = build_from_crawler(cache_cls, crawler)
        fleet = None
        if getattr(backend, "is_shared", False):
            # A fleet's shared store is asked by the downloads only; requests read a local
            # LRU in front of it.
            fleet = Fleet(crawler, settings, backend)
            backend = MemoryOriginCache(settings.cache_max_origins)
        floors = CrawlDelayFloors.from_crawler(crawler, settings) if settings.floors else None
        sitemaps = SitemapDiscovery.from_crawler(crawler, settings)
        return cls(crawler, settings, backend, floors, sitemaps, fleet)

    # -- the downloader middleware API -------------------------------------------------------
    def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Response | Awaitable[None] | None:
        if request.meta.get("dont_obey_robotstxt"):
            return None
        url = request.url
        if not url.startswith(_OBEYED_SCHEMES):
            # data:, file:, s3: and the like have no robots.txt; Scrapy skips data: and
            # file: only, and for others an error fetching robots.txt meant "allow all".
            return None
        if self.lot.came_back(request):
            return self._wait_in_place(request)
        return self._process(request)

    def _process(self, request: Request) -> Request | Response | Awaitable[None] | None:
        """Decide ``request``, or park it (returned as it is) until its origin's rules come."""
        url = request.url
        restore_dont_filter(request)
        message = drop_verdict(request)
        if message is not None:
            logger.debug(
                "Dropped %(request)s: %(message)s",
                {"request": request, "message": message},
                extra={"spider": self.crawler.spider},
            )
            raise IgnoreRequest(message)
        origin = origin_of_parts(urlparse_cached(request))  # parsed once per request
        is_robots_url = url.endswith("/robots.txt") and self._for_spider.is_robots_url(url)
        if is_robots_url and self._for_spider.has(origin):
            return self._for_spider.serve(origin, request)
        entry = self._cache.get(origin)
        if entry is not None and entry.robots is not None:
            if entry.expired() and not self.fetcher.busy(origin):
                self.stats.inc_value("robotstxt/refresh_count")
                self.fetcher.start(origin, robots_url_of(url), request, entry)
            self._decide(entry.robots, request)
            if self._gate is not None and self._floors is not None:
                floor = self._floors.floor_of(origin)
                if floor is not None:
                    return self._gate.admit(origin, request, floor)
            return None
        return self._park(origin, request, entry, is_robots_url)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        """With ``RERP_USAGE``: the page's ``Content-Usage`` header, combined with what
        robots.txt said, before the spider sees it (:mod:`scrapy_rerp._usage_policy`)."""
        if (
            self._usage is None
            or request.meta.get("dont_obey_robotstxt")
            or not request.url.startswith(_OBEYED_SCHEMES)
            or request.url.endswith("/robots.txt")
        ):
            return response
        self._usage.check_response(request, response)
        return response

    # -- public helpers ----------------------------------------------------------------------
    def robots_for(self, url: str) -> RobotsTxt | None:
        """The rules currently applied to the origin of ``url`` (None if not known yet)."""
        entry = self.entry_for(url)
        return None if entry is None else entry.robots

    def entry_for(self, url: str) -> RobotsEntry | None:
        """What is known of the robots.txt of the origin of ``url``: rules, status, outcome."""
        return self._cache.get(origin_of(url))

    def user_agent_for(self, request: Request) -> str:
        """The user agent robots.txt is matched against for ``request``."""
        if self.settings.user_agent:
            return self.settings.user_agent
        header = request.headers.get(b"User-Agent")
        if header:
            return to_unicode(header, errors="replace")
        return self.settings.default_user_agent

    # -- deciding ----------------------------------------------------------------------------
    def _decide(self, robots: RobotsTxt, request: Request) -> None:
        user_agent = self.user_agent_for(request)
        if crawl_allowed(robots, request.url, user_agent):
            if self._usage is not None:
                self._usage.check_request(robots, request, user_agent)
            return
        self.stats.inc_value("robotstxt/forbidden")
        if logger.isEnabledFor(logging.DEBUG):  # naming the line costs a second, slower check
            self._log_forbidden(robots, request, user_agent)
        raise IgnoreRequest("Forbidden by robots.txt")

    def _log_forbidden(self, robots: RobotsTxt, request: Request, user_agent: str) -> None:
        decision = crawl_decision(robots, request.url, user_agent)
        logger.debug(
            "Forbidden by robots.txt: %(request)s (%(robots)s line %(line)s: %(rule)s; %(reason)s)",
            {
                "request": request,
                "robots": robots_url_of(request.url),
                "line": decision.line,
                "rule": decision.rule,
                "reason": decision.reason,
            },
            extra={"spider": self.crawler.spider},
        )

    async def _wait_in_place(self, request: Request) -> Response | None:
        """A parked request the engine downloads again without scheduling it (media pipelines
        and extensions call ``engine.download_async``, which downloads a returned request at
        once): it waits here for its origin, within the same limits, then goes on or fails."""
        while True:
            message = await self.lot.wait_in_place(request)
            if message is not None:
                logger.debug(
                    "Dropped %(request)s: %(message)s",
                    {"request": request, "message": message},
                    extra={"spider": self.crawler.spider},
                )
                raise IgnoreRequest(message)
            result = self._process(request)
            if result is request:
                continue  # parked again (a refetch is due, or its Crawl-delay turn): wait again
            if isinstance(result, (Request, Response)) or result is None:
                return result  # type: ignore[return-value]
            await result
            return None

    # -- parking -----------------------------------------------------------------------------
    def _park(
        self, origin: str, request: Request, entry: RobotsEntry | None, is_robots_url: bool
    ) -> Request:
        """Take a request with no usable rules out of the downloader until its origin's rules
        are known (or drop it: outage past the limit, too many parked, crawl closing)."""
        if entry is not None and not entry.expired() and self._outage_over(entry):
            # Known dead for longer than the limit, and no retry due yet.
            self.lot.count_dropped_at_once(UNREACHABLE)
            raise IgnoreRequest(self._unreachable_message(origin))
        refused = self.lot.park(origin, request)
        if refused is not None:
            if refused == PARK_LIMIT:
                logger.warning(
                    "Dropped %(request)s: %(max)d requests of %(origin)s already wait for its "
                    "robots.txt (RERP_MAX_PARKED_PER_ORIGIN)",
                    {"request": request, "max": self.lot.max_per_origin, "origin": origin},
                    extra={"spider": self.crawler.spider},
                )
                raise IgnoreRequest(f"too many requests wait for robots.txt of {origin}")
            raise IgnoreRequest("crawl closing")
        if is_robots_url:
            self._for_spider.want(origin)
        if not self.fetcher.busy(origin):
            # During an outage, the next attempt waits for its backoff time.
            delay = max(0.0, entry.expires_at - time.time()) if entry is not None else 0.0
            self.fetcher.start(origin, robots_url_of(request.url), request, entry, delay)
        return request

    def _outage_over(self, entry: RobotsEntry) -> bool:
        since = entry.outage_since
        return since is not None and time.time() - since >= self.settings.unreachable_max_wait

    def _unreachable_message(self, origin: str) -> str:
        return (
            f"robots.txt of {origin} unreachable for more than "
            f"{self.settings.unreachable_max_wait:g}s"
        )

    # -- what the fetcher reports (FlightHandler) --------------------------------------------
    async def rules_fetched(
        self, flight: Flight, entry: RobotsEntry, fetched: Fetched | None
    ) -> None:
        origin = flight.origin
        if fetched is not None:
            self._for_spider.keep(origin, fetched.response)
        await self._parsed(flight, entry)
        # Stored only now: requests arriving meanwhile park like the others, so none is
        # downloaded before the Crawl-delay floor and the signal.
        self._cache.set(origin, entry)
        self.lot.release(origin)

    def stale_copy_kept(self, flight: Flight, entry: RobotsEntry, fetched: Fetched) -> None:
        logger.info(
            "robots.txt of %(origin)s unreachable (%(reason)s); keeping the copy "
            "fetched %(age)ds ago, retrying in %(backoff).2fs",
            {
                "origin": flight.origin,
                "reason": fetched.reason,
                "age": time.time() - entry.fetched_at,
                "backoff": entry.expires_at - time.time(),
            },
            extra={"spider": self.crawler.spider},
        )
        self.stats.inc_value("robotstxt/unreachable/stale_copy_kept")
        self._cache.set(flight.origin, entry)
        self.lot.release(flight.origin)

    def unreachable(self, flight: Flight, entry: RobotsEntry, fetched: Fetched) -> None:
        self._cache.set(flight.origin, entry)
        logger.info(
            "robots.txt of %(origin)s unreachable (%(reason)s); %(n)d request(s) wait, "
            "retry %(failures)d in %(backoff).2fs",
            {
                "origin": flight.origin,
                "reason": fetched.reason,
                "n": self.lot.count(flight.origin),
                "failures": entry.failures,
                "backoff": entry.expires_at - time.time(),
            },
            extra={"spider": self.crawler.spider},
        )

    def retry_wait(self, flight: Flight, entry: RobotsEntry) -> float | None:
        origin = flight.origin
        waiting = self.lot.count(origin)
        if waiting == 0:
            return None
        now = time.time()
        deadline = (entry.outage_since or now) + self.settings.unreachable_max_wait
        if now >= deadline:
            message = self._unreachable_message(origin)
            logger.warning(
                "Dropping %(n)d request(s): %(message)s",
                {"n": waiting, "message": message},
                extra={"spider": self.crawler.spider},
            )
            self.lot.drop(origin, UNREACHABLE, message)
            return None
        return max(0.0, min(entry.expires_at, deadline) - now)

    def fleet_floor(self, flight: Flight, robots: RobotsTxt | None) -> float | None:
        if self._gate is None or self._floors is None or robots is None:
            return None
        return self._floors.floor_for(robots, self.user_agent_for(flight.trigger))

    def flight_failed(self, flight: Flight) -> None:
        self.lot.drop(flight.origin, ERROR, f"robots.txt handling of {flight.origin} failed")

    async def _parsed(self, flight: Flight, entry: RobotsEntry) -> None:
        """After each successful fetch, before the waiting requests resume."""
        robots = entry.robots
        assert robots is not None
        origin = flight.origin
        user_agent = self.user_agent_for(flight.trigger)
        if self._floors is not None:
            try:
                self._floors.set_floor(origin, robots, user_agent)
            except Exception:
                logger.exception("Could not apply the Crawl-delay of %s", origin)
        if self._sitemaps is not None:
            try:
                self._sitemaps.robots_parsed(origin, entry.url or flight.robots_url, robots)
            except Exception:
                logger.exception("Could not schedule the sitemaps of %s", origin)
        await self.crawler.signals.send_catch_log_async(
            signal=signals.robots_parsed,
            robotparser=RerpRobotParser.from_robots(robots),
            request=flight.trigger,
        )

    # -- closing -----------------------------------------------------------------------------
    def _closing(self) -> None:
        """The engine has started to close: parked requests are kept for a resumed crawl or
        dropped, retries end."""
        if not self.lot.closed:
            self.lot.close(keep=self._resume.persists)
        self.fetcher.stop()
        if self._gate is not None:
            self._gate.stop()

    async def _spider_closed(self, spider: Spider) -> None:
        self._closing()  # if the engine closed between two checks
        kept = self.lot.take_kept()
        if kept:
            self._resume.keep(kept)
        self.fetcher.cancel_all()  # background refetches end with the crawl
        self._for_spider.clear()
        if self.fleet is not None:
            await self.fleet.close()

    # -- what is kept per origin beside the cache entry -------------------------------------
    def _forget(self, origin: str) -> None:
        """Drop what is kept per origin beside the cache entry (evicted, or cache lost)."""
        self._for_spider.forget(origin)
        if self._sitemaps is not None:
            self._sitemaps.forget(origin)
        if self._floors is not None:
            try:
                self._floors.clear_floor(origin)
            except Exception:
                logger.exception("Could not clear the Crawl-delay of %s", origin)

    def _forget_all(self) -> None:
        """The cache backend failed and an empty one took over: every origin starts again."""
        if self._floors is not None:
            for origin in self._floors.floored_origins():
                self._forget(origin)
        if self._sitemaps is not None:
            self._sitemaps.forget_all()


class _Misconfigured:
    """Stands in for the middleware when a setting is bad (:func:`settings_for` logged it):
    Scrapy closes the spider as it opens, and should a request come before, it is not
    downloaded."""

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        raise IgnoreRequest(f"scrapy_rerp settings are invalid ({CLOSE_REASON})")

    def __repr__(self) -> str:
        return "<scrapy_rerp.RobotsTxtMiddleware: invalid settings>"
