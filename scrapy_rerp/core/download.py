"""One download's course, decided without I/O: redirects, the status ladder, the size cap and
conditional requests, for robots.txt, the other per-origin documents and pages alike.

A driver makes the request the :class:`Course` asks for (its :class:`Hop`) and hands it each
answer's status and Location; the course answers with the next hop or the end (:class:`Ended`:
the outcome :func:`~scrapy_rerp.core.status.status_outcome` says, in a few words), and
:meth:`Course.received` says when a body is over the cap. The crawl drives it through Scrapy's
downloader (``crawl/transport``), the command line through urllib (``cli/_download.follow``).
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field

from scrapy_rerp.core.data import Outcome, Validators
from scrapy_rerp.core.status import ALLOW_ALL, REDIRECT, UNREACHABLE, status_outcome
from scrapy_rerp.core.urls import redirect_target, without_userinfo

__all__ = ["INVALID", "LIMIT", "PAGE_MAX_REDIRECTS", "PAGE_REDIRECTS", "Course", "Ended", "Hop"]

#: Why a redirect ended a download (the ``robotstxt/redirect/*`` stats): one too many, or a
#: target that cannot be followed (malformed, not http or https, with credentials).
LIMIT, INVALID = "limit", "invalid"
#: The redirects a crawl follows for a page, as Scrapy's RedirectMiddleware: these statuses with
#: a Location, up to its REDIRECT_MAX_TIMES (20). A per-origin document's course follows any
#: 3xx with a Location, up to RERP_MAX_REDIRECTS.
PAGE_REDIRECTS = frozenset({301, 302, 303, 307, 308})
PAGE_MAX_REDIRECTS = 20


@dataclass(frozen=True)
class Hop:
    """A request to make: its URL, the redirects before it, its conditional headers, if any."""

    url: str
    number: int = 0
    headers: Mapping[bytes, bytes] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Ended:
    """How a download ends: the ladder's outcome (a page's driver reads the body whatever it
    is) and its reason; when a redirect ended it, why (:data:`LIMIT`, :data:`INVALID`)."""

    outcome: Outcome
    reason: str  # "HTTP 404", "more than 5 redirects", "bad redirect target '...': ..."
    url: str  # the URL last asked for
    status: int | None = None  # None: no request could be made of the URL
    not_modified: bool = False  # a 304 to a conditional request: the stored copy stands
    redirect: str | None = None


class Course:
    """The course of one download from ``url``: up to ``max_redirects`` redirects (answers of a
    ``redirects`` status with a Location), a body cut past ``max_size`` bytes, and with
    ``validators`` the request for their URL conditional."""

    def __init__(
        self,
        url: str,
        max_redirects: int,
        max_size: int,
        *,
        legacy: bool = False,
        validators: Validators | None = None,
        redirects: Container[int] = range(300, 400),
    ) -> None:
        self.max_redirects, self.max_size, self.legacy = max_redirects, max_size, legacy
        self.validators, self.redirect_statuses = validators, redirects
        self.redirects: list[str] = []  # the URLs redirected to, in order
        self.status: int | None = None  # of the last answer
        self.hop = self._hop(url)

    def _hop(self, url: str) -> Hop:
        self.cut, self._received = False, 0  # of the hop's answer: its body
        copy = self.validators
        return Hop(url, len(self.redirects), copy.headers if copy and copy.url == url else {})

    def answer(
        self, status: int, location: bytes | str | None, url: str | None = None
    ) -> Hop | Ended:
        """The next hop or the end, after an answer with ``status`` and ``location`` (its
        Location header) to the current hop (whose URL the driver's client wrote as ``url``)."""
        url, self.status = url or self.hop.url, status
        if status == 304 and self.hop.headers:
            return Ended(
                outcome=UNREACHABLE, reason="HTTP 304", url=url, status=status, not_modified=True
            )
        has_location = bool(location) and status in self.redirect_statuses
        outcome = status_outcome(status, legacy=self.legacy, has_location=has_location)
        if outcome != REDIRECT:
            no_location = outcome == ALLOW_ALL and 300 <= status < 400
            reason = f"{status} without Location" if no_location else f"HTTP {status}"
            return Ended(outcome=outcome, reason=reason, url=url, status=status)
        if self.hop.number == self.max_redirects:
            reason = f"more than {self.max_redirects} redirects"
            return Ended(outcome=ALLOW_ALL, reason=reason, url=url, status=status, redirect=LIMIT)
        location = location.decode("utf-8", "replace") if isinstance(location, bytes) else location
        try:
            target = redirect_target(url, location or "")
        except ValueError as exc:
            return _invalid(str(exc), location or "", url, status)
        self.redirects.append(target)
        self.hop = self._hop(target)
        return self.hop

    def refused(self, why: str) -> Ended:
        """The end of a download whose current hop's URL the driver's client refuses, ``why``."""
        return _invalid(why, self.hop.url, self.hop.url, None)

    def received(self, size: int) -> bool:
        """Count ``size`` more bytes of the current answer's body; True once they are over the
        cap: the body is cut there, and the rest is not read."""
        self._received += size
        self.cut = self.cut or self._received > self.max_size
        return self.cut


def _invalid(why: str, target: str, url: str, status: int | None) -> Ended:
    # robots.txt unavailable, as google reads it; the target quoted without its credentials.
    reason = f"bad redirect target {without_userinfo(target)[:200]!r}: {why}"
    return Ended(outcome=ALLOW_ALL, reason=reason, url=url, status=status, redirect=INVALID)
