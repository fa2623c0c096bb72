"""The status policy: what one answer to a robots.txt request means, as pure functions.

Nothing here downloads, waits or keeps state, so every row of the status table
(docs/status-policy.rst) is a unit test (``tests/core/test_status.py``), as Scrapy's httpcache
separates ``RFC2616Policy`` from its storage. The crawl's transport (``crawl/transport.py``) asks
these functions and acts on the answers, and so can the command line: standard library only
(Cache-Control and HTTP dates are read as Scrapy's httpcache reads them,
``parse_cachecontrol`` and ``rfc1123_to_epoch``; a test holds them to Scrapy's).

The readers of an answer's headers live here, one reader per header, for robots.txt and pages
alike: :func:`retry_after` is the one reading of ``Retry-After``, which the status ladder's
backoff and the slow-downs of pages (:mod:`scrapy_rerp.core.slowdown`) both take, and the
command line shows, so that a value means the same wait wherever it is met. It is kept beside
the HTTP dates it reads rather than in a module of its own, since the slow-downs import these
readers already. So are the words for a download that got no answer at all (the table's
"network error, timeout, DNS failure" row): :func:`download_failure`, which ``scrapy robots``
(``commands.py``) and the command line (``cli/``) both say.
"""

from __future__ import annotations

import time
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Protocol

from scrapy_rerp.core.data import Outcome

if TYPE_CHECKING:
    from scrapy_rerp.core.settings import RerpSettings

__all__ = [
    "ALLOW_ALL",
    "CONNECTION_REFUSED",
    "DISALLOW_ALL",
    "DNS_FAILED",
    "FAILURE_WORDS",
    "PARSED",
    "REDIRECT",
    "TIMED_OUT",
    "UNREACHABLE",
    "backoff",
    "download_failure",
    "entry_lifetime",
    "lifetime_from_headers",
    "parse_cachecontrol",
    "retry_after",
    "rfc1123_to_epoch",
    "status_outcome",
]

# What a robots.txt answer leads to (RobotsEntry.outcome holds all but REDIRECT).
PARSED = Outcome.PARSED
ALLOW_ALL = Outcome.ALLOW_ALL
DISALLOW_ALL = Outcome.DISALLOW_ALL
UNREACHABLE = Outcome.UNREACHABLE
REDIRECT = Outcome.REDIRECT

#: Why a download got no answer, in a few words: one phrase per cause, which ``scrapy robots``
#: and the command line (``fetch``, ``page``, a robots.txt URL given to ``check``...) both say.
CONNECTION_REFUSED = "connection refused"
TIMED_OUT = "timed out"
DNS_FAILED = "DNS lookup failed"

#: Those phrases by the class names of the errors that mean them: Python's (urllib and socket,
#: which the command line downloads with), Twisted's and Scrapy's own (2.19). Names, not
#: classes, so that the core imports neither Twisted nor Scrapy.
FAILURE_WORDS: dict[str, str] = {
    "ConnectionRefusedError": CONNECTION_REFUSED,  # Python's, Twisted's
    "DownloadConnectionRefusedError": CONNECTION_REFUSED,  # Scrapy's
    "TimeoutError": TIMED_OUT,  # Python's (socket.timeout too), Twisted's
    "TCPTimedOutError": TIMED_OUT,  # Twisted's
    "DownloadTimeoutError": TIMED_OUT,  # Scrapy's
    "gaierror": DNS_FAILED,  # socket's
    "DNSLookupError": DNS_FAILED,  # Twisted's
    "CannotResolveHostError": DNS_FAILED,  # Scrapy's
}

#: A Retry-After is honoured in full, up to this many seconds (a day): a server may ask a crawler
#: to come back later, not to stay away for a year.
RETRY_AFTER_MAX = 24 * 3600.0


class _HeadersLike(Protocol):
    def get(self, key: bytes, def_val: bytes | None = None) -> bytes | None: ...


def status_outcome(status: int, *, legacy: bool = False, has_location: bool = True) -> Outcome:
    """The outcome of an HTTP ``status`` for robots.txt (docs/status-policy.rst).

    ``legacy`` is the mk1996/gym2008 mode, where 401 and 403 mean "disallow all" as in rerp's
    ``fetch()``; ``has_location`` tells whether a 3xx names where to go.
    """
    if 200 <= status < 300:
        return PARSED
    if 300 <= status < 400:
        return REDIRECT if has_location else ALLOW_ALL
    if status in (401, 403) and legacy:
        return DISALLOW_ALL
    if status == 429:
        return UNREACHABLE
    if 400 <= status < 500:
        return ALLOW_ALL
    # 5xx, and statuses outside 2xx-5xx (a server that answers nonsense is not answering).
    return UNREACHABLE


