"""``PageDirectivesMiddleware``: a page's own robots directives applied in a crawl.

A spider middleware (``scrapy_rerp.Addon`` enables it at ``PAGE_MIDDLEWARE_PRIORITY``). For
each response that reaches the spider (docs/page-directives.rst, "In a crawl"):

* the ``X-Robots-Tag`` and ``Robots-Tag`` headers (``RERP_PAGE_HEADER``) and, for an HTML
  response, the robots meta tags of its head (``RERP_PAGE_META``, read by
  :mod:`scrapy_rerp.crawl.head_meta`) are combined by the engine for the crawler's user agent, the
  one robots.txt is matched against; the result is in ``response.meta["rerp_page"]`` before
  the callback runs;
* requests the callback yields from a ``nofollow`` (or ``none``) page are dropped
  (``RERP_PAGE_NOFOLLOW``); with ``RERP_PAGE_STRICT_NOFOLLOW``, so are those whose URL the page
  links to only with ``rel="nofollow"``;
* items yielded from a page that forbids one of the ``RERP_USAGE`` purposes (``noindex`` for
  search, ``noai`` for train-ai, ``noimageai`` for the images of train-ai, ...) are dropped, or,
  with ``RERP_USAGE_DROP = False``, kept and marked;
* with a ``RERP_USAGE`` purpose TDMRep speaks to (train-ai, ai-input), the origin's
  ``tdmrep.json`` (fetched by the downloader middleware: :mod:`scrapy_rerp.crawl.documents`), then
  the page's ``tdm-reservation`` and ``tdm-policy`` headers and meta tags (the same reading of
  its head) are combined by the engine's ``tdm_reservation``; a reservation drops or marks the
  page's items as the page directives do, and the decisions are in
  ``response.meta["rerp_tdmrep"]``.

Requests with ``dont_obey_robotstxt`` in their meta, and responses of schemes without
robots.txt, are left alone, as the downloader middleware leaves them
(:func:`scrapy_rerp.core.urls.obeys_robots_txt`); a request the callback yields is kept whatever
the page says when its meta opts out (``opts_out_of_robots_txt``). Every decision is counted
under ``robotstxt/page/``.

What a page says is sent as ``scrapy_rerp.signals.page_read`` (whose handlers may keep the page
from its callback), each request dropped as ``request_refused`` (``reason="page"``).

Each of those headers is read up to ``MAX_HEADER_BYTES`` (core/body.py), its first lines; a cut
is counted in ``robotstxt/page/header_cut`` and logged once (docs/page-directives.rst).
"""

from __future__ import annotations

import datetime
import logging
import weakref
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urldefrag

from itemadapter import ItemAdapter, is_item
from lxml import etree
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request, Response
from scrapy.utils.python import to_unicode
from w3lib.encoding import http_content_type_encoding
from w3lib.url import safe_url_string

from scrapy_rerp.core import loggers
from scrapy_rerp.core import signals as rerp_signals
from scrapy_rerp.core.body import MAX_HEADER_BYTES, capped_lines
from scrapy_rerp.core.documents import TDMREP_FILE_META as FILE_META
from scrapy_rerp.core.lengths import bounded
from scrapy_rerp.core.settings import crawler_user_agent, settings_for
from scrapy_rerp.core.urls import obeys_robots_txt, opts_out_of_robots_txt
from scrapy_rerp.crawl.compat import (
    close_when_opened,
    header_key,
    header_value,
    header_values,
    send_refusable,
    stats_of,
    user_agent_header,
)
from scrapy_rerp.crawl.documents import Attached
from scrapy_rerp.crawl.evidence import EvidenceStopped
from scrapy_rerp.crawl.head_meta import head_meta_tags
from scrapy_rerp.engine import (
    TDMREP_META_NAMES,
    TDMREP_PURPOSES,
    PageDirectives,
    PageStatement,
    PageUsageDecision,
    PageWarning,
    TdmRepDecision,
    TdmRepWarning,
    TdmReservation,
    caller_tokens,
    page_directives,
    tdm_reservation,
    usage_category,
)

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from scrapy_rerp.core.settings import RerpSettings

