"""One download's course, decided without I/O: redirects, the status ladder, the size cap and
conditional requests, for robots.txt, the other per-origin documents and pages alike.

A driver makes the request a :class:`Course` asks for (its :class:`Hop`), hands back each
answer's status and Location, and is told what comes next: the next hop (a redirect followed,
and counted), or how the download ends (:class:`Ended`: the status ladder's outcome,
:func:`scrapy_rerp.core.status.status_outcome`, and its reason in a few words). While a body
arrives, :meth:`Course.received` says when it is over the cap and is cut there. The crawl drives
it through Scrapy's downloader (``crawl/transport``), the command line through urllib
(``cli/_download``: robots.txt, a page, a tdmrep.json); neither follows a redirect of its own.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field

from scrapy_rerp.core.data import Outcome, Validators
from scrapy_rerp.core.status import ALLOW_ALL, REDIRECT, UNREACHABLE, status_outcome
from scrapy_rerp.core.urls import redirect_target, without_userinfo

__all__ = ["LIMIT", "INVALID", "PAGE_MAX_REDIRECTS", "PAGE_REDIRECTS", "Course", "Ended", "Hop"]

#: Why a redirect ended a download (the ``robotstxt/redirect/<why>`` stats): one too many, or
#: a target that cannot be followed (malformed, not http or https, with credentials).
LIMIT = "limit"
INVALID = "invalid"
#: The redirects a crawl follows for a page, as Scrapy's RedirectMiddleware does: these statuses
#: with a Location, up to REDIRECT_MAX_TIMES (20, Scrapy's default). A robots.txt or another
#: per-origin document follows any 3xx with a Location, up to RERP_MAX_REDIRECTS.
PAGE_REDIRECTS = frozenset({301, 302, 303, 307, 308})
PAGE_MAX_REDIRECTS = 20


@dataclass(frozen=True)
class Hop:
    """A request to make: its URL, the redirects followed before it, and the headers that make
    it conditional (a stored copy's validators, for the URL that copy came from)."""

    url: str
    number: int = 0
    headers: Mapping[bytes, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class Ended:
    """How a download ends: the ladder's outcome (a page's body is read whatever it is), in a
    few words, and, when a redirect ended it, why (:data:`LIMIT` or :data:`INVALID`, the
    target then as a log may quote it, credentials hidden)."""

    outcome: Outcome
    reason: str
    url: str  # the URL last asked for
    status: int | None = None  # None: no request could be made of the URL
    not_modified: bool = False  # a 304 to a conditional request: the stored copy stands
    redirect: str | None = None
    target: str = ""
    why: str = ""


class Course:
    """The course of one download from ``url``: up to ``max_redirects`` redirects (of the
    ``redirects`` statuses, with a Location), a body cut past ``max_size`` bytes, and with
    ``validators`` the request for their URL conditional."""

    def __init__(
        self,
        url: str,
        *,
        max_redirects: int,
        max_size: int,
        legacy: bool = False,
        validators: Validators | None = None,
        redirects: Container[int] = range(300, 400),
    ) -> None:
        self.max_redirects = max_redirects
        self.max_size = max_size
        self.legacy = legacy
        self.validators = validators
        self.redirect_statuses = redirects
        self.redirects: list[str] = []  # the URLs redirected to, in order
        self.status: int | None = None  # of the last answer
        self.cut = False  # the current answer's body is over the cap
        self._received = 0
        self.hop = self._hop(url)

    def _hop(self, url: str) -> Hop:
        self.cut, self._received = False, 0
        validators = self.validators
        if validators is not None and validators.url == url:
            return Hop(url, len(self.redirects), validators.headers)
        return Hop(url, len(self.redirects))

    def answer(
        self, status: int, location: bytes | str | None, url: str | None = None
    ) -> Hop | Ended:
        """The next hop or the end, for an answer with ``status`` and ``location`` (its
        Location header) to the current hop (whose URL the driver's client wrote as ``url``)."""
        url = self.hop.url if url is None else url
        self.status = status
        if status == 304 and self.hop.headers:
            return Ended(UNREACHABLE, "HTTP 304", url, status, not_modified=True)
        has_location = bool(location) and status in self.redirect_statuses
        outcome = status_outcome(status, legacy=self.legacy, has_location=has_location)
        if outcome != REDIRECT:
            if outcome == ALLOW_ALL and 300 <= status < 400:
                return Ended(outcome, f"{status} without Location", url, status)
            return Ended(outcome, f"HTTP {status}", url, status)
        if self.hop.number == self.max_redirects:
            reason = f"more than {self.max_redirects} redirects"
            return Ended(ALLOW_ALL, reason, url, status, redirect=LIMIT)
        assert location is not None
        if isinstance(location, bytes):
            location = location.decode("utf-8", "replace")
        try:
            target = redirect_target(url, location)
        except ValueError as exc:
            return self._invalid(str(exc), location, url, status)
        self.redirects.append(target)
        self.hop = self._hop(target)
        return self.hop

    def refused(self, why: str) -> Ended:
        """The end of a download whose current hop no request can be made of, ``why`` (a URL
        the driver's client refuses): as for a redirect that cannot be followed."""
        return self._invalid(why, self.hop.url, self.hop.url, None)

    def _invalid(self, why: str, target: str, url: str, status: int | None) -> Ended:
        # robots.txt unavailable, as google reads it; the target quoted without credentials.
        quoted = without_userinfo(target)[:200]
        reason = f"bad redirect target {quoted!r}: {why}"
        return Ended(ALLOW_ALL, reason, url, status, redirect=INVALID, target=quoted, why=why)

    def received(self, size: int) -> bool:
        """Count ``size`` more bytes of the current answer's body; True once they are over the
        cap: the body is cut there, and the rest is not read."""
        self._received += size
        self.cut = self.cut or self._received > self.max_size
        return self.cut
