"""``RobotsTxtMiddleware``: the Scrapy adapter of the robots.txt layer.

A drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``
(enable it at the same priority, 100, and disable Scrapy's; ``scrapy_rerp.Addon`` does both).
This module speaks to Scrapy, and only that: settings in, hooks and signals, ``IgnoreRequest``
out. Its collaborators are built, and stopped when the crawl closes, by
:mod:`scrapy_rerp.crawl.assembly`; what happens to one request is :mod:`scrapy_rerp.crawl.gate`'s
(``docs/design.rst`` draws the path):

* requests with ``dont_obey_robotstxt``, and those of schemes without robots.txt, are left
  alone (as Scrapy's middleware leaves them: :func:`scrapy_rerp.core.urls.obeys_robots_txt`);
* every other request goes through the gate: it goes on, is parked until its origin's rules
  come, or is refused;
* every answer a site gives is told to the gate by a ``response_downloaded`` handler, which
  Scrapy calls before its downloader looks at the slot's queue again and before any
  ``process_response``: a 429 or 503 holds the origin before its next request can leave, and
  is heard even when ``RetryMiddleware`` (550) turns it into a retry, which then comes back
  through ``process_request`` and waits out the cool-down. A downloader middleware's
  ``process_response`` would hear it too late: by then the slot may have sent its next request
  (tests/test_slowdown_crawl.py, a slow 429). In a fleet, :class:`AnswersMiddleware` tells the
  gate of downloads that end without an answer;
* with ``RERP_USAGE``, ``process_response`` checks the page's ``Content-Usage`` header;
  without it (and without ``RERP_EVIDENCE``) the middleware has no ``process_response``;
* with ``RERP_EVIDENCE``, every request decided is recorded (:mod:`scrapy_rerp.crawl.evidence`):
  refused or dropped as ``process_request`` raises, downloaded as its answer comes.

New rules reach the politeness controller (floors), sitemap discovery and Scrapy's
``robots_parsed`` signal before the waiting requests are released
(:mod:`scrapy_rerp.crawl.new_rules`).
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
from scrapy_rerp.core.body import capped_lines
from scrapy_rerp.core.settings import (
    CLOSE_REASON,
    RerpSettingsError,
    crawler_user_agent,
    settings_for,
)
from scrapy_rerp.core.urls import obeys_robots_txt, origin_of, page_obeys_robots_txt
from scrapy_rerp.crawl.assembly import Misconfigured, assemble, origin_caches
from scrapy_rerp.crawl.compat import close_when_opened, user_agent_header
from scrapy_rerp.crawl.evidence import DECISION_META, check_storages, usage_of
from scrapy_rerp.crawl.gate import FORBIDDEN, RobotsGate

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from scrapy_rerp.core.cache import OriginCache
    from scrapy_rerp.core.data import RobotsEntry
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
    """Obey robots.txt, one download per origin, with RFC 9309's status policy and expiry.

    Stats (all under ``robotstxt/``) and settings are documented in docs/stats.rst and
    docs/settings.rst.
    """

    #: Set on an instance only with ``RERP_USAGE`` (the Content-Usage check) or
    #: ``RERP_EVIDENCE``: Scrapy calls a downloader middleware's ``process_response`` on every
    #: response, idle or not.
    process_response: Callable[[Request, Response], Response]
    process_exception: Callable[[Request, Exception], None]  # with RERP_EVIDENCE only

    def __init__(
        self,
        crawler: Crawler,
        settings: RerpSettings,
        cache: OriginCache,
        shared: SharedOriginCache | None = None,
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        parts = assemble(crawler, settings, cache, shared, self.user_agent_for)
        self.gate = RobotsGate(crawler, parts, self.user_agent_for)
        self.lot = parts.lot
        self.origins = parts.origins
        self.politeness = parts.politeness
        self.fleet = parts.fleet
        self._usage = parts.usage
        self._evidence = parts.evidence
        if self._evidence is not None:
            self.process_request = self._process_request_with_evidence  # type: ignore[method-assign]
            self.process_response = self._answered_with_evidence
            self.process_exception = self._failed_with_evidence
        elif self._usage is not None:
            # The hook exists only when it has work: Scrapy's downloader calls every
            # middleware's process_response on every response, about 15,000 instructions
            # each even when it returns at once (docs/benchmarks.rst).
            self.process_response = self._check_usage
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
        except RerpSettingsError as error:
            logger.error("%s; the crawl stops before it starts", error, extra={"crawler": crawler})
            close_when_opened(crawler, CLOSE_REASON)
            return Misconfigured()
        caches = origin_caches(crawler, settings)
        if caches is None:  # the shared cache cannot run here (logged): the same
            return Misconfigured()
        return cls(crawler, settings, *caches)

    # -- the downloader middleware API -------------------------------------------------------
    def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Response | Awaitable[Response | None] | None:
        if not obeys_robots_txt(request.url, request.meta):
            return None
        return self.gate.process(request)

    # -- with RERP_EVIDENCE: every decision recorded ----------------------------------------------
    def _process_request_with_evidence(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Response | Awaitable[Response | None] | None:
        if not obeys_robots_txt(request.url, request.meta):
            return None
        if self._evidence.stopped:  # type: ignore[union-attr]
            raise self._evidence.stop("request", request.url)  # type: ignore[union-attr]
        try:
            result = self.gate.process(request)
        except IgnoreRequest as refusal:
            self._not_downloaded(request, refusal)
            raise
        if inspect.isawaitable(result):
            return self._awaited_with_evidence(request, result)
        return result

    async def _awaited_with_evidence(
        self, request: Request, waiting: Awaitable[Response | None]
    ) -> Response | None:
        try:
            result = await waiting
        except IgnoreRequest as refusal:
            self._not_downloaded(request, refusal)
            raise
        # The evidence may have failed while it waited (robots.txt's own record, say).
        if self._evidence.stopped:  # type: ignore[union-attr]
            raise self._evidence.stop("request", request.url)  # type: ignore[union-attr]
        return result

    def _not_downloaded(self, request: Request, refusal: IgnoreRequest) -> None:
        message = str(refusal)
        refused = message == FORBIDDEN
        self._evidence.decision(  # type: ignore[union-attr]
            request.url,
            "refused" if refused else "dropped",
            reason="robots.txt" if refused else message,
            decided=request.meta.get(DECISION_META),
            usage=usage_of(request.meta),
        )

    def _answered_with_evidence(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        """``process_response`` with ``RERP_EVIDENCE``: the usage check, then the record of a
        request the gate decided and a site answered."""
        if self._usage is not None:
            try:
                self._check_usage(request, response)
            except IgnoreRequest as refusal:
                self._not_downloaded(request, refusal)
                raise
        decided = request.meta.get(DECISION_META)
        if decided is not None:
            self._evidence.decision(  # type: ignore[union-attr]
                request.url,
                "downloaded",
                decided=decided,
                usage=usage_of(request.meta),
                page_directives=tuple(
                    value.decode("latin-1")
                    for value in capped_lines(response.headers.getlist("X-Robots-Tag"))[0]
                ),
            )
        # Under "stop", no page reaches the spider without its record: written and flushed
        # above, or the evidence has failed (this record or an earlier one).
        if self._evidence.stopped and obeys_robots_txt(request.url, request.meta):  # type: ignore[union-attr]
            raise self._evidence.stop("response", response.url)  # type: ignore[union-attr]
        return response

    def _failed_with_evidence(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> None:
        """``process_exception`` with ``RERP_EVIDENCE``: a request the gate let through whose
        download failed (an ``IgnoreRequest`` is recorded where it is raised)."""
        decided = request.meta.get(DECISION_META)
        if decided is not None and not isinstance(exception, IgnoreRequest):
            self._evidence.decision(  # type: ignore[union-attr]
                request.url,
                "failed",
                reason=f"{type(exception).__name__}: {exception}"[:500],
                decided=decided,
                usage=usage_of(request.meta),
            )

    def _check_usage(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        """``process_response`` with ``RERP_USAGE``: the page's ``Content-Usage`` header,
        combined with what robots.txt said, before the spider sees it
        (:mod:`scrapy_rerp.crawl.usage`)."""
        if page_obeys_robots_txt(request.url, request.meta):
            self._usage.check_response(request, response)  # type: ignore[union-attr]
        return response

    def _hear_answers(self) -> None:
        self._hear_answers_from(self.crawler.get_downloader_middleware(AnswersMiddleware))

    def _hear_answers_from(self, answers: AnswersMiddleware | None) -> None:
        """Have every answer told to the gate by Scrapy's ``response_downloaded`` signal, and
        in a fleet every failed download by ``answers``, the companion; with neither
        ``RERP_SLOWDOWN`` nor a fleet, nothing needs to hear them."""
        if self.fleet is None and not self.politeness.slowdown:
            return
        if answers is not None and self.fleet is not None:
            answers.tell(self.gate.failed)
        # Scrapy sends it before its downloader looks at the slot's queue again, and before
        # any process_response (a retry included). Held strongly until the crawl closes: a
        # weakly held bound method is dereferenced in Python on every send, about 6,500
        # instructions per response (callgrind).
        self.crawler.signals.connect(
            self.gate.heard, signal=signals.response_downloaded, weak=False
        )
        self.crawler.signals.connect(self._stop_hearing, signal=signals.spider_closed)

    def _stop_hearing(self) -> None:
        # A receiver held strongly would keep the crawler alive after its crawl.
        self.crawler.signals.disconnect(
            self.gate.heard, signal=signals.response_downloaded, weak=False
        )

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

    ``scrapy_rerp.Addon`` enables it at ``ANSWERS_MIDDLEWARE_PRIORITY``. The answers
    themselves are heard through Scrapy's ``response_downloaded`` signal, which comes before the
    downloader sends the slot's next request; a ``process_response`` comes after it. Outside a
    fleet it is told nothing, and costs nothing: it has no ``process_response``.
    """

    def __init__(self) -> None:
        self._failed: Callable[[Request], None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = settings_for(crawler, close_when_opened)
        if settings is None:
            # A bad setting, logged once: the crawl closes as the spider opens. Told nothing,
            # it passes every failure on, and Scrapy logs nothing more of it.
            return cls()
        if not settings.obey:
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