__all__ = [
    "ITEM_KEY",
    "PAGE_META",
    "PAGE_MIDDLEWARE_PRIORITY",
    "PAGE_USAGE_META",
    "TDMREP_META",
    "PageDirectivesMiddleware",
]

logger = logging.getLogger(loggers.PAGE)

#: ``response.meta`` key: the page's directives for the crawler (a ``PageDirectives``; each of
#: its ``statements`` says which header or meta tag stated it).
PAGE_META = "rerp_page"
#: ``response.meta`` key, with ``RERP_USAGE``: purpose -> ``PageUsageDecision`` for the page's
#: content (an image response's decisions are those for images).
PAGE_USAGE_META = "rerp_page_usage"
#: ``response.meta`` key, with a ``RERP_USAGE`` purpose TDMRep speaks to: purpose ->
#: ``TdmRepDecision`` (which technique, and which statement, decided), for pages whose headers
#: or meta tags state ``tdm-reservation`` or ``tdm-policy``.
TDMREP_META = "rerp_tdmrep"
#: The key a marked item gets (``RERP_USAGE_DROP = False``): purpose -> ``{"source",
#: "statement", "reason"}`` for each purpose the page forbids for it; plain strings, so that
#: feed exports write it as it is.
ITEM_KEY = "rerp_page_usage"
#: The spider middleware's place: close to the spider (higher runs first on its output), after
#: Scrapy's DepthMiddleware (900) on the way in, before MetaCopyDetectionMiddleware (1000).
PAGE_MIDDLEWARE_PRIORITY = 950

#: The response headers that carry page directives (RERP_PAGE_HEADER).
_PAGE_HEADERS = (header_key("X-Robots-Tag"), header_key("Robots-Tag"))
#: The response headers of TDMRep (read only when a RERP_USAGE purpose is one it speaks to).
_TDMREP_HEADERS = tuple(header_key(name) for name in TDMREP_META_NAMES)
_CONTENT_TYPE = header_key("Content-Type")


class _Refusal(NamedTuple):
    """Why a page's items are refused for one purpose: a page directive or a TDMRep
    reservation, in the terms a marked item and the stats use."""

    rule: str  # the stat's last part: the page directive's rule, or "tdm-reservation"
    source: str  # the header or meta tag that said it
    statement: str
    reason: str


@dataclass(kw_only=True)
class _Page:
    """What one response's directives mean for what its callback yields."""

    url: str
    #: The statement that says nofollow, when the page's requests are dropped.
    nofollow: PageStatement | None = None
    #: image item? -> the purposes the page forbids for it, each with why.
    refused: Mapping[bool, list[tuple[str, _Refusal]]]
    image_response: bool
    #: URLs the page links to only with rel="nofollow" (strict mode), read on first use.
    rel_nofollow_only: frozenset[str] | None = None