def lifetime_from_headers(headers: _HeadersLike, now: float | None = None) -> float | None:
    """Seconds a robots.txt answer may be cached for, per its headers; None when they say nothing.

    ``Cache-Control: max-age`` wins; ``no-cache`` or ``no-store`` mean 0 (refetch on the next
    request, which the middleware's lower bound then spaces out); else ``Expires`` relative to
    ``Date`` (an invalid ``Expires`` means "already expired", RFC 9111 5.3).
    """
    cache_control = headers.get(b"Cache-Control")
    if cache_control:
        directives = parse_cachecontrol(cache_control)
        max_age = directives.get(b"max-age")
        if max_age is not None:
            seconds = _seconds(max_age.strip(b'"'))
            if seconds is not None:
                return seconds
        if b"no-cache" in directives or b"no-store" in directives:
            return 0.0
    expires = headers.get(b"Expires")
    if expires:
        when = rfc1123_to_epoch(expires)
        if when is None:
            return 0.0
        base = rfc1123_to_epoch(headers.get(b"Date"))
        if base is None:
            base = time.time() if now is None else now
        return max(0.0, float(when - base))
    return None


def retry_after(headers: _HeadersLike, now: float | None = None) -> float | None:
    """Seconds the ``Retry-After`` header of an answer asks a crawler to wait (more than 0), or
    None when it asks for no wait the crawler can be held to: absent, unreadable, zero, or a
    date that is not in the future.

    The value is delta-seconds (digits, spaces around them aside), or an HTTP date, read against
    the answer's ``Date`` header, the server's own clock (so that a crawler whose clock is off
    waits what the server meant), else against ``now``, this machine's Unix time
    (``time.time()`` when not given). Nothing is capped here: :func:`backoff` honours a wait up
    to :data:`RETRY_AFTER_MAX`, a page's cool-down up to ``RERP_SLOWDOWN_MAX_WAIT``.
    """
    value = headers.get(b"Retry-After")
    if not value:
        return None
    wait = _seconds(value)
    if wait is None:
        when = rfc1123_to_epoch(value.strip())
        if when is None:
            return None
        base = rfc1123_to_epoch(headers.get(b"Date"))
        if base is None:
            base = time.time() if now is None else now
        wait = float(when - base)
    return wait if wait > 0 else None


def backoff(failures: int, retry_after_s: float | None, settings: RerpSettings) -> float:
    """Seconds before retrying an unreachable robots.txt after ``failures`` failures in a row.

    Exponential (``RERP_RETRY_BACKOFF_BASE`` x 2^(failures-1), at most
    ``RERP_RETRY_BACKOFF_MAX``), and never sooner than the server's ``Retry-After`` (honoured in
    full, up to a day): ``retry_after_s`` as :func:`retry_after` reads it, None for no wait.
    """
    delay = settings.retry_backoff_base * 2 ** min(max(failures, 1) - 1, 30)
    delay = min(delay, settings.retry_backoff_max)
    if retry_after_s is not None:
        delay = max(delay, min(retry_after_s, RETRY_AFTER_MAX))
    return delay


def entry_lifetime(outcome: str, header_lifetime: float | None, settings: RerpSettings) -> float:
    """How long a fetched robots.txt is used before a refetch: the headers' lifetime within
    [``RERP_MIN_LIFETIME``, ``RERP_MAX_LIFETIME``] for parsed rules, ``RERP_ERROR_LIFETIME`` for
    "allow all" and "disallow all" decided by a status."""
    if outcome == PARSED:
        return settings.clamp_lifetime(header_lifetime)
    return settings.error_lifetime


def download_failure(error: BaseException) -> str:
    """Why a download got no answer, in a few words: the phrase of :data:`FAILURE_WORDS` that
    the error's class (or a class it derives from) names, else the error's class and text
    (``SSLError: ...``).

    An error that carries the one beneath it as its ``reason`` (urllib's ``URLError``) is read
    by that one. A DNS failure adds the resolver's own words when the error has them (socket's
    ``gaierror``: ``DNS lookup failed (Name or service not known)``).
    """
    reason = getattr(error, "reason", None)
    if isinstance(reason, BaseException):
        error = reason
    for cls in type(error).__mro__:
        words = FAILURE_WORDS.get(cls.__name__)
        if words is not None:
            detail = getattr(error, "strerror", None) if words == DNS_FAILED else None
            return f"{words} ({detail})" if detail else words
    name = type(error).__name__
    text = str(error)
    return f"{name}: {text}" if text and text != name else name


def parse_cachecontrol(header: bytes) -> dict[bytes, bytes | None]:
    """Cache-Control directives, lower-cased keys (as ``scrapy.extensions.httpcache``)."""
    directives: dict[bytes, bytes | None] = {}
    for directive in header.split(b","):
        key, sep, value = directive.strip().partition(b"=")
        if key:
            directives[key.lower()] = value if sep else None
    return directives


def rfc1123_to_epoch(date: bytes | str | None) -> int | None:
    """An HTTP date (any of its three formats) as a Unix time, None when unreadable (as
    ``scrapy.extensions.httpcache``)."""
    if date is None:
        return None
    try:
        text = date.decode("ascii") if isinstance(date, bytes) else date
        parsed = parsedate_to_datetime(text)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return int(parsed.timestamp())
    except Exception:
        return None


#: The longest wait a ``Retry-After`` is read as (ten years), longer than any cap applied to it:
#: 309 digits or more would read as infinity, which JSON output cannot carry.
LONGEST_RETRY_AFTER = 10 * 365 * 86400.0


def _seconds(value: bytes) -> float | None:
    text = value.strip()
    return min(float(text), LONGEST_RETRY_AFTER) if text.isdigit() else None
