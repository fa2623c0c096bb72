"""``RobotsTxtMiddleware``: the Scrapy adapter of the robots.txt layer.

A drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``
(enable it at the same priority, 100, and disable Scrapy's; ``scrapy_rerp.Addon`` does both).
This module speaks to Scrapy, and only that: settings in, hooks and signals, ``IgnoreRequest``
out. Its collaborators are built, and stopped when the crawl closes, by
:mod:`scrapy_rerp.crawl.assembly`; what happens to one request is :mod:`scrapy_rerp.crawl.gate`'s
(``docs/design.rst`` draws the path):

* requests with ``dont_obey_robotstxt``, and those of schemes without robots.txt, are left
  alone (:func:`scrapy_rerp.core.urls.obeys_robots_txt`); every other request goes through the
  gate: it goes on, is parked until its origin's rules come, or is refused;
* every answer a site gives is told to the gate by a ``response_downloaded`` handler, before
  any ``process_response`` (:meth:`~scrapy_rerp.crawl.gate.RobotsGate.hear_answers`); in a fleet,
  :class:`AnswersMiddleware` tells it of downloads that end without an answer;
* with ``RERP_USAGE``, ``process_response`` checks the page's ``Content-Usage`` header;
* the answers and failed downloads of the requests the gate let through are sent as
  ``scrapy_rerp.signals`` ``request_answered`` and ``request_failed`` (docs/signals.rst), and
  the hooks exist only with work (that check, or a handler connected as the middleware is
  built): Scrapy calls every middleware's hook on every response (docs/benchmarks.rst).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request, Response

from scrapy_rerp.core import loggers
from scrapy_rerp.core import signals as rerp_signals
from scrapy_rerp.core.admission import DECISION_META
from scrapy_rerp.core.settings import (
    CLOSE_REASON,
    RerpSettingsError,
    crawler_user_agent,
    settings_for,
)
from scrapy_rerp.core.urls import obeys_robots_txt, origin_of, page_obeys_robots_txt
from scrapy_rerp.crawl.assembly import Misconfigured, assemble, origin_caches
from scrapy_rerp.crawl.compat import close_when_opened, heard, send_refusable, user_agent_header
from scrapy_rerp.crawl.documents import registered_kinds
from scrapy_rerp.crawl.evidence import check_storages
from scrapy_rerp.crawl.gate import RobotsGate
from scrapy_rerp.crawl.signing import check_signing_enabled

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from scrapy_rerp.core.cache import OriginCache
    from scrapy_rerp.core.data import RobotsEntry
    from scrapy_rerp.core.documents import DocumentKind
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.engine import RobotsTxt
    from scrapy_rerp.fleet.store import SharedOriginCache

__all__ = ["ANSWERS_MIDDLEWARE_PRIORITY", "AnswersMiddleware", "RobotsTxtMiddleware"]

logger = logging.getLogger(loggers.MIDDLEWARE)

#: The answers middleware's place: its ``process_exception`` runs before any other downloader
#: middleware's (higher runs first on the way back), before ``RetryMiddleware`` (550) turns a
#: failed download into a retry.
ANSWERS_MIDDLEWARE_PRIORITY = 950


class RobotsTxtMiddleware:
    """Obey robots.txt, one download per origin, with RFC 9309's status policy and expiry
    (its stats, all under ``robotstxt/``: docs/stats.rst; its settings: docs/settings.rst)."""

    #: Set on an instance only when they have work (the module's docstring says why).
    process_response: Callable[[Request, Response], Response | Awaitable[Response]]
    process_exception: Callable[[Request, Exception], None]

    def __init__(
        self,
        crawler: Crawler,
        settings: RerpSettings,
        cache: OriginCache,
        *,
        shared: SharedOriginCache | None = None,
        kinds: list[DocumentKind] | None = None,
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        parts = assemble(crawler, settings, cache, shared, self.user_agent_for, kinds)
        self.gate = RobotsGate(crawler, parts, self.user_agent_for)
        self.lot = parts.lot
        self.origins = parts.origins
        self.politeness = parts.politeness
        self.fleet = parts.fleet
        self._usage = parts.usage
        self._answers_heard = heard(crawler, rerp_signals.request_answered)
        if parts.usage is not None or self._answers_heard:
            self.process_response = self._answered
        if heard(crawler, rerp_signals.request_failed):
            self.process_exception = self._failed
        # Told by AnswersMiddleware, or by a signal without it: which one is known once the
        # engine has built the downloader middlewares.
        crawler.signals.connect(self._hear_answers, signal=signals.spider_opened)
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
        try:
            check_storages(crawler, settings)
            kinds = registered_kinds(settings)
            check_signing_enabled(crawler, settings)
        except RerpSettingsError as error:
            logger.error("%s; the crawl stops before it starts", error, extra={"crawler": crawler})
            close_when_opened(crawler, CLOSE_REASON)
            return Misconfigured()
        caches = origin_caches(crawler, settings)
        if caches is None:  # the shared cache cannot run here (logged): the same
            return Misconfigured()
        cache, shared = caches
        return cls(crawler, settings, cache, shared=shared, kinds=kinds)

    # -- the downloader middleware API -------------------------------------------------------
    def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Response | Awaitable[Response | None] | None:
        if not obeys_robots_txt(request.url, request.meta):
            return None
        return self.gate.process(request)

    def _answered(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response | Awaitable[Response]:
        """``process_response``: the page's ``Content-Usage`` header, combined with what
        robots.txt said (:mod:`scrapy_rerp.crawl.usage`), then ``request_answered``, whose
        handlers may keep the response from the spider (the evidence, under "stop")."""
        meta = request.meta
        if self._usage is not None and page_obeys_robots_txt(request.url, meta):
            waiting = self.gate.page_documents(request, response)
            if waiting is not None:  # a licence the page names, not known yet
                return self._answered_after(waiting, request, response)
            try:
                self._usage.check_response(request, response)
            except IgnoreRequest as refusal:
                self.gate.tell_refused(request, refusal)
                raise
        if self._answers_heard and obeys_robots_txt(request.url, meta):
            send_refusable(
                self.crawler,
                rerp_signals.request_answered,
                request=request,
                response=response,
                decision=meta.get(DECISION_META),
            )
        return response

    async def _answered_after(
        self, waiting: Awaitable[None], request: Request, response: Response
    ) -> Response:
        try:
            await waiting
        except IgnoreRequest as refusal:
            self.gate.tell_refused(request, refusal)
            raise
        answered = self._answered(request, response)  # every document known now: at once
        return await answered if inspect.isawaitable(answered) else answered

    def _failed(self, request: Request, exception: Exception, spider: Spider | None = None) -> None:
        """``process_exception``: a download the gate let through failed (not refused)."""
        decision = request.meta.get(DECISION_META)
        if decision is not None and not isinstance(exception, IgnoreRequest):
            self.crawler.signals.send_catch_log(
                rerp_signals.request_failed, request=request, exception=exception, decision=decision
            )

    def _hear_answers(self) -> None:
        self.gate.hear_answers(self.crawler.get_downloader_middleware(AnswersMiddleware))

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
        return crawler_user_agent(self.settings, user_agent_header(request))


class AnswersMiddleware:
    """Tells :class:`RobotsTxtMiddleware` of every download that ends without an answer (a
    timeout, a connection error), before any other downloader middleware sees it: a fleet
    worker's turn then ends a floor later, rather than when it times out (docs/fleet.rst).
    ``scrapy_rerp.Addon`` enables it at ``ANSWERS_MIDDLEWARE_PRIORITY``; outside a fleet it is
    told nothing, and has no ``process_response`` (the answers: ``response_downloaded``)."""

    def __init__(self) -> None:
        self._failed: Callable[[Request], None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = settings_for(crawler, close_when_opened)
        # A bad setting (None, logged once) closes the crawl as the spider opens: told nothing,
        # it passes every failure on, and Scrapy logs nothing more of it.
        if settings is not None and not settings.obey:
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        return cls()

    def tell(self, failed: Callable[[Request], None]) -> None:
        """Call ``failed(request)`` with every download that ends without an answer from now
        on (the gate's)."""
        self._failed = failed

    def process_exception(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> None:
        failed = self._failed
        if failed is not None:
            failed(request)
