"""The per-origin documents a crawl fetches once per origin, and what makes each a kind of its own.

Every part that deals with such documents loops over the kinds registered for the crawl: the
origin service (:class:`~scrapy_rerp.core.origins.OriginService`) and its transport
(:class:`~scrapy_rerp.crawl.transport.RobotsTxtDownloader`) serve one :class:`DocumentKind`
each, a fleet shares each under its own key, ``RERP_STORE`` keeps those that are
:attr:`~DocumentKind.stored`, and the evidence records each copy read. A kind says where an
origin's copy is, the names of its stats, how its bodies are read and what an answer means. The
status ladder (:mod:`scrapy_rerp.core.status`) is shared: a 2xx body is parsed, a 3xx followed,
a 4xx reads as absent, a 5xx, 429 or network error is an outage.

robots.txt (:func:`robots_txt`) decides whether a request may go; every other kind is attached
to the requests it applies to, once known (:attr:`DocumentKind.meta_key`), for the parts that
read it. Kinds are registered by factories, ``(settings) -> DocumentKind | None`` (None: not
needed by this crawl): :data:`BASE_DOCUMENTS`, then those ``RERP_DOCUMENTS`` names
(docs/design.rst, "How to add a document kind").

* :func:`robots_txt`: ``/robots.txt`` (RFC 9309), whose legacy 401/403 read as disallow-all;
* :func:`tdmrep_json`: ``/.well-known/tdmrep.json`` (TDMRep, W3C community group report),
  registered by :func:`tdmrep_when_read` only when ``RERP_USAGE`` names a purpose it speaks to
  (train-ai, ai-input).

Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy_rerp.core.admission import Purpose, Waiting
from scrapy_rerp.engine import (
    MAX_LICENSE_LINKS,
    RSL_MEDIA_TYPE,
    RSL_USAGES,
    TDMREP_PATH,
    TDMREP_PURPOSES,
    RobotsTxt,
    RslFile,
    TdmRepFile,
    license_link_tags,
    license_links,
    parse_rsl,
    parse_tdmrep,
    usage_category,
)

if TYPE_CHECKING:
    from scrapy_rerp.core.body import Body
    from scrapy_rerp.core.settings import RerpSettings

__all__ = [
    "BASE_DOCUMENTS",
    "NO_RSL_FILE",
    "NO_TDMREP_FILE",
    "RSL_FILES_META",
    "RSL_STATS",
    "ROBOTS_TXT_STATS",
    "TDMREP_FILE_META",
    "TDMREP_PATH",
    "TDMREP_STATS",
    "DocumentKind",
    "DocumentStats",
    "KindFactory",
    "problems_of",
    "robots_txt",
    "rsl_files",
    "rsl_when_read",
    "tdmrep_json",
    "tdmrep_when_read",
]


@dataclass(frozen=True, kw_only=True)
class DocumentStats:
    """The names of one kind's stats (docs/stats.rst). Three are families, whose ``{}`` is the
    status or the exception type: ``response_status_count``, ``exception_count``,
    ``disallow_all``."""

    request_count: str
    response_count: str
    response_status_count: str
    exception_count: str
    ignored: str
    allow_all: str
    disallow_all: str
    undecodable: str
    truncated: str
    charset_replaced: str
    redirect_count: str
    redirect_limit: str
    redirect_invalid: str
    origin_count: str
    refresh_count: str
    retry_count: str
    unreachable_count: str
    unreachable_stale_copy_kept: str
    store_reused: str
    store_stale_used: str
    redis_shared: str
    redis_lock_waits: str
    redis_unreadable: str
    redis_rejected: str
    redis_oversized: str
    redis_revalidated: str
    redis_round_trips: str
    redis_repaired: str
    # A document its kind does not use (DocumentKind.problem): None for robots.txt, always used.
    file_invalid: str | None = None

    @classmethod
    def under(cls, prefix: str) -> DocumentStats:
        """Every name under ``prefix`` (``robotstxt/security_txt``): each field's name, with
        ``/`` for its first ``_`` in the families of several (``redirect_count``:
        ``<prefix>/redirect/count``)."""
        names: dict[str, str] = {}
        for field in fields(cls):
            head, _, rest = field.name.partition("_")
            name = f"{head}/{rest}" if head in _GROUPED and rest else field.name
            if field.name in _BY_VALUE:
                name += "/{}"
            names[field.name] = f"{prefix}/{name}"
        return cls(**names)


_GROUPED = ("redirect", "unreachable", "store", "redis", "file")
_BY_VALUE = ("response_status_count", "exception_count", "disallow_all")

#: robots.txt's stats, written out: the names every other kind's repeat under its own prefix
#: (:meth:`DocumentStats.under`; a test holds the two readings equal).
ROBOTS_TXT_STATS = DocumentStats(
    request_count="robotstxt/request_count",
    response_count="robotstxt/response_count",
    response_status_count="robotstxt/response_status_count/{}",
    exception_count="robotstxt/exception_count/{}",
    ignored="robotstxt/ignored",
    allow_all="robotstxt/allow_all",
    disallow_all="robotstxt/disallow_all/{}",
    undecodable="robotstxt/undecodable",
    truncated="robotstxt/truncated",
    charset_replaced="robotstxt/charset_replaced",
    redirect_count="robotstxt/redirect/count",
    redirect_limit="robotstxt/redirect/limit",
    redirect_invalid="robotstxt/redirect/invalid",
    origin_count="robotstxt/origin_count",
    refresh_count="robotstxt/refresh_count",
    retry_count="robotstxt/retry_count",
    unreachable_count="robotstxt/unreachable/count",
    unreachable_stale_copy_kept="robotstxt/unreachable/stale_copy_kept",
    store_reused="robotstxt/store/reused",
    store_stale_used="robotstxt/store/stale_used",
    redis_shared="robotstxt/redis/shared",
    redis_lock_waits="robotstxt/redis/lock_waits",
    redis_unreadable="robotstxt/redis/unreadable",
    redis_rejected="robotstxt/redis/rejected",
    redis_oversized="robotstxt/redis/oversized",
    redis_revalidated="robotstxt/redis/revalidated",
    redis_round_trips="robotstxt/redis/round_trips",
    redis_repaired="robotstxt/redis/repaired",
)
#: tdmrep.json's stats: robots.txt's, under ``robotstxt/tdmrep/`` (docs/stats.rst).
TDMREP_STATS = DocumentStats.under("robotstxt/tdmrep")

#: A kind's short name in the evidence and in a fleet's keys: a lowercase word.
_TOKEN = re.compile(r"[a-z][a-z0-9_-]{0,31}\Z")


@dataclass(frozen=True, kw_only=True)
class DocumentKind:
    """One kind of per-origin document, and how its answers are read."""

    name: str  # as logs and messages name it: "robots.txt"
    path: str  # of an origin's copy: "/robots.txt"
    token: str  # its short name: a record's kind in the evidence, its fleet keys' kind
    stats: DocumentStats
    stored: bool  # kept across runs by RERP_STORE
    parse: Callable[[Body], Any]  # a 2xx body, read (decompressed, capped), to the document
    absent: Callable[[], Any]  # the document of an origin with no file (a 4xx)
    # What an origin without a file is allowed, as logs say it: "allowing all".
    absent_means: str
    # The document of a legacy 401/403 (RERP_LEGACY), or None: the kind has no such reading.
    refused: Callable[[], Any] | None = None
    # ``request.meta`` key of the origin's document, attached to each request it applies to
    # once known (robots.txt's: None, as robots.txt decides instead).
    meta_key: str | None = None
    # Why a document read is not used (counted as ``stats.file_invalid``, logged once per
    # origin), or None when it is used.
    problem: Callable[[Any], str | None] | None = None
    # The URLs of the documents a request needs, from its origin and robots.txt's rules, each
    # fetched once per crawl wherever it is (a licence file on another host); None: the one
    # document of each origin at ``path``. A located document is known by its URL: its cache
    # entry, fleet key and store row, and its requests wait under it.
    locate: Callable[[str, RobotsTxt], tuple[str, ...]] | None = None
    # The URLs of the documents of this (located) kind a page names for itself, from its URL,
    # its ``Link`` header lines and its head's text (up to ``<body``); its response waits for
    # them before the spider sees it. None: pages name none.
    locate_page: Callable[[str, list[str], str], tuple[str, ...]] | None = None

    @property
    def purpose(self) -> Purpose | Waiting:
        """What the requests waiting for an origin's copy are parked under."""
        if self.meta_key is None:
            return Purpose.ROBOTS_TXT
        return Waiting(self.name)

    def url_of(self, url: str) -> str:
        """The URL of the copy of the origin of ``url`` (default port left implicit); a
        located document's URL is its own."""
        if self.locate is not None:
            return url
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{self.path}"


