"""``RobotsTxtMiddleware``: the Scrapy adapter of the robots.txt layer.

A drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``
(enable it at the same priority, 100, and disable Scrapy's; ``scrapy_rerp.Addon`` does both).
This module speaks to Scrapy, and only that: settings in, hooks and signals, ``IgnoreRequest``
out; its collaborators are built, and stopped when the crawl closes, by
:mod:`scrapy_rerp._assembly`. For each request (``docs/design.rst`` draws the path):

* skipped when ``dont_obey_robotstxt`` is set or the scheme has no robots.txt (as Scrapy);
* the origin service (:mod:`scrapy_rerp._origins`) gives the origin's rules, or says to wait
  while its one robots.txt download runs (or while it is unreachable), or refuses it;
* a request that waits is parked outside the downloader (:mod:`scrapy_rerp._parking`), or
  waits in place when it does not come from the scheduler (media pipelines); the lot drops
  what it cannot keep;
* with rules, the engine decides; an allowed request then asks the politeness controller
  (:mod:`scrapy_rerp._politeness`: Crawl-delay, a cool-down, the fleet's turn) whether it may
  go now;
* every response is told to the politeness controller in a ``response_downloaded`` handler,
  which Scrapy calls before any downloader middleware's ``process_response``: a 429 or 503
  (:mod:`scrapy_rerp._slowdown`) is heard there even when ``RetryMiddleware`` (550) turns it
  into a retry, which then comes back through ``process_request`` and waits out the cool-down.

New rules reach the politeness controller (floors), sitemap discovery and Scrapy's
``robots_parsed`` signal before the waiting requests are released
(:mod:`scrapy_rerp._rules_applied`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request, Response
from scrapy.utils.httpobj import urlparse_cached

from scrapy_rerp._assembly import Misconfigured, assemble, origin_caches
from scrapy_rerp._compat import close_when_opened
from scrapy_rerp._origins import WAIT, Refused
from scrapy_rerp._politeness import PARKED
from scrapy_rerp._settings import crawler_user_agent, settings_for
from scrapy_rerp._slowdown import SLOW_STATUSES, slow_answer
from scrapy_rerp._urls import crawl_decision, origin_of, origin_of_parts, robots_url_of

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from typing_extensions import Self

    from scrapy_rerp._data import RobotsEntry
    from scrapy_rerp._settings import RerpSettings
    from scrapy_rerp.cache import OriginCache, SharedOriginCache
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
        shared: SharedOriginCache | None = None,
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self._parts = parts = assemble(crawler, settings, cache, shared, self.user_agent_for)
        # Bound once: the per-request path reads its collaborators as the middleware's own.
        self.lot = parts.lot
        self.origins = parts.origins
        self.politeness = parts.politeness
        self.fleet = parts.fleet
        self._for_spider = parts.for_spider
        self._usage = parts.usage
        if self.fleet is not None or self.politeness.slowdown:
            crawler.signals.connect(self._response_downloaded, signals.response_downloaded)
        crawler.signals.connect(parts.for_spider.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(parts.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self | Misconfigured:
        settings = settings_for(crawler, close_when_opened)
        if settings is None:
            # A bad setting, logged once: the crawl closes as the spider opens.
            return Misconfigured()
        if not settings.obey:
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        caches = origin_caches(crawler, settings)
        if caches is None:  # the shared cache cannot run here (logged): the same
            return Misconfigured()
        return cls(crawler, settings, *caches)

    # -- the downloader middleware API -------------------------------------------------------
    def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Response | Awaitable[Response | None] | None:
        if request.meta.get("dont_obey_robotstxt"):
            return None
        if not request.url.startswith(_OBEYED_SCHEMES):
            # data:, file:, s3: and the like have no robots.txt; Scrapy skips data: and
            # file: only, and for others an error fetching robots.txt meant "allow all".
            return None
        if self.lot.came_back(request):
            return self._wait_in_place(request)
        return self._process(request)

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        """With ``RERP_USAGE``: the page's ``Content-Usage`` header, combined with what
        robots.txt said, before the spider sees it (:mod:`scrapy_rerp._usage_policy`)."""
        if (
            self._usage is not None
            and not request.meta.get("dont_obey_robotstxt")
            and request.url.startswith(_OBEYED_SCHEMES)
            and not request.url.endswith("/robots.txt")
        ):
            self._usage.check_response(request, response)
        return response

    # -- public helpers ----------------------------------------------------------------------
    def robots_for(self, url: str) -> RobotsTxt | None:
        """The rules currently applied to the origin of ``url`` (None if not known yet)."""
        entry = self.entry_for(url)
        return None if entry is None else entry.robots

    def entry_for(self, url: str) -> RobotsEntry | None:
        """What is known of the robots.txt of the origin of ``url``: rules, status, outcome."""
        return self.origins.entry(origin_of(url))

    def user_agent_for(self, request: Request) -> str:
        """The user agent robots.txt is matched against for ``request``."""
        return crawler_user_agent(self.settings, request.headers.get(b"User-Agent"))

    # -- one request -------------------------------------------------------------------------
    def _process(self, request: Request) -> Request | Response | Awaitable[None] | None:
        """Decide ``request``, or park it (returned as it is) until its origin's rules come."""
        self.lot.handed_back(request)  # one the lot handed back: dropped here, or let on
        url = request.url
        origin = origin_of_parts(urlparse_cached(request))  # parsed once per request
        is_robots_url = url.endswith("/robots.txt") and self._for_spider.is_robots_url(url)
        if is_robots_url and self._for_spider.has(origin):
            return self._for_spider.serve(origin, request)
        rules = self.origins.rules(origin, url, request)
        if rules is WAIT:
            return self._park(origin, request, is_robots_url)
        if isinstance(rules, Refused):
            self.lot.count_dropped_at_once(rules.reason)
            raise IgnoreRequest(rules.message)
        self._decide(rules, request)  # type: ignore[arg-type]
        admitted = self.politeness.admit(origin, request)
        if admitted is None:
            return None
        if admitted is PARKED or isinstance(admitted, str):
            return _admission(request, admitted)
        return self._once_admitted(request, admitted)  # type: ignore[arg-type]

    async def _once_admitted(self, request: Request, waiting: Awaitable[Any]) -> Request | None:
        """The request waited in place for its admission (a fleet's turn, Redis's answer):
        it goes on (None), was parked meanwhile (returned), or is refused."""
        return _admission(request, await waiting)

    def _decide(self, robots: RobotsTxt, request: Request) -> None:
        user_agent = self.user_agent_for(request)
        # request.url is as scrapy.Request writes it already: what _urls.rules_url would make.
        if robots.allowed(request.url, user_agent):
            if self._usage is not None:
                self._usage.check_request(robots, request, user_agent)
            return
        self.stats.inc_value("robotstxt/forbidden")
        if logger.isEnabledFor(logging.DEBUG):  # naming the line costs a second, slower check
            decision = crawl_decision(robots, request.url, user_agent)
            logger.debug(
                "Forbidden by robots.txt: %(request)s (%(robots)s line %(line)s: %(rule)s; "
                "%(reason)s)",
                {
                    "request": request,
                    "robots": robots_url_of(request.url),
                    "line": decision.line,
                    "rule": decision.rule,
                    "reason": decision.reason,
                },
                extra={"spider": self.crawler.spider},
            )
        raise IgnoreRequest("Forbidden by robots.txt")

    def _park(self, origin: str, request: Request, is_robots_url: bool) -> Request:
        """Take a request with no usable rules out of the downloader until they come."""
        refused = self.lot.park(origin, request)
        if refused is not None:
            self.lot.drop_refused(origin, request, refused)
        if is_robots_url:
            self._for_spider.want(origin)
        self.origins.wanted(origin, request.url, request)
        return request

    async def _wait_in_place(self, request: Request) -> Response | None:
        """A parked request the engine downloads again without scheduling it (media pipelines
        and extensions call ``engine.download_async``, which downloads a returned request at
        once): it waits here for its origin, within the same limits, then goes on or fails."""
        while True:
            await self.lot.wait_in_place(request)  # IgnoreRequest if dropped meanwhile
            result = self._process(request)
            if result is request:
                continue  # parked again (a refetch, a cool-down, its Crawl-delay turn): wait again
            if result is None or isinstance(result, Response):
                return result
            if await result is request:  # type: ignore[misc]
                continue  # parked while it waited for its admission
            return None

    # -- signals -----------------------------------------------------------------------------
    def _response_downloaded(
        self, response: Response, request: Request, spider: Any = None
    ) -> None:
        """Every answer, before any ``process_response`` (a retry included): the fleet's turn
        ends, and a slow-down is heard."""
        politeness = self.politeness
        meta = request.meta
        # Robots.txt requests are the status policy's (and so are those opted out).
        if politeness.slowdown and not meta.get("dont_obey_robotstxt"):
            status = response.status
            if status in SLOW_STATUSES:
                answer = slow_answer(status, response.headers, time.time())
                if answer is not None:
                    origin = origin_of_parts(urlparse_cached(request))
                    politeness.slow_answer(origin, answer, meta)
            elif politeness.slowed:
                origin = origin_of_parts(urlparse_cached(request))
                if origin in politeness.backoff:
                    politeness.good_answer(origin, meta)
        politeness.answered(meta)  # after: a fleet turn ends with the floor this answer set


def _admission(request: Request, admitted: Any) -> Request | None:
    """What ``process_request`` returns for an admission that is not an awaitable."""
    if admitted is None:
        return None
    if admitted is PARKED:
        return request
    raise IgnoreRequest(admitted)
