"""URL helpers shared by the Scrapy-facing layers (standard library only)."""

from __future__ import annotations

from urllib.parse import ParseResult, SplitResult, urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}


def origin_of(url: str) -> str:
    """Return the origin ``scheme://host:port`` of *url*, default ports made explicit.

    RFC 9309 section 2.3 scopes a robots.txt to scheme, host and port, so ``http://h``
    and ``https://h`` are two origins while ``http://h`` and ``http://h:80`` are one.
    """
    return origin_of_parts(urlsplit(url))


def origin_of_parts(parts: SplitResult | ParseResult) -> str:
    """:func:`origin_of` for a URL already split (e.g. Scrapy's ``urlparse_cached``)."""
    scheme = parts.scheme.lower()
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


def robots_url_of(url: str) -> str:
    """Return the robots.txt URL for the origin of *url* (default port left implicit)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/robots.txt"