#: ``(settings) -> DocumentKind | None``: registers a kind for a crawl (None: not this one).
KindFactory = Callable[["RerpSettings"], "DocumentKind | None"]


def robots_txt(syntax: int) -> DocumentKind:
    """robots.txt, parsed in ``syntax`` (``RERP_SYNTAX``)."""
    return DocumentKind(
        name="robots.txt",
        path="/robots.txt",
        token="robots",
        stats=ROBOTS_TXT_STATS,
        stored=True,
        parse=lambda body: body.rules(syntax),
        absent=lambda: RobotsTxt.allow_all(syntax),
        absent_means="allowing all",
        refused=lambda: RobotsTxt.disallow_all(syntax),
    )


#: What an origin without a tdmrep.json has: no entries, so no reservation from the file.
NO_TDMREP_FILE = TdmRepFile(entries=(), warnings=(), valid=True)
#: ``request.meta``: the origin's parsed tdmrep.json (the page directives read it).
TDMREP_FILE_META = "_rerp_tdmrep_file"


def _tdmrep_problem(file: Any) -> str | None:
    if not isinstance(file, TdmRepFile) or file.valid:
        return None
    return "; ".join(warning.message for warning in file.warnings) or "unreadable"


def tdmrep_json() -> DocumentKind:
    """``/.well-known/tdmrep.json``: its bytes are JSON in UTF-8 whatever the Content-Type says
    (the report's format), so the body's charset is not used. A body that is no JSON array is
    a file that is not ``valid``, with no entries: no reservation from the file."""
    return DocumentKind(
        name="tdmrep.json",
        path=TDMREP_PATH,
        token="tdmrep",
        stats=TDMREP_STATS,
        stored=False,
        parse=lambda body: parse_tdmrep(body.data),
        absent=lambda: NO_TDMREP_FILE,
        absent_means="no reservation from the file",
        meta_key=TDMREP_FILE_META,
        problem=_tdmrep_problem,
    )