class PageDirectivesMiddleware:
    """Obey a page's X-Robots-Tag, Robots-Tag and robots meta tags in a crawl.

    Settings are in docs/settings.rst, stats in docs/stats.rst, what it does in
    docs/page-directives.rst ("In a crawl").

    Not a ``BaseSpiderMiddleware``: that class also wraps the spider's start requests (which
    have no page) and adds a layer to each response's output; here a response whose page says
    nothing has no entry, and its output passes through untouched.
    """

    def __init__(self, crawler: Crawler, settings: RerpSettings) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats = stats_of(crawler)
        self.purposes = settings.usage
        #: The RERP_USAGE purposes a TDMRep reservation forbids (none: TDMRep is not read).
        self.tdmrep_purposes = tuple(
            purpose for purpose in self.purposes if usage_category(purpose) in TDMREP_PURPOSES
        )
        self.drop = settings.usage_drop
        self._images_fields = (
            crawler.settings.get("IMAGES_URLS_FIELD") or "image_urls",
            crawler.settings.get("IMAGES_RESULT_FIELD") or "images",
        )
        self._pages: weakref.WeakKeyDictionary[Response, _Page] = weakref.WeakKeyDictionary()
        # Most pages say nothing (no header, no robots meta tag): what that means is the same
        # for every such page, for every crawler and at any time, so it is worked out once.
        # (A sixth of this middleware's instructions per response: docs/benchmarks.rst.)
        self._silent = page_directives([], [], "")
        self._silent_usage = {
            image: {purpose: self._silent.usage(purpose, image=image) for purpose in self.purposes}
            for image in (False, True)
        }
        # Such pages are counted in robotstxt/page/responses in batches: one call to Scrapy's
        # stats collector cost a silent page a fifth of what this middleware spends on it (the
        # spider middleware chain under callgrind: docs/benchmarks.rst). Exact when the spider
        # closes; at most _SILENT_BATCH - 1 behind while it runs.
        self._silent_pages = 0
        crawler.signals.connect(self._count_silent_pages, signal=signals.spider_closed)
        #: The headers a cut was logged for (once each; then only counted).
        self._cut_logged: set[bytes] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = settings_for(crawler, close_when_opened)
        if settings is None:
            # A bad setting, logged once: the crawl closes as the spider opens.
            raise NotConfigured
        if not settings.obey:
            raise NotConfigured("ROBOTSTXT_OBEY is off")
        if not (settings.page_header or settings.page_meta or settings.page_strict_nofollow):
            raise NotConfigured("RERP_PAGE_HEADER and RERP_PAGE_META are off")
        return cls(crawler, settings)

    # -- the spider middleware API -----------------------------------------------------------
    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        """Read the page's directives before its callback runs."""
        request = response.request
        if request is None or not obeys_robots_txt(response.url, request.meta):
            return
        page = self._read(response, request)  # a page_read handler may keep it back
        if page is not None:
            self._pages[response] = page

    def process_spider_exception(
        self, response: Response, exception: BaseException, spider: Spider | None = None
    ) -> list[Any] | None:
        """A page stopped for its evidence (counted, logged) ends here, not as a spider error."""
        return [] if isinstance(exception, EvidenceStopped) else None

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        page = self._pages.get(response)
        if page is None:
            return result
        return (output for output in result if self._keeps(response, page, output))

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        page = self._pages.get(response)
        async for output in result:
            if page is None or self._keeps(response, page, output):
                yield output

    def _keeps(self, response: Response, page: _Page, output: Any) -> bool:
        """Whether a request or item the page's callback yielded goes on (an item may be
        marked on the way)."""
        if isinstance(output, Request):
            return self._keeps_request(output, response, page)
        return self._keeps_item(output, page)

    def _keeps_request(self, request: Request, response: Response, page: _Page) -> bool:
        if opts_out_of_robots_txt(request.meta):
            return True
        if page.nofollow is not None:
            self._count("nofollow_dropped")
            self._dropped(request, page, f"nofollow ({page.nofollow.source}: {page.nofollow.text})")
            return False
        if self.settings.page_strict_nofollow:
            if page.rel_nofollow_only is None:
                page.rel_nofollow_only = self._rel_nofollow_only(response)
            if urldefrag(request.url).url in page.rel_nofollow_only:
                self._count("rel_nofollow_dropped")
                self._dropped(request, page, 'linked with rel="nofollow" only')
                return False
        return True

    def _keeps_item(self, item: Any, page: _Page) -> bool:
        if not self.purposes:
            return True
        refused = page.refused[page.image_response or self._is_image_item(item)]
        if not refused:
            return True
        purpose, refusal = refused[0]
        if self.drop:
            self._count(f"items_dropped/{refusal.rule}")
            logger.debug(
                "Dropped an item from %(page)s: %(reason)s",
                {"page": bounded(page.url), "reason": bounded(refusal.reason)},
                extra={"spider": self.crawler.spider},
            )
            return False
        self._count(f"items_marked/{refusal.rule}")
        _mark(item, refused)
        return True

    # -- reading a page ----------------------------------------------------------------------
    def _read(self, response: Response, request: Request) -> _Page | None:
        """What the page's directives mean for its callback's output: None when the page says
        nothing that could drop or mark any of it."""
        facts = _content_facts(header_value(response.headers, _CONTENT_TYPE))
        named = self._header_lines(response, _PAGE_HEADERS) if self.settings.page_header else []
        # The user agent robots.txt is matched against, chosen where
        # RobotsTxtMiddleware.user_agent_for chooses it.
        user_agent = crawler_user_agent(self.settings, user_agent_header(request))
        tdmrep_named = self._header_lines(response, _TDMREP_HEADERS) if self.tdmrep_purposes else []
        meta: list[tuple[str, str]] = []
        if self.settings.page_meta and isinstance(response, HtmlResponse):
            names = _names_of(user_agent)
            if self.tdmrep_purposes:
                names = (*names, *TDMREP_META_NAMES)
            # One reading of the head serves the robots meta tags and TDMRep's.
            meta = head_meta_tags(response.body, facts.encoding, names)
        # The origin's tdmrep.json, as the gate found it (the file technique comes first).
        attached = request.meta.get(FILE_META) if self.tdmrep_purposes else None
        file = attached.document if isinstance(attached, Attached) else None
        if file is not None and (
            not file.entries  # says nothing
            # Most pages: only the file could speak, and no entry of it matches the page (the
            # whole combination was a tenth of a crawl's purpose CPU: docs/benchmarks.rst).
            or (not tdmrep_named and not meta and file.reservation(response.url) is None)
        ):
            file = None
        reservation = None
        if tdmrep_named or (meta and self.tdmrep_purposes) or file is not None:
            reservation = tdm_reservation(response.url, file, tdmrep_named, meta)
            if not reservation.statements and not reservation.warnings:
                reservation = None
        if not named and not meta and reservation is None:
            self._said_nothing(request.meta, facts.image)
            if not self.settings.page_strict_nofollow:
                return None
            return _Page(url=response.url, refused=_NOTHING_REFUSED, image_response=facts.image)
        directives = page_directives(named, meta, user_agent)
        now = datetime.datetime.now(datetime.timezone.utc)
        refused: dict[bool, list[tuple[str, _Refusal]]] = {False: [], True: []}
        decisions: dict[str, PageUsageDecision] = {}
        for purpose in self.purposes:
            for image in (False, True):
                decision = directives.usage(purpose, image=image, now=now)
                if not decision.allowed:
                    refused[image].append((purpose, _page_refusal(decision)))
                if image == facts.image:
                    decisions[purpose] = decision
        if reservation is not None:
            # After the page's own directives: a page refused by both says so by its directive.
            tdmrep_refused = self._tdmrep(response, reservation)
            for image in (False, True):
                refused[image].extend(tdmrep_refused)
        response.meta[PAGE_META] = directives
        if self.purposes:
            response.meta[PAGE_USAGE_META] = decisions
        self._count_page(response, directives, named, meta, now)
        nofollow = None
        if self.settings.page_nofollow and directives.nofollow:
            nofollow = next(s for s in directives.statements if "nofollow" in s.rule.restricts)
        self._send_page_read(response, directives, refused, nofollow, reservation)
        return _Page(
            url=response.url, nofollow=nofollow, refused=refused, image_response=facts.image
        )

    def _send_page_read(
        self,
        response: Response,
        directives: PageDirectives,
        refused: Mapping[bool, list[tuple[str, _Refusal]]],
        nofollow: PageStatement | None,
        reservation: TdmReservation | None,
    ) -> None:
        """``page_read``: what the page said, and what that does to its output."""
        refusals = [
            {
                "purpose": purpose,
                "images_only": (purpose, refusal) not in refused[False],
                **refusal._asdict(),  # rule, source, statement, reason
            }
            for purpose, refusal in refused[True]  # image items: every purpose refused for any
        ]
        send_refusable(
            self.crawler,
            rerp_signals.page_read,
            response=response,
            directives=directives,
            reservation=reservation,
            refused=refusals,
            items=("dropped" if self.drop else "marked") if refusals else None,
            nofollow=nofollow,
        )

    def _tdmrep(
        self, response: Response, reservation: TdmReservation
    ) -> list[tuple[str, _Refusal]]:
        """Record and count what TDMRep says of the page; the purposes it refuses."""
        decisions: dict[str, TdmRepDecision] = {}
        refused: list[tuple[str, _Refusal]] = []
        for purpose in self.tdmrep_purposes:
            decision = reservation.usage(purpose)
            decisions[purpose] = decision
            statement = decision.statement
            if decision.reserved and statement is not None:
                said = f"tdm-reservation: {statement.reservation}"
                if decision.policy is not None:
                    said += f"; tdm-policy: {decision.policy}"
                refused.append(
                    (purpose, _Refusal("tdm-reservation", statement.source, said, decision.reason))
                )
        response.meta[TDMREP_META] = decisions
        if reservation.statement is not None:
            technique = reservation.statement.technique
            if reservation.reserved:
                self.stats.inc_value(f"robotstxt/tdmrep/reserved/{technique}")
            else:
                self.stats.inc_value(f"robotstxt/tdmrep/not_reserved/{technique}")
        for warning in reservation.warnings:
            self.stats.inc_value(f"robotstxt/tdmrep/warnings/{warning.code}")
            self._not_used("TDMRep statement", response, warning)
        return refused

    def _said_nothing(self, meta: dict[str, Any], image_response: bool) -> None:
        """What ``_read`` records in the ``meta`` of a page without any page directive, as it
        would read them."""
        meta[PAGE_META] = self._silent
        if self.purposes:
            meta[PAGE_USAGE_META] = dict(self._silent_usage[image_response])
        self._silent_pages += 1
        if self._silent_pages == _SILENT_BATCH:
            self._count_silent_pages()

    def _rel_nofollow_only(self, response: Response) -> frozenset[str]:
        """URLs (without fragment) that *response* links to with rel="nofollow", and with no
        other link; the page is parsed only if "nofollow" appears in it."""
        if not isinstance(response, HtmlResponse):
            return frozenset()
        body = response.body
        # bytes.lower and "in" run in C; a case-insensitive pattern would cost ten times more.
        if b"nofollow" not in body and b"nofollow" not in body.lower():
            return frozenset()
        nofollow: set[str] = set()
        followed: set[str] = set()
        try:
            # The links' rel read here, in any case: Scrapy's LinkExtractor before 2.14 marks
            # only a lower-case rel="nofollow".
            for anchor in response.xpath("//a[@href] | //area[@href]"):
                href = anchor.attrib["href"].strip()
                url = safe_url_string(response.urljoin(href), response.encoding)
                rel = anchor.attrib.get("rel", "").lower().split()
                (nofollow if "nofollow" in rel else followed).add(urldefrag(url).url)
        except (ValueError, etree.LxmlError) as error:
            logger.debug(
                "No links read from %(page)s for rel=nofollow: %(error)s",
                {"page": response.url, "error": error},
                extra={"spider": self.crawler.spider},
            )
            return frozenset()
        return frozenset(nofollow - followed)

    def _is_image_item(self, item: Any) -> bool:
        """An item whose image URLs or images (ImagesPipeline's fields) are not empty."""
        if not is_item(item):
            return False
        adapter = ItemAdapter(item)
        return any(adapter.get(name) for name in self._images_fields)

    # -- stats and logs ----------------------------------------------------------------------
    def _count_page(
        self,
        response: Response,
        directives: PageDirectives,
        headers: list[tuple[bytes, bytes]],
        meta: list[tuple[str, str]],
        now: datetime.datetime,
    ) -> None:
        self._count("responses")
        if headers:
            self._count("header_seen")
        if any(name == "robots" or name == directives.agent for name, _ in meta):
            self._count("meta_seen")
        for restriction in sorted(directives.restrictions(now)):
            self._count(f"restriction/{restriction}")
        # A header read to its cap can hold hundreds of unknown directives: counted once per
        # code, each quoted only when DEBUG is on.
        for code, count in Counter(warning.code for warning in directives.warnings).items():
            self.stats.inc_value(f"robotstxt/page/warnings/{code}", count)
        if logger.isEnabledFor(logging.DEBUG):
            for warning in directives.warnings:
                self._not_used("Page directive", response, warning)

    def _not_used(
        self, what: str, response: Response, warning: PageWarning | TdmRepWarning
    ) -> None:
        """A statement of the page that was not used, quoted at DEBUG (``what`` it was)."""
        logger.debug(
            "%(what)s of %(page)s not used: %(source)s: %(message)s",
            {
                "what": what,
                "page": bounded(response.url),
                "source": bounded(warning.source),
                "message": bounded(warning.message),
            },
            extra={"spider": self.crawler.spider},
        )

    def _dropped(self, request: Request, page: _Page, why: str) -> None:
        logger.debug(
            "Dropped %(request)s: %(why)s on %(page)s",
            {"request": bounded(str(request)), "why": bounded(why), "page": bounded(page.url)},
            extra={"spider": self.crawler.spider},
        )
        self.crawler.signals.send_catch_log(
            rerp_signals.request_refused, request=request, reason="page", message=why, decision=None
        )

    def _header_lines(
        self, response: Response, names: tuple[bytes, ...]
    ) -> list[tuple[bytes, bytes]]:
        """``(name, line)`` of each of the headers *names* the response has, capped."""
        lines: list[tuple[bytes, bytes]] = []
        for name in names:  # mostly absent: no list built for them
            values = header_values(response.headers, name)
            if values:
                lines.extend((name, value) for value in self._capped(response, name, values))
        return lines

    def _capped(self, response: Response, name: bytes, values: list[bytes]) -> list[bytes]:
        """The first ``MAX_HEADER_BYTES`` of header *name*'s lines; a cut counted, and logged
        the first time for that header."""
        kept, unread = capped_lines(values)
        if not unread:
            return values
        self._count("header_cut")
        if name not in self._cut_logged:
            self._cut_logged.add(name)
            logger.info(
                "%(header)s header of %(page)s cut at %(cap)s bytes (%(unread)s more not read): "
                "its first lines apply; further cuts are counted in robotstxt/page/header_cut",
                {
                    "header": to_unicode(name, errors="replace"),
                    "page": bounded(response.url),
                    "cap": MAX_HEADER_BYTES,
                    "unread": unread,
                },
                extra={"spider": self.crawler.spider},
            )
        return kept

    def _count(self, key: str) -> None:
        self.stats.inc_value(f"robotstxt/page/{key}")

    def _count_silent_pages(self) -> None:
        if self._silent_pages:
            self.stats.inc_value("robotstxt/page/responses", self._silent_pages)
            self._silent_pages = 0


