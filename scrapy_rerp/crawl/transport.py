"""robots.txt downloaded through Scrapy: the origin service's transport in a crawl.

One downloader serves one :class:`~scrapy_rerp.core.documents.DocumentKind` (robots.txt unless
told otherwise): its stats have the kind's prefix, and the kind reads the bodies and says what an
origin without a file has.

:class:`RobotsTxtDownloader` does each download through the engine (``download_async``, or
``download`` before Scrapy 2.14: :func:`scrapy_rerp.crawl.compat.download`), so through the other
downloader middlewares and download handlers, following redirects itself (to any host:
OffsiteMiddleware would silently drop a redirect elsewhere; to http and https only). Where each
answer leads (a redirect, the status ladder's outcome, a body cut at the cap) is asked of the
download's :class:`~scrapy_rerp.core.download.Course`, as the command line asks it.

Bodies are capped at ``RERP_MAX_SIZE`` twice: on the wire (``bytes_received`` and
``StopDownload``: the rest is never downloaded) and after decompression (the Content-Encoding is
taken off before Scrapy's HttpCompressionMiddleware would inflate the whole body, and undone
here by :mod:`scrapy_rerp.core.decompress` up to the cap).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Request, Response
from scrapy.http.request import NO_CALLBACK

from scrapy_rerp.core import loggers
from scrapy_rerp.core import status as ladder
from scrapy_rerp.core.body import read_body
from scrapy_rerp.core.data import Fetched, Validators
from scrapy_rerp.core.documents import DocumentKind, robots_txt
from scrapy_rerp.core.download import INVALID, LIMIT, Course, Ended, Hop
from scrapy_rerp.core.settings import robotstxt_request_meta
from scrapy_rerp.core.status import ALLOW_ALL, DISALLOW_ALL, PARSED, UNREACHABLE, download_failure
from scrapy_rerp.crawl.compat import download, stats_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.settings import RerpSettings

__all__ = ["RobotsTxtDownloader"]

logger = logging.getLogger(loggers.ROBOTSTXT)

# Set on a robots.txt request while it downloads (the meta it is made with, ROBOTS_ORIGIN_META
# among it, is core.settings.robotstxt_request_meta's):
_COURSE = "_rerp_course"  # its course (core.download): the redirects, the size cap
_ENCODING = "_rerp_content_encoding"  # the Content-Encoding taken off the raw response
# The kind's name: the downloader of each kind hears every download's signals, and handles
# those of its own requests only.
_KIND = "_rerp_document"

#: Priority of robots.txt requests: ahead of the pages waiting for them.
DOWNLOAD_PRIORITY = 1000


class RobotsTxtDownloader:
    """Downloads robots.txt once: redirects followed, the status policy applied, the body
    capped and parsed."""

    def __init__(
        self, crawler: Crawler, settings: RerpSettings, kind: DocumentKind | None = None
    ) -> None:
        self.crawler = crawler
        self.settings = settings
        self.kind = kind if kind is not None else robots_txt(settings.syntax)
        # A kind without a legacy reading of 401/403 reads them as any 4xx.
        self._legacy = settings.legacy and self.kind.refused is not None
        self.stats = stats_of(crawler)
        self._hooked = 0  # robots.txt downloads in progress (size-cap handlers connected)
        # The cap is RERP_MAX_SIZE, enforced while receiving (bytes_received, StopDownload): over
        # HTTP Scrapy's own limit is off, or it would cancel a larger file from its
        # Content-Length and the origin would count as unreachable. Other schemes' handlers send
        # no bytes_received, so Scrapy's limit stays, at least twice the cap.
        maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self._other_maxsize = maxsize and max(maxsize, 2 * settings.max_size)

    async def fetch(
        self, robots_url: str, origin: str, validators: Validators | None = None
    ) -> Fetched:
        """Download robots.txt once, following up to RERP_MAX_REDIRECTS redirects; with
        ``validators`` (a stored copy's URL and its conditional headers), the request for that
        URL is conditional, and a 304 to it says the stored copy stands."""
        s = self.settings
        course = Course(
            robots_url, s.max_redirects, s.max_size, legacy=self._legacy, validators=validators
        )
        step: Hop | Ended = course.hop
        request, response = None, None
        while isinstance(step, Hop):
            try:
                request = self._robots_request(step.url, origin)
            except ValueError as exc:  # a Location that is no URL Scrapy can make a request of
                step = course.refused(str(exc))
                break
            request.meta.update({_KIND: self.kind.name, _COURSE: course})
            request.headers.update(step.headers)
            self.stats.inc_value(self.kind.stats.request_count)
            try:
                response = await self._download(request)
            except IgnoreRequest as exc:
                # Another middleware refused to download it: like Scrapy, rules are unknown,
                # so allow all (but say so).
                self.stats.inc_value(self.kind.stats.ignored)
                logger.warning(
                    "%(kind)s request %(request)s ignored (%(exc)s); %(means)s of %(origin)s",
                    {
                        "kind": self.kind.name,
                        "request": request,
                        "exc": exc,
                        "means": self.kind.absent_means,
                        "origin": origin,
                    },
                    extra={"spider": self.crawler.spider},
                )
                return Fetched(
                    outcome=ALLOW_ALL, robots=self.kind.absent(), url=step.url, reason="ignored"
                )
            except Exception as exc:
                self.stats.inc_value(self.kind.stats.exception_count.format(type(exc)))
                return Fetched(outcome=UNREACHABLE, url=step.url, reason=download_failure(exc))
            status = response.status
            self.stats.inc_value(self.kind.stats.response_count)
            self.stats.inc_value(self.kind.stats.response_status_count.format(status))
            step = course.answer(status, response.headers.get(b"Location"), response.url)
            if isinstance(step, Hop):
                self.stats.inc_value(self.kind.stats.redirect_count)
        return self._ended(step, origin, request, response)

    def _ended(
        self, ended: Ended, origin: str, request: Request | None, response: Response | None
    ) -> Fetched:
        """What the end of a download's course says, as the origin service keeps it."""
        if ended.redirect == LIMIT:
            self.stats.inc_value(self.kind.stats.redirect_limit)
        elif ended.redirect == INVALID:
            # Counted and logged, the credentials hidden (a password never reaches a log).
            self.stats.inc_value(self.kind.stats.redirect_invalid)
            logger.info(
                "%(kind)s of %(origin)s redirects where it cannot be followed (%(reason)s): "
                "read as unavailable",
                {"kind": self.kind.name, "origin": origin, "reason": ended.reason},
                extra={"spider": self.crawler.spider},
            )
        if ended.redirect is not None:
            return self._allow_all(ended.reason, ended.status, ended.url)
        assert request is not None and response is not None
        status, url, reason = response.status, response.url, ended.reason
        if ended.not_modified:  # the stored copy stands, for the lifetime the 304 gives it
            return Fetched(
                outcome=UNREACHABLE,
                status=status,
                url=url,
                lifetime=ladder.lifetime_from_headers(response.headers),
                response=response,
                reason=reason,
                not_modified=True,
            )
        if ended.outcome == PARSED:
            return self._parse(response, request)
        if ended.outcome == UNREACHABLE:
            return Fetched(
                outcome=UNREACHABLE,
                status=status,
                url=url,
                retry_after=ladder.retry_after(response.headers),
                reason=reason,
            )
        if ended.outcome == DISALLOW_ALL:
            assert self.kind.refused is not None  # else not legacy: no DISALLOW_ALL
            self.stats.inc_value(self.kind.stats.disallow_all.format(status))
            return Fetched(
                outcome=DISALLOW_ALL,
                robots=self.kind.refused(),
                status=status,
                url=url,
                response=response,
                reason=reason,
            )
        return self._allow_all(reason, status, url, response)

    def _allow_all(
        self, reason: str, status: int | None, url: str | None, response: Response | None = None
    ) -> Fetched:
        """RFC 9309 2.3.1.3: robots.txt unavailable (4xx, too many redirects): allow all (for
        another kind: what an origin without the file has)."""
        self.stats.inc_value(self.kind.stats.allow_all)
        return Fetched(
            outcome=ALLOW_ALL,
            robots=self.kind.absent(),
            status=status,
            url=url,
            response=response,
            reason=reason,
        )

    def _parse(self, response: Response, request: Request) -> Fetched:
        s = self.settings
        encodings = request.meta.get(_ENCODING)
        body = read_body(
            response.body,
            encodings,
            response.headers.get(b"Content-Type"),
            s.max_size,
            cut=request.meta[_COURSE].cut,
        )
        if body.undecodable is not None:
            # Undecodable: the bytes are no rules a crawler could read; treat the file as
            # unavailable (allow all), as for an unparsable body of any other kind.
            self.stats.inc_value(self.kind.stats.undecodable)
            return self._allow_all(body.undecodable, response.status, response.url, response)
        if body.truncated:
            self.stats.inc_value(self.kind.stats.truncated)
            logger.info(
                "%(kind)s %(url)s is larger than RERP_MAX_SIZE (%(max)d bytes): "
                "only the first %(max)d bytes are used",
                {"kind": self.kind.name, "url": response.url, "max": s.max_size},
                extra={"spider": self.crawler.spider},
            )
        if body.charset_note is not None:
            self.stats.inc_value(self.kind.stats.charset_replaced)
            logger.warning(
                "%(kind)s %(url)s: %(note)s",
                {"kind": self.kind.name, "url": response.url, "note": body.charset_note},
                extra={"spider": self.crawler.spider},
            )
        robots = self.kind.parse(body)
        if encodings:
            response = response.replace(body=body.data)
        return Fetched(
            outcome=PARSED,
            robots=robots,
            status=response.status,
            url=response.url,
            lifetime=ladder.lifetime_from_headers(response.headers),
            response=response,
            reason=f"HTTP {response.status}",
            body=body.data,
            charset=body.charset,
        )

    def _robots_request(self, url: str, origin: str) -> Request:
        return Request(
            url,
            priority=DOWNLOAD_PRIORITY,
            callback=NO_CALLBACK,
            dont_filter=True,
            # RERP_ROBOTSTXT_META, then the middleware's own keys (redirects and retries are
            # done here, see the module doc).
            meta=robotstxt_request_meta(
                self.settings.robotstxt_meta,
                origin,
                0 if url[:6].lower().startswith(("http:", "https:")) else self._other_maxsize,
            ),
        )

    async def _download(self, request: Request) -> Response:
        hooks = (
            (self._bytes_received, signals.bytes_received),
            (self._response_downloaded, signals.response_downloaded),
        )
        if self._hooked == 0:
            # Connected only while robots.txt downloads run: the handlers would otherwise be
            # called for every chunk and every response of the crawl.
            for handler, signal in hooks:
                self.crawler.signals.connect(handler, signal=signal)
        self._hooked += 1
        try:
            return await download(self.crawler, request)
        finally:
            self._hooked -= 1
            if self._hooked == 0:
                for handler, signal in hooks:
                    self.crawler.signals.disconnect(handler, signal=signal)

    def _bytes_received(self, data: bytes, request: Request, spider: Any = None) -> None:
        meta = request.meta
        if meta.get(_KIND) != self.kind.name:  # not a download of this kind's (or not one)
            return
        if meta[_COURSE].received(len(data)):
            # The rest is never downloaded; the response keeps what arrived so far.
            raise StopDownload(fail=False)

    def _response_downloaded(
        self, response: Response, request: Request, spider: Any = None
    ) -> None:
        # Runs before the downloader middlewares' process_response: the raw response still
        # carries its Content-Encoding, which HttpCompressionMiddleware would undo up to
        # DOWNLOAD_MAXSIZE (1 GiB by default). Taken off here, undone in _parse() up to the cap.
        if request.meta.get(_KIND) != self.kind.name:
            return
        encodings = response.headers.getlist(b"Content-Encoding")
        if encodings:
            request.meta[_ENCODING] = encodings
            del response.headers[b"Content-Encoding"]