def tdmrep_when_read(settings: RerpSettings) -> DocumentKind | None:
    """tdmrep.json, for a crawl whose ``RERP_USAGE`` names a purpose TDMRep speaks to."""
    if any(usage_category(purpose) in TDMREP_PURPOSES for purpose in settings.usage):
        return tdmrep_json()
    return None


#: What a licence URL that answers 4xx has: no content element, so no licence from it.
NO_RSL_FILE = RslFile(url="", contents=(), problems=(), valid=True)
#: ``request.meta``: the licence files robots.txt names, ``((url, RslFile), ...)`` in its order
#: (the usage check reads them).
RSL_FILES_META = "_rerp_rsl_files"
#: The licence files' stats: robots.txt's, under ``robotstxt/rsl/`` (docs/stats.rst).
RSL_STATS = DocumentStats.under("robotstxt/rsl")


def _rsl_problem(file: Any) -> str | None:
    if not isinstance(file, RslFile) or file.valid:
        return None
    return "; ".join(problem.message for problem in file.problems[:3]) or "unreadable"


def _first_licences(urls: Iterable[str]) -> tuple[str, ...]:
    """The first few distinct absolute (http or https) URLs of ``urls``."""
    absolute = [url for url in urls if url.startswith(("https://", "http://"))]
    return tuple(dict.fromkeys(absolute))[:MAX_LICENSE_LINKS]


def _page_licence_urls(url: str, links: list[str], head: str) -> tuple[str, ...]:
    """The RSL files a page names: its ``Link`` header's, then its head's ``<link>`` tags
    (read only when the head mentions RSL's media type), the first few."""
    found = license_links(links, url) if links else []
    if RSL_MEDIA_TYPE in head.lower():
        found += license_link_tags(head, url)
    return _first_licences(found)


def rsl_files() -> DocumentKind:
    """The RSL licence files robots.txt's ``License:`` lines name (RSL 1.0), and those a page's
    ``Link`` header or ``<link>`` tags name, each known by its URL: fetched once per crawl,
    wherever it is, before the pages that need it (a page's own: before the spider sees it).
    Parsed with the engine's ``parse_rsl`` (no DTD, no entity; bounded); a body that is no RSL
    states nothing (counted, logged once per file)."""
    return DocumentKind(
        name="RSL licence",
        path="",
        token="rsl",
        stats=RSL_STATS,
        stored=True,
        parse=lambda body: parse_rsl(body.data),
        absent=lambda: NO_RSL_FILE,
        absent_means="no licence from it",
        meta_key=RSL_FILES_META,
        problem=_rsl_problem,
        locate=lambda origin, robots: _first_licences(robots.licenses),
        locate_page=_page_licence_urls,
    )


def rsl_when_read(settings: RerpSettings) -> DocumentKind | None:
    """The licence files, for a crawl whose ``RERP_USAGE`` names a purpose RSL speaks to."""
    spoken = frozenset().union(*RSL_USAGES.values())
    if any(usage_category(purpose) in spoken for purpose in settings.usage):
        return rsl_files()
    return None


#: The kinds every crawl registers (by dotted path, as ``RERP_DOCUMENTS`` names its own), after
#: robots.txt.
BASE_DOCUMENTS: tuple[str, ...] = (
    "scrapy_rerp.core.documents.tdmrep_when_read",
    "scrapy_rerp.core.documents.rsl_when_read",
)


def problems_of(kinds: list[DocumentKind]) -> list[str]:
    """What keeps ``kinds`` (robots.txt first) from being served together: a short name that
    is no lowercase word, a path that is not absolute, a page's documents of a kind that is not
    located, or two kinds with one name, token, path or meta key."""
    problems: list[str] = []
    for kind in kinds:
        if not _TOKEN.match(kind.token):
            problems.append(f"{kind.name}: token {kind.token!r} is not a lowercase word")
        if kind.locate is None and not kind.path.startswith("/"):
            problems.append(f"{kind.name}: path {kind.path!r} does not start with /")
        if kind.locate_page is not None and kind.locate is None:
            problems.append(f"{kind.name}: locate_page without locate (a page names located ones)")
        if kind is not kinds[0] and kind.meta_key is None:
            problems.append(f"{kind.name}: no meta_key (only robots.txt decides without one)")
    for attribute in ("name", "token", "path", "meta_key"):
        seen: set[object] = set()
        for kind in kinds:
            value = getattr(kind, attribute) or None
            if value is not None and value in seen:
                problems.append(f"two document kinds have the {attribute} {value!r}")
            seen.add(value)
    return problems
