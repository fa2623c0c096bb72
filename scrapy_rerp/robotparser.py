"""``ROBOTSTXT_PARSER = "scrapy_rerp.RerpRobotParser"``: the engine behind Scrapy's parser API.

Scrapy's own ``RobotsTxtMiddleware`` hands a parser nothing but the body bytes, so this
adapter can only honour ``RERP_SYNTAX``; status codes, charset headers, expiry and the size
cap need :class:`scrapy_rerp.RobotsTxtMiddleware`, which uses the same decoding helpers.
"""

from __future__ import annotations

import codecs
import logging
from typing import TYPE_CHECKING

from scrapy.robotstxt import RobotParser
from scrapy.utils.python import to_unicode
from w3lib.url import safe_url_string

from scrapy_rerp._settings import settings_for, syntax_from
from scrapy_rerp.engine import RFC9309, RobotsTxt, parse

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from scrapy_rerp.engine import RequestRate

__all__ = ["RerpRobotParser", "charset_from_content_type", "parse_body"]

logger = logging.getLogger(__name__)

_UTF8_BOM = codecs.BOM_UTF8


def charset_from_content_type(content_type: bytes | str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type value, if it names a known codec."""
    if not content_type:
        return None
    value = to_unicode(content_type, errors="replace")
    for param in value.split(";")[1:]:
        name, _, charset = param.partition("=")
        if name.strip().lower() == "charset":
            charset = charset.strip().strip("\"'")
            try:
                info = codecs.lookup(charset)
            except LookupError:
                return None
            # Codecs such as "base64" exist but are no text encoding: bytes.decode refuses them.
            return info.name if getattr(info, "_is_text_encoding", True) else None
    return None


def parse_body(body: bytes | str, syntax: int = RFC9309, charset: str | None = None) -> RobotsTxt:
    """Parse a robots.txt body; never raises on content.

    Without a ``charset`` the engine decodes (UTF-8 for RFC 9309, ISO-8859-1 for the legacy
    syntaxes, undecodable bytes kept). A leading UTF-8 BOM is dropped, as Scrapy's adapters
    do (``utf-8-sig``), so it cannot hide the first group. A declared charset other than
    UTF-8 is decoded here with replacement characters.
    """
    if isinstance(body, str):
        return parse(body.removeprefix("\ufeff"), syntax)
    if charset is None or (charset == "utf-8" and syntax == RFC9309):
        return parse(body.removeprefix(_UTF8_BOM), syntax)
    if charset == "utf-8":
        body = body.removeprefix(_UTF8_BOM)
    return parse(body.decode(charset, errors="replace").removeprefix("\ufeff"), syntax)


class RerpRobotParser(RobotParser):
    """A :class:`scrapy.robotstxt.RobotParser` backed by the scrapy_rerp engine."""

    def __init__(self, robotstxt_body: bytes | str = b"", syntax: int | str = RFC9309) -> None:
        """``syntax``: ``"rfc9309"``, ``"gym2008"``, ``"mk1996"`` or the engine constant."""
        self._robots: RobotsTxt = parse_body(robotstxt_body, syntax_from(syntax))

    @classmethod
    def from_crawler(cls, crawler: Crawler | None, robotstxt_body: bytes) -> Self:
        syntax = RFC9309
        if crawler is not None:
            # Validated here too: Scrapy's middleware builds a parser at start-up, so a bad
            # RERP_SYNTAX stops the crawl instead of being ignored.
            settings = settings_for(crawler)
            if settings is None:
                # Logged once; the crawl closes as the spider opens, and nothing is allowed.
                return cls.from_robots(RobotsTxt.disallow_all())
            syntax = settings.syntax
        return cls(robotstxt_body, syntax)

    @classmethod
    def from_robots(cls, robots: RobotsTxt) -> Self:
        """Wrap rules the engine already parsed (what the ``robots_parsed`` signal carries)."""
        parser = cls.__new__(cls)
        parser._robots = robots
        return parser

    @property
    def robots(self) -> RobotsTxt:
        """The engine's parsed rules: ``decide()``, ``warnings``, ``str()`` and the rest."""
        return self._robots

    @property
    def syntax(self) -> int:
        return self._robots.syntax

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        url = to_unicode(url)
        if not url.isascii():
            # As scrapy.Request does: non-ASCII characters %-encoded as UTF-8, so that
            # "/wiki/Käyttäjä:" matches a rule written either way.
            url = safe_url_string(url)
        return self._robots.allowed(url, to_unicode(user_agent))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        return self._robots.crawl_delay(to_unicode(user_agent))

    def request_rate(self, user_agent: str | bytes) -> RequestRate | None:
        return self._robots.request_rate(to_unicode(user_agent))

    def sitemaps(self) -> list[str]:
        """Sitemap URLs in file order, as written (relative ones are not resolved)."""
        return list(self._robots.sitemaps)

    def preferred_host(self) -> str | None:
        """The first ``Host:`` value, if any."""
        return self._robots.host

    def __repr__(self) -> str:
        return f"<{type(self).__name__} syntax={self._robots.syntax}>"
