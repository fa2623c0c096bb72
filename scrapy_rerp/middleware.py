"""``RobotsTxtMiddleware``: robots.txt per origin, with RFC 9309's status policy and expiry.

A drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``
(enable it at the same priority, 100, and disable Scrapy's; ``scrapy_rerp.Addon`` does both).

How a request goes through :meth:`RobotsTxtMiddleware.process_request`:

* skipped when ``dont_obey_robotstxt`` is set or the URL is ``data:``/``file:`` (as Scrapy);
* its origin (scheme, host, port) is looked up in the origin cache. Fresh rules decide at
  once; expired rules still decide while one background refetch runs;
* with no rules yet, the request waits for the origin's single robots.txt download (one
  per origin however many requests arrive), which goes through
  ``crawler.engine.download_async`` and so through the other downloader middlewares;
* while the origin is unreachable (5xx, 429, network error) and no earlier copy exists, the
  request is held while robots.txt is retried with exponential backoff; after
  ``RERP_UNREACHABLE_MAX_WAIT`` seconds of outage it is dropped with ``IgnoreRequest``.

Redirects and retries of the robots.txt request are handled here rather than by Scrapy's
Redirect/Retry/Offsite middlewares: a redirect must be followed to any host (OffsiteMiddleware
would silently drop it) and a failure must hold the origin, not end in "allow all".
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Request, Response
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.asyncio import call_later, sleep
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.python import to_unicode
from twisted.internet.defer import CancelledError, Deferred
from twisted.python.failure import Failure

from scrapy_rerp._settings import RerpSettings
from scrapy_rerp._sitemaps import SitemapDiscovery
from scrapy_rerp._slots import CrawlDelayFloors
from scrapy_rerp._urls import origin_of, origin_of_parts, robots_url_of
from scrapy_rerp.cache import MemoryOriginCache, OriginCache, RobotsEntry
from scrapy_rerp.engine import RobotsTxt
from scrapy_rerp.robotparser import RerpRobotParser, charset_from_content_type, parse_body

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from scrapy.utils.asyncio import CallLaterResult
    from typing_extensions import Self


__all__ = ["RobotsTxtMiddleware"]

logger = logging.getLogger(__name__)

#: Request.meta key on robots.txt requests made here: the origin they are for.
META_KEY = "rerp_robots_origin"

_MAX_AGE = re.compile(r"(?:^|[,\s])max-age\s*=\s*\"?(\d+)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|[,\s])(?:no-cache|no-store)(?:$|[,\s=])", re.IGNORECASE)

#: URL schemes with a robots.txt (RFC 9309 2.3: any URI-based protocol with a /robots.txt).
_OBEYED_SCHEMES = ("http:", "https:", "ftp:")

# Outcomes of one robots.txt fetch (RobotsEntry.outcome).
PARSED, ALLOW_ALL, DISALLOW_ALL, UNREACHABLE = "parsed", "allow-all", "disallow-all", "unreachable"


@dataclass
class _Fetched:
    """The result of downloading robots.txt once (following redirects)."""

    outcome: str
    robots: RobotsTxt | None = None
    status: int | None = None
    url: str | None = None
    lifetime: float | None = None  # from HTTP headers; None = the default
    retry_after: float | None = None
    response: Response | None = None
    reason: str = ""


@dataclass(eq=False)
class _Waiter:
    request: Request
    deferred: Deferred[RobotsTxt | None] = field(default_factory=Deferred)
    timer: CallLaterResult | None = None


@dataclass(eq=False)
class _Flight:
    """The one robots.txt download of an origin, and the requests waiting for it."""

    origin: str
    robots_url: str
    trigger: Request  # the request that caused the download (sent with robots_parsed)
    waiters: list[_Waiter] = field(default_factory=list)
    in_outage: bool = False
    keep_response: bool = False  # a request for the robots.txt URL itself is waiting

    def release(self, robots: RobotsTxt | None) -> None:
        """Resume every waiting request: with rules, or with None (= drop it)."""
        waiters, self.waiters = self.waiters, []
        for waiter in waiters:
            if waiter.timer is not None:
                waiter.timer.cancel()
            if not waiter.deferred.called:
                waiter.deferred.callback(robots)


class RobotsTxtMiddleware:
    """Obey robots.txt, one download per origin, with RFC 9309's status policy and expiry.

    Stats (all under ``robotstxt/``) and settings are documented in the README.
    """

    DOWNLOAD_PRIORITY: int = 1000

    def __init__(
        self,
        crawler: Crawler,
        settings: RerpSettings,
        cache: OriginCache,
        floors: CrawlDelayFloors | None = None,
        sitemaps: SitemapDiscovery | None = None,
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self._cache = cache
        self._floors = floors
        self._sitemaps = sitemaps
        self._flights: dict[str, _Flight] = {}
        self._tasks: set[Deferred[None]] = set()
        # Responses kept for the spider's own requests of robots.txt URLs (SitemapSpider):
        # served once instead of a second download. Bounded by the spider's sitemap_urls.
        self._wanted_robots: set[str] = set()
        self._kept: dict[str, Response] = {}
        self._receiving = 0  # robots.txt downloads in progress (bytes_received connected)
        maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self._download_maxsize = maxsize and max(maxsize, 64 * settings.max_size)
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = RerpSettings.from_settings(crawler.settings)
        cache_cls = load_object(settings.cache)
        cache: OriginCache = build_from_crawler(cache_cls, crawler)
        floors = CrawlDelayFloors.from_crawler(crawler, settings) if settings.crawl_delay else None
        sitemaps = SitemapDiscovery.from_crawler(crawler, settings)
        return cls(crawler, settings, cache, floors, sitemaps)

    # -- the downloader middleware API -------------------------------------------------------
    async def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Response | None:
        if request.meta.get("dont_obey_robotstxt"):
            return None
        url = request.url
        if not url.startswith(_OBEYED_SCHEMES):
            # data:, file:, s3: and the like have no robots.txt; Scrapy skips data: and
            # file: only, and for others an error fetching robots.txt meant "allow all".
            return None
        origin = origin_of_parts(urlparse_cached(request))  # parsed once per request
        is_robots_url = url.endswith("/robots.txt") and self._is_robots_url(url)
        if is_robots_url and origin in self._kept:
            return self._serve_kept(origin, request)
        entry = self._cache_get(origin)
        if entry is not None and entry.robots is not None:
            if entry.expired() and origin not in self._flights:
                self.stats.inc_value("robotstxt/refresh_count")
                self._launch(self._new_flight(origin, request), entry, delay=0.0)
            robots = entry.robots
        else:
            robots = await self._wait(origin, request, entry, is_robots_url)
            if robots is None:
                self._drop(origin, request)
            if is_robots_url and origin in self._kept:
                return self._serve_kept(origin, request)
        self._decide(robots, request, origin)
        return None

    # -- public helpers ----------------------------------------------------------------------
    def robots_for(self, url: str) -> RobotsTxt | None:
        """The rules currently applied to the origin of ``url`` (None if not known yet)."""
        entry = self._cache_get(origin_of(url))
        return None if entry is None else entry.robots

    def user_agent_for(self, request: Request) -> str:
        """The user agent robots.txt is matched against for ``request``."""
        if self.settings.user_agent:
            return self.settings.user_agent
        header = request.headers.get(b"User-Agent")
        if header:
            return to_unicode(header, errors="replace")
        return self.settings.default_user_agent

    # -- deciding ----------------------------------------------------------------------------
    def _decide(self, robots: RobotsTxt, request: Request, origin: str) -> None:
        user_agent = self.user_agent_for(request)
        if robots.allowed(request.url, user_agent):
            return
        self.stats.inc_value("robotstxt/forbidden")
        if logger.isEnabledFor(logging.DEBUG):  # naming the line costs a second, slower check
            self._log_forbidden(robots, request, user_agent)
        raise IgnoreRequest("Forbidden by robots.txt")

    def _log_forbidden(self, robots: RobotsTxt, request: Request, user_agent: str) -> None:
        decision = robots.decide(request.url, user_agent)
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

    def _drop(self, origin: str, request: Request) -> None:
        logger.warning(
            "Dropped %(request)s: robots.txt of %(origin)s unreachable for more than %(wait)ss",
            {"request": request, "origin": origin, "wait": self.settings.unreachable_max_wait},
            extra={"spider": self.crawler.spider},
        )
        self.stats.inc_value("robotstxt/unreachable/dropped")
        raise IgnoreRequest(f"robots.txt of {origin} unreachable")

    # -- waiting -----------------------------------------------------------------------------
    async def _wait(
        self, origin: str, request: Request, entry: RobotsEntry | None, is_robots_url: bool
    ) -> RobotsTxt | None:
        flight = self._flights.get(origin)
        new = flight is None
        if flight is None:
            flight = self._new_flight(origin, request)
            flight.in_outage = entry is not None  # only unreachable entries get here
        waiter = _Waiter(request)
        flight.waiters.append(waiter)
        flight.keep_response = flight.keep_response or is_robots_url
        if flight.in_outage:
            self._hold(flight, waiter)
        if new:
            # Started once the waiter is in: without an asyncio loop the coroutine runs
            # synchronously up to its first real wait, and must not finish without it.
            # During an outage, the next attempt waits for its backoff time.
            delay = max(0.0, entry.expires_at - time.time()) if entry is not None else 0.0
            self._launch(flight, entry, delay)
        return await maybe_deferred_to_future(waiter.deferred)

    def _hold(self, flight: _Flight, waiter: _Waiter) -> None:
        """Start the clock on a request held because its origin is unreachable."""
        if waiter.timer is not None:
            return
        self.stats.inc_value("robotstxt/unreachable/held")
        waiter.timer = call_later(
            self.settings.unreachable_max_wait, self._expire_waiter, flight, waiter
        )

    @staticmethod
    def _expire_waiter(flight: _Flight, waiter: _Waiter) -> None:
        if waiter in flight.waiters:
            flight.waiters.remove(waiter)
        if not waiter.deferred.called:
            waiter.deferred.callback(None)

    # -- fetching ----------------------------------------------------------------------------
    def _new_flight(self, origin: str, request: Request) -> _Flight:
        flight = _Flight(origin, robots_url_of(request.url), request)
        self._flights[origin] = flight
        return flight

    def _launch(self, flight: _Flight, previous: RobotsEntry | None, delay: float) -> None:
        task = deferred_from_coro(self._fly(flight, previous, delay))
        if not task.called:
            self._tasks.add(task)
        task.addBoth(self._task_done, task)

    def _task_done(self, result: Any, task: Deferred[None]) -> None:
        self._tasks.discard(task)
        if isinstance(result, Failure) and not result.check(
            CancelledError, asyncio.CancelledError
        ):  # a bug here, never a site's fault
            logger.error(
                "robots.txt handling failed: %s",
                result.getTraceback(),
                extra={"spider": self.crawler.spider},
            )

    async def _fly(self, flight: _Flight, previous: RobotsEntry | None, delay: float) -> None:
        origin = flight.origin
        try:
            if delay > 0:
                await sleep(delay)
            while True:
                fetched = await self._fetch(flight)
                now = time.time()
                if fetched.robots is not None:
                    entry = RobotsEntry(
                        robots=fetched.robots,
                        fetched_at=now,
                        expires_at=now + self._lifetime(fetched),
                        status=fetched.status,
                        url=fetched.url,
                        outcome=fetched.outcome,
                    )
                    if fetched.response is not None and (
                        flight.keep_response or origin in self._wanted_robots
                    ):
                        self._kept[origin] = fetched.response
                    await self._parsed(flight, entry)
                    # Stored only now: requests arriving meanwhile wait like the others, so
                    # none is downloaded before the Crawl-delay floor and the signal.
                    self._cache_set(origin, entry)
                    flight.release(entry.robots)
                    return
                failures = (previous.failures if previous is not None else 0) + 1
                backoff = self._backoff(failures, fetched.retry_after)
                self.stats.inc_value("robotstxt/unreachable/count")
                if previous is not None and previous.robots is not None:
                    # An earlier good copy keeps serving; retry once it "expires" again.
                    logger.info(
                        "robots.txt of %(origin)s unreachable (%(reason)s); keeping the copy "
                        "fetched %(age)ds ago, retrying in %(backoff).2fs",
                        {
                            "origin": origin,
                            "reason": fetched.reason,
                            "age": now - previous.fetched_at,
                            "backoff": backoff,
                        },
                        extra={"spider": self.crawler.spider},
                    )
                    self.stats.inc_value("robotstxt/unreachable/stale_copy_kept")
                    previous = previous.with_(
                        expires_at=now + backoff,
                        failures=failures,
                        outage_since=previous.outage_since or now,
                    )
                    self._cache_set(origin, previous)
                    flight.release(previous.robots)
                    return
                previous = RobotsEntry(
                    robots=None,
                    fetched_at=now,
                    expires_at=now + backoff,
                    status=fetched.status,
                    url=fetched.url,
                    outcome=UNREACHABLE,
                    failures=failures,
                    outage_since=(previous.outage_since if previous is not None else None) or now,
                )
                self._cache_set(origin, previous)
                logger.info(
                    "robots.txt of %(origin)s unreachable (%(reason)s); holding %(n)d "
                    "request(s), retry %(failures)d in %(backoff).2fs",
                    {
                        "origin": origin,
                        "reason": fetched.reason,
                        "n": len(flight.waiters),
                        "failures": failures,
                        "backoff": backoff,
                    },
                    extra={"spider": self.crawler.spider},
                )
                flight.in_outage = True
                for waiter in list(flight.waiters):
                    self._hold(flight, waiter)
                if not flight.waiters:
                    return
                await sleep(backoff)
                if not flight.waiters:
                    return  # every held request was dropped; the next one restarts retrying
                self.stats.inc_value("robotstxt/retry_count")
        finally:
            if self._flights.get(origin) is flight:
                del self._flights[origin]
            # Only reachable with waiters left on an unexpected error: never leave them hanging.
            flight.release(None)

    async def _parsed(self, flight: _Flight, entry: RobotsEntry) -> None:
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

    async def _fetch(self, flight: _Flight) -> _Fetched:
        """Download robots.txt once, following up to RERP_MAX_REDIRECTS redirects."""
        s = self.settings
        url = flight.robots_url
        for hop in range(s.max_redirects + 1):
            try:
                request = self._robots_request(url, flight.origin)
            except ValueError as exc:  # e.g. a Location that is no URL Scrapy can fetch
                self.stats.inc_value("robotstxt/redirect/invalid")
                return self._unavailable(f"bad redirect target {url!r}: {exc}", None, url)
            self.stats.inc_value("robotstxt/request_count")
            try:
                response = await self._download(request)
            except IgnoreRequest as exc:
                # Another middleware refused to download it: like Scrapy, rules are unknown,
                # so allow all (but say so).
                self.stats.inc_value("robotstxt/ignored")
                logger.warning(
                    "robots.txt request %(request)s ignored (%(exc)s); allowing all of %(origin)s",
                    {"request": request, "exc": exc, "origin": flight.origin},
                    extra={"spider": self.crawler.spider},
                )
                return _Fetched(ALLOW_ALL, RobotsTxt.allow_all(s.syntax), url=url, reason="ignored")
            except Exception as exc:
                self.stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
                return _Fetched(UNREACHABLE, url=url, reason=f"{type(exc).__name__}: {exc}")
            status = response.status
            self.stats.inc_value("robotstxt/response_count")
            self.stats.inc_value(f"robotstxt/response_status_count/{status}")
            if 300 <= status < 400:
                location = response.headers.get(b"Location")
                if not location:
                    return self._unavailable(f"{status} without Location", status, response.url)
                if hop == s.max_redirects:
                    self.stats.inc_value("robotstxt/redirect/limit")
                    return self._unavailable(
                        f"more than {s.max_redirects} redirects", status, response.url
                    )
                self.stats.inc_value("robotstxt/redirect/count")
                url = urljoin(response.url, to_unicode(location, errors="replace"))
                continue
            if 200 <= status < 300:
                return self._parse(response, request)
            if status == 429 or status >= 500:
                return _Fetched(
                    UNREACHABLE,
                    status=status,
                    url=response.url,
                    retry_after=_retry_after(response),
                    reason=f"HTTP {status}",
                )
            if 400 <= status < 500:
                if s.legacy and status in (401, 403):
                    # mk1996/gym2008, as rerp's fetch(): access denied means stay out.
                    self.stats.inc_value(f"robotstxt/disallow_all/{status}")
                    return _Fetched(
                        DISALLOW_ALL,
                        RobotsTxt.disallow_all(s.syntax),
                        status,
                        response.url,
                        response=response,
                        reason=f"HTTP {status}",
                    )
                return self._unavailable(f"HTTP {status}", status, response.url, response)
            return _Fetched(UNREACHABLE, status=status, url=response.url, reason=f"HTTP {status}")
        raise AssertionError("unreachable")  # pragma: no cover

    def _unavailable(
        self, reason: str, status: int | None, url: str | None, response: Response | None = None
    ) -> _Fetched:
        """RFC 9309 2.3.1.3: robots.txt unavailable (4xx, too many redirects): allow all."""
        self.stats.inc_value("robotstxt/allow_all")
        return _Fetched(
            ALLOW_ALL,
            RobotsTxt.allow_all(self.settings.syntax),
            status,
            url,
            response=response,
            reason=reason,
        )

    def _parse(self, response: Response, request: Request) -> _Fetched:
        s = self.settings
        body = response.body
        if len(body) > s.max_size or request.meta.get("_rerp_truncated"):
            self.stats.inc_value("robotstxt/truncated")
            logger.info(
                "robots.txt %(url)s is larger than RERP_MAX_SIZE (%(max)d bytes): "
                "only the first %(max)d bytes are used",
                {"url": response.url, "max": s.max_size},
                extra={"spider": self.crawler.spider},
            )
            body = body[: s.max_size]
        charset = charset_from_content_type(response.headers.get(b"Content-Type"))
        robots = parse_body(body, s.syntax, charset or s.default_charset)
        return _Fetched(
            PARSED,
            robots,
            response.status,
            response.url,
            lifetime=_lifetime_from_headers(response),
            response=response,
            reason=f"HTTP {response.status}",
        )

    def _robots_request(self, url: str, origin: str) -> Request:
        return Request(
            url,
            priority=self.DOWNLOAD_PRIORITY,
            callback=NO_CALLBACK,
            dont_filter=True,
            meta={
                "dont_obey_robotstxt": True,
                # Redirects and retries are handled in _fetch()/_fly(), see the module doc.
                "dont_redirect": True,
                "dont_retry": True,
                "allow_offsite": True,
                "handle_httpstatus_all": True,
                # The size cap is RERP_MAX_SIZE, enforced in _bytes_received(); this one
                # must not cancel a large file up front (Content-Length), and still bounds
                # decompression (a gzip bomb) as DOWNLOAD_MAXSIZE does.
                "download_maxsize": self._download_maxsize,
                "download_warnsize": 0,
                META_KEY: origin,
            },
        )

    async def _download(self, request: Request) -> Response:
        engine = self.crawler.engine
        assert engine is not None
        if self._receiving == 0:
            # Connected only while robots.txt downloads run: the handler would otherwise be
            # called for every chunk of every page of the crawl.
            self.crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
        self._receiving += 1
        try:
            if hasattr(engine, "download_async"):
                return await engine.download_async(request)
            return await maybe_deferred_to_future(engine.download(request))  # Scrapy < 2.14
        finally:
            self._receiving -= 1
            if self._receiving == 0:
                self.crawler.signals.disconnect(self._bytes_received, signal=signals.bytes_received)

    def _bytes_received(self, data: bytes, request: Request, spider: Spider | None = None) -> None:
        meta = request.meta
        if META_KEY not in meta:
            return
        received = meta.get("_rerp_received", 0) + len(data)
        meta["_rerp_received"] = received
        if received >= self.settings.max_size:
            meta["_rerp_truncated"] = True
            # The rest is never downloaded; the response keeps what arrived so far.
            raise StopDownload(fail=False)

    # -- expiry and backoff ------------------------------------------------------------------
    def _lifetime(self, fetched: _Fetched) -> float:
        if fetched.outcome == PARSED:
            return self.settings.clamp_lifetime(fetched.lifetime)
        return self.settings.error_lifetime

    def _backoff(self, failures: int, retry_after: float | None) -> float:
        s = self.settings
        backoff = s.retry_backoff_base * 2 ** min(failures - 1, 30)
        if retry_after is not None:
            backoff = max(backoff, retry_after)
        return min(backoff, s.retry_backoff_max)

    # -- robots.txt requested by the spider itself (SitemapSpider) ---------------------------
    def _spider_opened(self, spider: Spider) -> None:
        for url in getattr(spider, "sitemap_urls", None) or ():
            if isinstance(url, str) and self._is_robots_url(url):
                self._wanted_robots.add(origin_of(url))

    def _spider_closed(self, spider: Spider) -> None:
        # Background refetches and retry loops end with the crawl.
        for task in list(self._tasks):
            task.cancel()
        self._kept.clear()

    @staticmethod
    def _is_robots_url(url: str) -> bool:
        parts = urlsplit(url)
        return parts.path == "/robots.txt" and not parts.query and parts.scheme in ("http", "https")

    def _serve_kept(self, origin: str, request: Request) -> Response:
        response = self._kept.pop(origin)
        self._wanted_robots.discard(origin)
        self.stats.inc_value("robotstxt/served_to_spider")
        return response.replace(request=request, flags=[*response.flags, "robots.txt"])

    # -- the cache, which may fail -----------------------------------------------------------
    def _cache_get(self, origin: str) -> RobotsEntry | None:
        try:
            return self._cache.get(origin)
        except Exception:
            self._cache_error("get")
            return self._cache.get(origin)

    def _cache_set(self, origin: str, entry: RobotsEntry) -> None:
        try:
            evicted = self._cache.set(origin, entry)
        except Exception:
            self._cache_error("set")
            evicted = self._cache.set(origin, entry)
        for old in evicted:
            self.stats.inc_value("robotstxt/cache/evicted")
            self._kept.pop(old, None)
            if self._floors is not None:
                try:
                    self._floors.clear_floor(old)
                except Exception:
                    logger.exception("Could not clear the Crawl-delay of %s", old)

    def _cache_error(self, operation: str) -> None:
        """A backend failed: log it, then carry on with a fresh in-memory cache."""
        self.stats.inc_value("robotstxt/cache/errors")
        logger.error(
            "robots.txt cache %(cache)s failed on %(op)s; using an in-memory cache instead",
            {"cache": type(self._cache).__name__, "op": operation},
            exc_info=True,
            extra={"spider": self.crawler.spider},
        )
        self._cache = MemoryOriginCache(self.settings.cache_max_origins)


def _lifetime_from_headers(response: Response) -> float | None:
    """Seconds the response may be cached for, per Cache-Control or Expires (None = unsaid)."""
    headers = response.headers
    cache_control = headers.get(b"Cache-Control")
    if cache_control:
        value = to_unicode(cache_control, errors="replace")
        match = _MAX_AGE.search(value)
        if match:
            return float(match.group(1))
        if _NO_CACHE.search(value):
            return 0.0
    expires = headers.get(b"Expires")
    if expires:
        when = _http_date(expires)
        if when is None:
            return 0.0  # RFC 9111 5.3: an invalid Expires means "already expired"
        base = _http_date(headers.get(b"Date")) or time.time()
        return max(0.0, when - base)
    return None


def _retry_after(response: Response) -> float | None:
    value = response.headers.get(b"Retry-After")
    if not value:
        return None
    text = to_unicode(value, errors="replace").strip()
    if text.isdigit():
        return float(text)
    when = _http_date(value)
    return None if when is None else max(0.0, when - time.time())


def _http_date(value: bytes | None) -> float | None:
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(to_unicode(value, errors="replace"))
    except (TypeError, ValueError, IndexError):
        return None
    return parsed.timestamp()
