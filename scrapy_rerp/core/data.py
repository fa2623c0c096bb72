"""The plain data the layers pass each other (standard library only).

* :class:`Outcome`: what one answer to a robots.txt request leads to (``status`` decides it);
* :class:`Fetched`: the result of downloading robots.txt once, redirects followed (the crawl's
  transport and the command line's download both make one);
* :class:`RobotsEntry`: what is known of one origin's robots.txt, as the caches keep it.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy_rerp.engine import RobotsTxt, TdmRepFile

__all__ = ["Fetched", "Outcome", "RobotsEntry", "Validators", "body_sha256"]


class Outcome(str, Enum):
    """What a robots.txt answer leads to; the values are the words stats, logs, JSON output and
    the fleet's Redis hashes use."""

    PARSED = "parsed"  # the body is the rules
    ALLOW_ALL = "allow-all"  # RFC 9309 2.3.1.3: unavailable, crawl freely
    DISALLOW_ALL = "disallow-all"  # legacy 401/403, as rerp's fetch()
    UNREACHABLE = "unreachable"  # RFC 9309 2.3.1.4: assume complete disallow, retry later
    REDIRECT = "redirect"  # follow the Location (never an entry's outcome)

    def __str__(self) -> str:
        return self.value


@dataclass(kw_only=True)
class Fetched:
    """The result of downloading robots.txt (or another per-origin document) once, following
    redirects."""

    outcome: Outcome
    robots: RobotsTxt | TdmRepFile | None = None  # the document, as in RobotsEntry
    status: int | None = None
    url: str | None = None
    lifetime: float | None = None  # from HTTP headers; None = unsaid
    retry_after: float | None = None
    response: object | None = None  # the crawl's response (a Scrapy Response), if any
    reason: str = ""
    body: bytes | None = None  # what was parsed: decoded, capped (for a fleet's shared cache)
    charset: str | None = None  # the charset it was parsed with
    # A 304 to a conditional request (RERP_STORE): the stored copy stands. Its outcome is
    # UNREACHABLE, so that no path that ignores this flag ever reads it as "allow all".
    not_modified: bool = False


@dataclass(frozen=True, slots=True)
class Validators:
    """What makes a robots.txt request conditional: a stored copy's URL (after redirects) and
    the headers for it (``If-None-Match`` from its ETag, ``If-Modified-Since`` from its
    Last-Modified), so that an unchanged file costs a 304 rather than its body."""

    url: str
    headers: dict[bytes, bytes]

    @classmethod
    def of(cls, url: str, etag: bytes | None, last_modified: bytes | None) -> Validators | None:
        """The validators of a copy fetched from ``url`` with these headers, or None when it
        has neither (it cannot be revalidated, only fetched again)."""
        given = {b"If-None-Match": etag, b"If-Modified-Since": last_modified}
        headers = {name: value for name, value in given.items() if value is not None}
        return cls(url, headers) if headers else None


@dataclass(frozen=True, slots=True, kw_only=True)
class RobotsEntry:
    """What is known about one origin's robots.txt (or another per-origin document: the
    ``robots`` field holds what its kind, :mod:`scrapy_rerp.core.documents`, parsed: the field
    keeps its name whatever the kind, since every cache backend, the store and the fleet's codec
    read it, and robots.txt, which most code reads, keeps its words).

    ``robots`` is None while the origin is unreachable and no earlier copy exists; then
    ``expires_at`` is the time of the next attempt. Times are wall-clock (``time.time()``)
    so that an entry means the same thing to a backend that outlives the process.
    """

    robots: RobotsTxt | TdmRepFile | None
    fetched_at: float  # last attempt
    expires_at: float  # refetch (or retry) after this
    status: int | None = None  # HTTP status of the response the rules came from
    url: str | None = None  # final robots.txt URL, after redirects
    outcome: Outcome = Outcome.PARSED  # never REDIRECT
    failures: int = 0  # consecutive unreachable attempts
    outage_since: float | None = None  # first failure of the current outage
    failure: str = ""  # why the last attempt got no robots.txt, in a few words (local only)
    sha256: str | None = None  # of the body the rules were read from: evidence records name it

    def expired(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) >= self.expires_at

    def with_(self, **changes: object) -> RobotsEntry:
        return replace(self, **changes)  # type: ignore[arg-type]


def body_sha256(body: bytes | None) -> str:
    """The hash an entry and an evidence record give a body (of no bytes when there was none)."""
    return hashlib.sha256(body or b"").hexdigest()