#: Pages that say nothing, counted into robotstxt/page/responses at once.
_SILENT_BATCH = 100

_NOTHING_REFUSED: Mapping[bool, list[tuple[str, _Refusal]]] = {False: [], True: []}


def _page_refusal(decision: PageUsageDecision) -> _Refusal:
    statement = decision.statement
    assert statement is not None  # a forbidden purpose has its statement
    return _Refusal(statement.rule.name, statement.source, statement.text, decision.reason)


class _ContentFacts(NamedTuple):
    #: The charset the Content-Type header declares, if any.
    encoding: str | None
    #: Whether the response is an image (``image/*``).
    image: bool


@lru_cache(maxsize=256)
def _content_facts(content_type: bytes | None) -> _ContentFacts:
    """What a Content-Type header value says; a crawl sees few distinct values, so each is
    read once (bounded: values come from the network)."""
    if not content_type:
        return _ContentFacts(None, False)
    text = to_unicode(content_type, errors="replace")
    return _ContentFacts(
        http_content_type_encoding(text), text.strip().lower().startswith("image/")
    )


@lru_cache(maxsize=64)
def _names_of(user_agent: str) -> tuple[str, ...]:
    """The meta tag names that can speak to *user_agent*: ``robots`` and its product tokens
    (the only ones ``page_directives`` reads)."""
    return ("robots", *caller_tokens(user_agent))


def _mark(item: Any, refused: list[tuple[str, _Refusal]]) -> None:
    """Put the purposes the page forbids into *item*, if it is an item that takes the key (a
    dict, or an item class declaring the field); the decisions are in ``response.meta``
    whatever the item."""
    if not is_item(item):
        return
    marks = {}
    for purpose, refusal in refused:
        # The first refusal of a purpose says why: the page's own directive before TDMRep.
        marks.setdefault(
            purpose,
            {"source": refusal.source, "statement": refusal.statement, "reason": refusal.reason},
        )
    try:
        ItemAdapter(item)[ITEM_KEY] = marks
    except KeyError:  # an Item, dataclass or attrs class without the field
        pass
