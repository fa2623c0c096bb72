"""``ROBOTSTXT_PARSER = "scrapy_rerp.RerpRobotParser"``: the engine behind Scrapy's parser API.

Scrapy's own ``RobotsTxtMiddleware`` hands a parser nothing but the body bytes, so this
adapter can only honour ``RERP_SYNTAX``; status codes, charset headers, expiry and the size
cap need :class:`scrapy_rerp.RobotsTxtMiddleware`, which uses the same decoding helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.robotstxt import RobotParser
from scrapy.utils.python import to_unicode

from scrapy_rerp.core.body import charset_from_content_type, parse_body
from scrapy_rerp.core.settings import settings_for, syntax_from
from scrapy_rerp.core.urls import crawl_allowed
from scrapy_rerp.crawl.compat import close_when_opened
from scrapy_rerp.engine import RFC9309, RobotsTxt

if TYPE_CHECKING:
    # typing.Self requires Python 3.11
    from scrapy.crawler import Crawler
    from typing_extensions import Self

    from scrapy_rerp.engine import RequestRate

__all__ = ["RerpRobotParser", "charset_from_content_type", "parse_body"]


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
            settings = settings_for(crawler, close_when_opened)
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
        # As scrapy.Request writes it: non-ASCII characters %-encoded as UTF-8, so that
        # "/wiki/Käyttäjä:" matches a rule written either way.
        return crawl_allowed(self._robots, to_unicode(url), to_unicode(user_agent))

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
