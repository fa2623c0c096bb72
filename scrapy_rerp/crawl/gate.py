"""``RobotsGate``: the path of one request through the robots.txt layer.

The middleware hands it every request it obeys robots.txt for, and every answer:

* a request for the spider's own robots.txt of an origin whose file is known is served from
  it (:mod:`scrapy_rerp.crawl.sitemaps`);
* the origin service (:mod:`scrapy_rerp.core.origins`) gives the origin's rules, or says to wait
  while its one robots.txt download runs (or while it is unreachable), or refuses it;
* a request that waits is parked outside the downloader (:mod:`scrapy_rerp.crawl.parking`), or
  waits in place when it does not come from the scheduler (media pipelines); the lot drops
  what it cannot keep;
* with rules, the engine decides; an allowed request then waits, as for robots.txt, for its
  origin's other registered documents (:mod:`scrapy_rerp.crawl.documents`: tdmrep.json when the
  crawl reads TDMRep), each carried in its meta once known (``kind.meta_key``). Each is fetched
  only once robots.txt allows a page of its origin: an origin whose robots.txt disallows
  everything is sent no other request;
* an allowed request then asks the politeness controller
  (:mod:`scrapy_rerp.core.politeness`: Crawl-delay, a cool-down, the fleet's turn) whether it may
  go now;
* every answer is told to the politeness controller (:meth:`RobotsGate.heard`): a 429 or 503
  (:mod:`scrapy_rerp.core.slowdown`) slows its origin down, a good answer after one lets it
  recover, and a fleet's turn ends;
* every refusal is sent as ``scrapy_rerp.signals.request_refused`` (its handler
  :meth:`RobotsGate.refused` counts them), every request let through as ``request_admitted``
  when something hears it; the line that decided is kept in the request's meta
  (:data:`DECISION_META`) for a refusal, and for all when something reads it later.

What it returns is what a downloader middleware's ``process_request`` returns: None (go on),
the request itself (parked: the engine drops it from the downloader and the lot hands it back),
or an awaitable of either; a refused request raises ``IgnoreRequest``.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from scrapy import signals as scrapy_signals
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Request, Response
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.python import to_unicode

from scrapy_rerp.core import loggers, signals
from scrapy_rerp.core.admission import DECISION_META, GO, Admission, ParkingKey, Verdict
from scrapy_rerp.core.lengths import bounded
from scrapy_rerp.core.origins import WAIT, OriginService, Refused
from scrapy_rerp.core.slowdown import SLOW_STATUSES, slow_answer
from scrapy_rerp.core.urls import (
    opts_out_of_robots_txt,
    origin_of_parts,
    robots_url_of,
)
from scrapy_rerp.crawl.compat import heard, send_refusable, stats_of
from scrapy_rerp.crawl.documents import Attached
from scrapy_rerp.crawl.head_meta import head_text
from scrapy_rerp.crawl.usage import UsageRefused

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.documents import DocumentKind
    from scrapy_rerp.crawl.assembly import Parts
    from scrapy_rerp.engine import RobotsTxt

__all__ = ["FORBIDDEN", "RobotsGate"]

#: The message of the ``IgnoreRequest`` of a request robots.txt disallows.
FORBIDDEN = "Forbidden by robots.txt"

logger = logging.getLogger(loggers.ROBOTSTXT)


class RobotsGate:
    """Decides each request with its origin's rules, parks it until they come, and asks the
    politeness controller when it may go."""

    def __init__(
        self, crawler: Crawler, parts: Parts, user_agent_for: Callable[[Request], str]
    ) -> None:
        self.crawler = crawler
        self.stats = stats_of(crawler)
        self.user_agent_for = user_agent_for
        # Bound once: the per-request path reads its collaborators as the gate's own.
        self.lot = parts.lot
        self.origins = parts.origins
        self.politeness = parts.politeness
        self._for_spider = parts.for_spider
        self._usage = parts.usage
        self._documents = parts.documents  # every registered kind's service but robots.txt's
        # Those whose documents a page may name for itself (RSL: its Link header, <link> tags).
        self._named_by_pages = tuple(s for s in parts.documents if s.kind.locate_page is not None)
        self._fleet = parts.fleet
        # Sent only when heard as the crawl is built: a send per request costs even unheard.
        self._admissions_heard = heard(crawler, signals.request_admitted)
        # Each decision named (a slower check) and kept in its request's meta when something
        # reads it later: otherwise only a refusal's.
        self._keep_decisions = self._admissions_heard or any(
            heard(crawler, signal) for signal in (signals.request_answered, signals.request_failed)
        )
        crawler.signals.connect(self.refused, signal=signals.request_refused)

    def process(self, request: Request) -> Request | Response | Awaitable[Any] | None:
        """Decide ``request``, or park it (returned as it is) until its origin's rules come."""
        try:
            if self.lot.came_back(request):
                return self._told(request, self._wait_in_place(request))
            result = self._process(request)
        except IgnoreRequest as refusal:
            self.tell_refused(request, refusal)
            raise
        if result is not None and inspect.isawaitable(result):
            return self._told(request, result)
        if result is None and self._admissions_heard:
            self._admitted(request)
        return result

    async def _told(self, request: Request, waiting: Awaitable[Any]) -> Any:
        try:
            result = await waiting
        except IgnoreRequest as refusal:
            self.tell_refused(request, refusal)
            raise
        if result is None and self._admissions_heard:
            self._admitted(request)
        return result

    def _admitted(self, request: Request) -> None:
        """The request goes on to its download: ``request_admitted`` (a handler's
        ``IgnoreRequest`` keeps it from the download, and is no refusal of the layer's)."""
        send_refusable(
            self.crawler,
            signals.request_admitted,
            request=request,
            decision=request.meta.get(DECISION_META),
            waited=self.lot.waited(request),
        )

    def tell_refused(self, request: Request, refusal: IgnoreRequest) -> None:
        """``request_refused``: by robots.txt, a usage preference, or dropped (no rules)."""
        message = str(refusal)
        usage = "usage" if isinstance(refusal, UsageRefused) else "dropped"
        self.crawler.signals.send_catch_log(
            signals.request_refused,
            request=request,
            reason="robots.txt" if message == FORBIDDEN else usage,
            message=message,
            decision=request.meta.get(DECISION_META),
        )

    def _process(self, request: Request) -> Request | Response | Awaitable[None] | None:
        self.lot.handed_back(request)  # one the lot handed back: dropped here, or let on
        url = request.url
        origin = origin_of_parts(urlparse_cached(request))  # parsed once per request
        is_robots_url = url.endswith("/robots.txt") and self._for_spider.is_robots_url(url)
        if is_robots_url and self._for_spider.has(origin):
            return self._for_spider.serve(origin, request)
        rules = self.origins.rules(origin, url, request)
        if rules is WAIT:
            return self._park(origin, request, self.origins, is_robots_url)
        if isinstance(rules, Refused):
            self.lot.count_dropped_at_once(rules.reason, request)
            raise IgnoreRequest(rules.message)
        self._decide(rules, request)  # type: ignore[arg-type]
        if not is_robots_url and self._documents:
            waiting = self._documents_of(origin, rules, request)
            if waiting is not None:
                return waiting
            if self._usage is not None:
                self._usage.check_documents(request)
        admitted = self.politeness.admit(origin, request)
        if admitted is GO:
            return None
        if isinstance(admitted, Admission):
            return _admission(request, admitted)
        return self._once_admitted(request, admitted)

    def _documents_of(self, origin: str, rules: Any, request: Request) -> Request | None:
        """Each other kind's documents of the request, attached to it in its meta; or the
        request parked for the first not known yet. Raises IgnoreRequest for a document whose
        outage is past the limit."""
        for service in self._documents:
            kind = service.kind
            keys = (origin,) if kind.locate is None else kind.locate(origin, rules)
            found: list[tuple[str, Any]] = []
            for key in keys:
                url = request.url if kind.locate is None else key
                document = service.rules(key, url, request)
                if document is WAIT:
                    return self._park(key, request, service)
                if isinstance(document, Refused):
                    self.lot.count_dropped_at_once(document.reason, request)
                    raise IgnoreRequest(document.message)
                found.append((key, document))
            if kind.locate is None:
                request.meta[_meta_key(kind)] = Attached(found[0][1])
            elif found:
                request.meta[_meta_key(kind)] = Attached(tuple(found))
            if self._keep_decisions and found:
                self._name_documents(service, found, request)
        return None

    def page_documents(self, request: Request, response: Response) -> Awaitable[None] | None:
        """The documents a page names for itself (``kind.locate_page``: an RSL licence its
        ``Link`` header or head names), attached to its request with the others of their kind;
        an awaitable when one is not known yet: the response waits for it (parked under its
        URL, in place) before the spider sees it. A document that stays unreachable past the
        limit states nothing."""
        if not self._named_by_pages:
            return None
        waiting = self._page_named(request, response)
        return None if waiting is None else self._page_documents_known(request, response, waiting)

    def _page_named(self, request: Request, response: Response) -> tuple[OriginService, str] | None:
        links = [to_unicode(v, errors="replace") for v in response.headers.getlist(b"Link")]
        # The head's own charset (or UTF-8): a page's declared one would be read per response.
        head = head_text(response.body) if isinstance(response, HtmlResponse) else ""
        for service in self._named_by_pages:
            locate = service.kind.locate_page
            keys = locate(response.url, links, head) if locate is not None else ()
            waiting = self._attach_named(service, keys, request) if keys else None
            if waiting is not None:
                return waiting
        return None

    async def _page_documents_known(
        self, request: Request, response: Response, waiting: tuple[OriginService, str] | None
    ) -> None:
        while waiting is not None:
            service, key = waiting
            self._park(key, request, service)  # a located kind's: parked for its URL
            await self.lot.wait_in_place(request)  # IgnoreRequest if dropped meanwhile
            waiting = self._page_named(request, response)

    def _attach_named(
        self, service: OriginService, keys: tuple[str, ...], request: Request
    ) -> tuple[OriginService, str] | None:
        """Attach the known documents of ``keys`` after those of the request's own; the first
        one not known yet (to wait for), or None."""
        kind = service.kind
        attached = request.meta.get(_meta_key(kind))
        pairs = list(attached.document) if isinstance(attached, Attached) else []
        had = {key for key, _ in pairs}
        for key in keys:
            if key in had:
                continue
            document = service.rules(key, key, request)
            if document is WAIT:
                return service, key
            if not isinstance(document, Refused):
                pairs.append((key, document))
                had.add(key)
        request.meta[_meta_key(kind)] = Attached(tuple(pairs))
        return None

    def _name_documents(
        self, service: OriginService, found: list[tuple[str, Any]], request: Request
    ) -> None:
        """The hashes of the documents a request goes on with, into its decision (the
        evidence's ``documents``): one, or a list for a located kind."""
        entries = [service.entry(key) for key, _ in found]
        hashes = [entry.sha256 if entry is not None else None for entry in entries]
        decided = request.meta[DECISION_META].setdefault("documents", {})
        decided[service.kind.token] = hashes[0] if service.kind.locate is None else hashes

    async def _once_admitted(
        self, request: Request, waiting: Awaitable[Admission]
    ) -> Request | None:
        """The request waited in place for its admission (a fleet's turn, Redis's answer):
        it goes on (None), was parked meanwhile (returned), or is refused."""
        return _admission(request, await waiting)

    def _decide(self, robots: RobotsTxt, request: Request) -> None:
        user_agent = self.user_agent_for(request)
        if self._keep_decisions:
            allowed = self._decided(robots, request, user_agent)
        else:
            # request.url is as scrapy.Request writes it already: what urls.rules_url makes.
            allowed = robots.allowed(request.url, user_agent)
        if allowed:
            if self._usage is not None:
                self._usage.check_request(robots, request, user_agent)
            return
        if not self._keep_decisions:  # the line that refused it, for request_refused
            self._decided(robots, request, user_agent)
        raise IgnoreRequest(FORBIDDEN)

    def _decided(self, robots: RobotsTxt, request: Request, user_agent: str) -> bool:
        """The verdict, and the line that decided kept in the request's meta (the check that
        names the line: slower than ``allowed``). The URL as ``allowed`` takes it: request.url
        is what urls.rules_url would make already."""
        decision = robots.decide(request.url, user_agent)
        entry = self.origins.entry(origin_of_parts(urlparse_cached(request)))
        agents = robots.agents_at(decision.line) if decision.line is not None else None
        request.meta[DECISION_META] = {
            "robots_sha256": entry.sha256 if entry is not None else None,
            "robots_fetched_at": entry.fetched_at if entry is not None else None,
            "line": decision.line,
            "rule": decision.rule,
            "group": ", ".join(agents) if agents is not None else None,
            "reason": decision.reason,
        }
        return decision.allowed

    def refused(self, request: Request, reason: str, decision: Any = None) -> None:
        """A ``request_refused`` handler: the decision stats (``robotstxt/forbidden``), and the
        line that refused it logged at DEBUG."""
        if reason != "robots.txt":
            return
        self.stats.inc_value("robotstxt/forbidden")
        if decision is not None and logger.isEnabledFor(logging.DEBUG):
            rule = decision["rule"]
            logger.debug(
                "Forbidden by robots.txt: %(request)s (%(robots)s line %(line)s: %(rule)s; "
                "%(reason)s)",
                {
                    "request": bounded(str(request)),
                    "robots": bounded(robots_url_of(request.url)),
                    "line": decision["line"],
                    "rule": bounded(rule) if rule is not None else None,
                    "reason": bounded(decision["reason"]),
                },
                extra={"spider": self.crawler.spider},
            )

    def _park(
        self, origin: str, request: Request, service: OriginService, is_robots_url: bool = False
    ) -> Request:
        """Take a request with no usable rules out of the downloader until they come (or,
        with another origin ``service``, until its document comes)."""
        key = ParkingKey(origin, service.kind.purpose)  # a located document's: its URL
        refused = self.lot.park(key, request)
        if refused is not None:
            self.lot.drop_refused(key, request, refused)
        if is_robots_url:
            self._for_spider.want(origin)
        # A located document (an RSL licence) is parked for, and fetched, by its URL.
        url = request.url if service.kind.locate is None else origin
        service.wanted(origin, url, request)
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

    def heard(self, request: Request, response: Response) -> None:
        """Every answer, before any ``process_response`` (a retry included): the fleet's turn
        ends, and a slow-down is heard."""
        politeness = self.politeness
        meta = request.meta
        # Robots.txt requests are the status policy's (and so are those opted out).
        if politeness.slowdown and not opts_out_of_robots_txt(meta):
            status = response.status
            if status in SLOW_STATUSES:
                answer = slow_answer(status, response.headers, time.time())
                if answer is not None:
                    origin = origin_of_parts(urlparse_cached(request))
                    politeness.slow_answer(origin, answer, meta)
            elif politeness.slowed:
                origin = origin_of_parts(urlparse_cached(request))
                if politeness.floors.is_raised(origin):
                    politeness.good_answer(origin, meta)
        politeness.answered(meta)  # after: a fleet turn ends with the floor this answer set

    def hear_answers(self, answers: Any) -> None:
        """Have every answer told to :meth:`heard` by Scrapy's ``response_downloaded`` signal
        (before the slot's next request leaves, and before ``RetryMiddleware`` retries a 429:
        docs/design.rst), and in a fleet every failed download to :meth:`failed` by ``answers``
        (``AnswersMiddleware``); with neither ``RERP_SLOWDOWN`` nor a fleet, nothing needs them."""
        if self._fleet is None and not self.politeness.slowdown:
            return
        if answers is not None and self._fleet is not None:
            answers.tell(self.failed)
        # Held strongly until the crawl closes: a weakly held bound method is dereferenced in
        # Python on every send, about 6,500 instructions per response (callgrind).
        manager = self.crawler.signals
        manager.connect(self.heard, signal=scrapy_signals.response_downloaded, weak=False)
        manager.connect(self._stop_hearing, signal=scrapy_signals.spider_closed)

    def _stop_hearing(self) -> None:
        # A receiver held strongly would keep the crawler alive after its crawl.
        self.crawler.signals.disconnect(
            self.heard, signal=scrapy_signals.response_downloaded, weak=False
        )

    def failed(self, request: Request) -> None:
        """A download ended without an answer (a timeout, a connection error, or a request
        refused on its way): a fleet's turn it held ends a floor from now."""
        self.politeness.answered(request.meta)


def _meta_key(kind: DocumentKind) -> str:
    """The meta key ``kind``'s documents are attached under: every kind but robots.txt has one
    (``problems_of`` holds it as the kinds are registered)."""
    assert kind.meta_key is not None
    return kind.meta_key


def _admission(request: Request, admitted: Admission) -> Request | None:
    """What ``process_request`` returns for an admission: None (go on), the request (parked),
    or ``IgnoreRequest`` (refused)."""
    if admitted.verdict is Verdict.GO:
        return None
    if admitted.verdict is Verdict.PARKED:
        return request
    raise IgnoreRequest(admitted.reason)
