"""URL helpers shared by the Scrapy-facing layers and the command line, and whether a request
obeys robots.txt at all (:func:`obeys_robots_txt`: every layer of a crawl asks it here).

Standard library only, but for :func:`rules_url`, which uses w3lib (installed with the package,
and what Scrapy itself uses) for the URLs that Scrapy would rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import ParseResult, SplitResult, urljoin, urlsplit

if TYPE_CHECKING:
    from scrapy_rerp.engine import Decision, RobotsTxt

# URLs that w3lib's safe_url_string (run by every scrapy.Request) returns as they are: a
# lower-case host with an optional port (no user info), then a path (or nothing) and the rest
# made only of characters it never escapes. Every URL a Scrapy request carries is one.
_UNCHANGED_BY_SCRAPY = re.compile(
    r"(?:[a-z][a-z0-9+.-]*://[a-z0-9._~!$&()*+,;=-]*(?::[1-9][0-9]*)?)?"
    r"(?:/[A-Za-z0-9._~!$&()*+,;=:@/?#%-]*)?"
)

_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}

#: The ``Request.meta`` key by which a request opts out of robots.txt (Scrapy's own): robots.txt
#: requests carry it too.
DONT_OBEY_META = "dont_obey_robotstxt"
#: URL schemes with a robots.txt (RFC 9309 2.3: any URI-based protocol with a /robots.txt), as a
#: request's URL begins (Scrapy writes the scheme in lower case). Scrapy's own middleware skips
#: only ``data:`` and ``file:``, and for others an error fetching robots.txt meant "allow all".
OBEYED_SCHEMES = ("http:", "https:", "ftp:")


def obeys_robots_txt(url: str, meta: Mapping[str, Any]) -> bool:
    """Whether a request for ``url`` with ``meta`` obeys robots.txt: it has no true
    ``dont_obey_robotstxt`` in its meta, and its scheme has a robots.txt (http, https, ftp;
    ``data:``, ``file:``, ``s3:`` and the like have none). Requests that do not are left alone
    by every layer of a crawl, as Scrapy's middleware leaves them.

    On the path of every request: two look-ups, nothing parsed.
    """
    # The test of opts_out_of_robots_txt, written out: the middleware asks for every request.
    return not meta.get(DONT_OBEY_META) and url.startswith(OBEYED_SCHEMES)


def opts_out_of_robots_txt(meta: Mapping[str, Any]) -> bool:
    """Whether a request's ``meta`` says it does not obey robots.txt (``dont_obey_robotstxt``),
    whatever its scheme: the half of :func:`obeys_robots_txt` for the places that ask of the
    meta alone (an answer heard, a request a nofollow page yields). Robots.txt requests opt
    out."""
    return bool(meta.get(DONT_OBEY_META))


def page_obeys_robots_txt(url: str, meta: Mapping[str, Any]) -> bool:
    """:func:`obeys_robots_txt`, and ``url`` is no robots.txt (it does not end with
    ``/robots.txt``): what a response's ``Content-Usage`` check asks, since a robots.txt is the
    rules, not a page they speak of."""
    return obeys_robots_txt(url, meta) and not url.endswith("/robots.txt")


def origin_of(url: str) -> str:
    """Return the origin ``scheme://host:port`` of *url*, default ports made explicit.

    RFC 9309 section 2.3 scopes a robots.txt to scheme, host and port, so ``http://h``
    and ``https://h`` are two origins while ``http://h`` and ``http://h:80`` are one.
    """
    return origin_of_parts(urlsplit(url))


def origin_of_parts(parts: SplitResult | ParseResult) -> str:
    """:func:`origin_of` for a URL already split (e.g. Scrapy's ``urlparse_cached``)."""
    return _origin(parts.scheme, parts.netloc)


# Every request asks for its origin, and a crawl has few: reading the host and port of a
# netloc costs a request about 14,000 instructions, a cached answer under 1,000 (callgrind).
# Bounded: netlocs come from the network.
@lru_cache(maxsize=4096)
def _origin(scheme: str, netloc: str) -> str:
    parts = SplitResult(scheme, netloc, "", "", "")
    scheme = scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = _DEFAULT_PORTS.get(scheme)
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{scheme}://{host}" if port is None else f"{scheme}://{host}:{port}"


def redirect_target(base: str, location: str) -> str:
    """The URL a robots.txt redirect leads to: ``location`` resolved against ``base``.

    Raises ``ValueError`` naming the problem when it is no URL a crawler follows for robots.txt:
    malformed (``http://[::1``, a bad port), without a host, of a scheme other than http and
    https (``file:``, ``data:``, ``ftp:``, ``mailto:``...), as Scrapy's RedirectMiddleware refuses
    them, or with credentials (``http://user:password@host/``). A redirect that cannot be
    followed makes robots.txt unavailable.
    """
    url = _http_url(base, location.strip(), "followed")
    if "@" in urlsplit(url).netloc:
        # Credentials a redirect hands over are not the crawler's to send, and would end up
        # in logs and evidence: the redirect fails, as one to another scheme does.
        raise ValueError("user:password@ in the URL: credentials are not followed")
    return url


#: What precedes the host in a Location, after ``//``: ``user:password@`` (or ``token@``).
_USERINFO = re.compile(r"^([^/?#]*//)[^/?#]*@")


def without_userinfo(location: str) -> str:
    """``location`` (a redirect's Location, as written) with any ``user:password@`` before its
    host shown as ``***@``: what a log line or an error message may quote of it."""
    return _USERINFO.sub(r"\1***@", location, count=1)


def sitemap_url(robots_url: str | None, value: str) -> str:
    """The URL a ``Sitemap:`` line names: ``value`` resolved against ``robots_url`` (relative
    values occur in the wild).

    Raises ``ValueError`` naming the problem when it is no URL a crawler fetches a sitemap from:
    empty, malformed (``http://[::1/sitemap.xml``, a bad port), without a host, or of a scheme
    other than http and https. Without ``robots_url`` (a robots.txt read from a file) a relative
    value is returned as written.
    """
    value = value.strip()
    if not value:
        raise ValueError("empty")
    return _http_url(robots_url, value, "fetched")


def _http_url(base: str | None, value: str, done: str) -> str:
    """``value`` resolved against ``base``; ``ValueError`` naming the problem when it is
    malformed, without a host, or of a scheme other than http and https (which alone are
    ``done``). Without ``base``, a relative value is returned as written."""
    try:
        url = urljoin(base, value) if base else value
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as exc:
        raise ValueError(f"malformed URL ({exc})") from None
    if base is None and not parts.scheme:
        return url  # relative, and nothing to resolve it against
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(f"{parts.scheme or 'no'} scheme: only http and https are {done}")
    if not parts.hostname:
        raise ValueError("no host")
    return url


def robots_url_of(url: str) -> str:
    """Return the robots.txt URL for the origin of *url* (default port left implicit)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/robots.txt"


def rules_url(url: str) -> str:
    """``url`` as a crawl matches it against robots.txt: as ``scrapy.Request(url).url`` has it
    (w3lib's ``safe_url_string``: non-ASCII characters %-encoded as UTF-8, spaces and other
    unsafe characters escaped, backslashes read as slashes). Works on paths too
    (``/wiki/Kä`` -> ``/wiki/K%C3%A4``).

    Raises ``ValueError`` for what no request can be made of (``http://[::1``).
    """
    if (
        _UNCHANGED_BY_SCRAPY.fullmatch(url)
        and url[-1:] not in ("?", "#")  # an empty query or fragment is dropped
        and "?#" not in url
        and url.count("#") < 2  # a second "#" is escaped
    ):
        return url  # the common case, and every URL a Scrapy request already carries
    from w3lib.url import safe_url_string

    return safe_url_string(url)


def request_url(url: str) -> str:
    """:func:`rules_url`, for a URL given by a person rather than taken from a request: raises
    ``ValueError`` naming the problem for what ``scrapy.Request`` refuses, a malformed host
    (``http://[::1``) or a port that is not a number from 0 to 65535 (``http://h:99999/``)."""
    crawl_url = rules_url(url)
    urlsplit(crawl_url).port  # noqa: B018 - raises ValueError for a bad port
    return crawl_url


def crawl_allowed(robots: RobotsTxt, url: str, user_agent: str) -> bool:
    """The verdict a crawl gets for ``url``: the one code path of the middleware, the parser
    adapter and the command line."""
    return robots.allowed(rules_url(url), user_agent)


def crawl_decision(robots: RobotsTxt, url: str, user_agent: str) -> Decision:
    """:func:`crawl_allowed` with the line that decided."""
    return robots.decide(rules_url(url), user_agent)
