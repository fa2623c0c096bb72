"""The per-origin documents a crawl fetches once per origin: what makes each a kind of its own.

An origin service (:class:`~scrapy_rerp.core.origins.OriginService`) and its transport
(:class:`~scrapy_rerp.crawl.transport.RobotsTxtDownloader`) serve one :class:`DocumentKind`:
where an origin's copy is, what the requests waiting for it are parked under, the family of its
stats, the kind of its fleet key, whether ``RERP_STORE`` keeps it, and what an answer means.
The status ladder (:mod:`scrapy_rerp.core.status`) is shared: a 2xx body is :attr:`parse`\\ d,
a 3xx followed, a 4xx reads as :attr:`absent`, a 5xx, 429 or network error is an outage.

* :func:`robots_txt`: ``/robots.txt`` (RFC 9309), whose legacy 401/403 read as disallow-all;
* :func:`tdmrep_json`: ``/.well-known/tdmrep.json`` (TDMRep, W3C community group report),
  fetched only when ``RERP_USAGE`` names a purpose it speaks to (train-ai, ai-input).

Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy_rerp.core.admission import Purpose
from scrapy_rerp.engine import TDMREP_PATH, RobotsTxt, TdmRepFile, parse_tdmrep

if TYPE_CHECKING:
    from scrapy_rerp.core.body import Body

__all__ = ["NO_TDMREP_FILE", "TDMREP_PATH", "DocumentKind", "robots_txt", "tdmrep_json"]


@dataclass(frozen=True)
class DocumentKind:
    """One kind of per-origin document, and how its answers are read."""

    name: str  # as logs and messages name it: "robots.txt"
    path: str  # of an origin's copy: "/robots.txt"
    purpose: Purpose  # what the requests waiting for an origin's copy are parked under
    stat_family: str  # its stats' family under robotstxt/ ("": robots.txt's own): see stat()
    fleet_key: str  # the kind of its key in a fleet's Redis: <prefix>:<fleet_key>:<origin>
    stored: bool  # kept across runs by RERP_STORE
    parse: Callable[[Body], Any]  # a 2xx body, read (decompressed, capped), to the document
    absent: Callable[[], Any]  # the document of an origin with no file (a 4xx)
    # What an origin without a file is allowed, as logs say it: "allowing all".
    absent_means: str
    # The document of a legacy 401/403 (RERP_LEGACY), or None: the kind has no such reading.
    refused: Callable[[], Any] | None = None

    def stat(self, name: str) -> str:
        """The kind's own name of robots.txt's stat ``name`` (``robotstxt/request_count``): in
        the kind's family (``robotstxt/tdmrep/request_count``). The code names robots.txt's
        stats, so that every name it emits reads in its source."""
        if not self.stat_family:
            return name
        return name.replace("robotstxt/", f"robotstxt/{self.stat_family}/", 1)

    def url_of(self, url: str) -> str:
        """The URL of the copy of the origin of ``url`` (default port left implicit)."""
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{self.path}"


def robots_txt(syntax: int) -> DocumentKind:
    """robots.txt, parsed in ``syntax`` (``RERP_SYNTAX``)."""
    return DocumentKind(
        name="robots.txt",
        path="/robots.txt",
        purpose=Purpose.ROBOTS_TXT,
        stat_family="",
        fleet_key="robots",
        stored=True,
        parse=lambda body: body.rules(syntax),
        absent=lambda: RobotsTxt.allow_all(syntax),
        absent_means="allowing all",
        refused=lambda: RobotsTxt.disallow_all(syntax),
    )


#: What an origin without a tdmrep.json has: no entries, so no reservation from the file.
NO_TDMREP_FILE = TdmRepFile((), (), True)


def tdmrep_json() -> DocumentKind:
    """``/.well-known/tdmrep.json``: its bytes are JSON in UTF-8 whatever the Content-Type says
    (the report's format), so the body's charset is not used. A body that is no JSON array is
    a file that is not ``valid``, with no entries: no reservation from the file."""
    return DocumentKind(
        name="tdmrep.json",
        path=TDMREP_PATH,
        purpose=Purpose.TDMREP,
        stat_family="tdmrep",
        fleet_key="tdmrep",
        stored=False,
        parse=lambda body: parse_tdmrep(body.data),
        absent=lambda: NO_TDMREP_FILE,
        absent_means="no reservation from the file",
    )
