"""Sitemap discovery: a SitemapSpider follows the sitemaps robots.txt files list.

With ``RERP_SITEMAP_DISCOVERY = True``, every robots.txt the crawl fetches (one per origin the
crawl visits) hands its ``Sitemap:`` lines to :class:`SitemapDiscovery` (a handler of
``scrapy_rerp.signals.document_received``), which schedules each
sitemap URL once per crawl with the spider's own ``_parse_sitemap`` callback, so
``sitemap_rules``, ``sitemap_filter`` and ``sitemap_follow`` apply to what the sitemaps contain
exactly as they do for ``sitemap_urls``.

What it remembers is kept per origin and forgotten with the origin's cache entry
(:meth:`SitemapDiscovery.forget`), so a crawl over millions of origins holds the sitemap URLs of
the cached origins only. A robots.txt fetched again after its origin was forgotten schedules its
sitemaps again; Scrapy's dupefilter then drops the repeats.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.http import Response
from scrapy.spiders import SitemapSpider

from scrapy_rerp.core import loggers, signals
from scrapy_rerp.core.urls import origin_of, robots_url_of, sitemap_url
from scrapy_rerp.crawl.compat import stats_of
from scrapy_rerp.engine import RobotsTxt

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.data import RobotsEntry
    from scrapy_rerp.core.runtime import Stats
    from scrapy_rerp.core.settings import RerpSettings

logger = logging.getLogger(loggers.SITEMAPS)

STAT_DISCOVERED = "robotstxt/sitemaps/discovered"
STAT_SCHEDULED = "robotstxt/sitemaps/scheduled"
STAT_FILTERED_OFFSITE = "robotstxt/sitemaps/filtered/offsite"
STAT_FILTERED_FOLLOW = "robotstxt/sitemaps/filtered/sitemap_follow"
STAT_INVALID = "robotstxt/sitemaps/invalid"

STAT_SERVED = "robotstxt/served_to_spider"

#: The flags of a robots.txt response served to the spider from the rules' download: Scrapy's
#: log shows them at the end of its "Crawled" line, which would otherwise read as a second
#: download (``robots.txt`` is what other middlewares test).
SERVED_FLAGS = ("robots.txt", "served from the download of the rules")

#: Meta key set on discovered sitemap requests: the robots.txt URL that listed the sitemap.
META_FROM_ROBOTS = "rerp_sitemap_from_robots"


class SitemapDiscovery:
    """Schedule the sitemaps listed in robots.txt files for a SitemapSpider, each once."""

    def __init__(self, crawler: Crawler, enabled: bool) -> None:
        self.crawler = crawler
        self.enabled = enabled
        self.stats = stats_of(crawler)
        # Sitemap URLs seen, each with the origin whose robots.txt listed it first, and the
        # same by origin (to forget an origin's).
        self._seen: dict[str, str] = {}
        self._listed_by: dict[str, list[str]] = {}
        self._spider_sitemaps: set[str] = set()  # the spider's own sitemap_urls
        self._seeded = False
        self._host_regex: re.Pattern[str] | None = None
        self._allowed_domains: list[str] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler, settings: RerpSettings) -> SitemapDiscovery:
        discovery = cls(crawler, bool(settings.sitemap_discovery))
        if discovery.enabled:
            crawler.signals.connect(discovery.document_received, signals.document_received)
        return discovery

    def document_received(self, origin: str, kind: str, entry: RobotsEntry) -> None:
        """A ``document_received`` handler (connected when discovery is enabled)."""
        if kind == "robots.txt" and isinstance(entry.robots, RobotsTxt):
            self.robots_parsed(origin, entry.url or robots_url_of(origin), entry.robots)

    def robots_parsed(self, origin: str, robots_url: str, robots: RobotsTxt) -> None:
        """Schedule the sitemaps *robots* lists that were not scheduled before in this crawl.

        A no-op unless discovery is enabled and the spider is a SitemapSpider. Sitemap URLs are
        resolved against *robots_url* (relative values occur in the wild); sitemaps outside the
        spider's ``allowed_domains`` or matching none of its ``sitemap_follow`` patterns are
        left out. Called again on a refetch of the same robots.txt, it schedules nothing twice.
        """
        if not self.enabled or not robots.sitemaps:
            return
        spider = self.crawler.spider
        if not isinstance(spider, SitemapSpider):
            return
        engine = self.crawler.engine
        assert engine is not None
        if not self._seeded:
            # The spider requests its own sitemap_urls; listing one in robots.txt adds nothing.
            self._seeded = True
            self._spider_sitemaps.update(getattr(spider, "sitemap_urls", ()) or ())
        for value in robots.sitemaps:
            try:
                url = sitemap_url(robots_url, value)
            except ValueError as exc:
                # One bad line (``Sitemap: http://[::1/sitemap.xml``) skips itself only.
                self.stats.inc_value(STAT_INVALID)
                logger.debug("Ignoring sitemap %r listed in %s: %s", value, robots_url, exc)
                continue
            if url in self._seen or url in self._spider_sitemaps:
                continue
            self._seen[url] = origin
            self._listed_by.setdefault(origin, []).append(url)
            self.stats.inc_value(STAT_DISCOVERED)
            if not self._on_site(spider, url):
                self.stats.inc_value(STAT_FILTERED_OFFSITE)
                logger.debug("Ignoring offsite sitemap %s listed in %s", url, robots_url)
                continue
            # Scrapy applies sitemap_follow to sitemap-index children only; a robots.txt listing
            # is an index too, so the same patterns decide here.
            if not any(pattern.search(url) for pattern in spider._follow):
                self.stats.inc_value(STAT_FILTERED_FOLLOW)
                logger.debug(
                    "Ignoring sitemap %s listed in %s: no sitemap_follow match", url, robots_url
                )
                continue
            try:
                request = Request(
                    url, callback=spider._parse_sitemap, meta={META_FROM_ROBOTS: robots_url}
                )
            except (ValueError, UnicodeError):
                # e.g. undecodable bytes kept by the parser: skip this one, not the rest.
                self.stats.inc_value(STAT_INVALID)
                logger.debug("Ignoring sitemap %r listed in %s: bad URL", value, robots_url)
                continue
            self.stats.inc_value(STAT_SCHEDULED)
            logger.debug("Following sitemap %s listed in %s", url, robots_url)
            engine.crawl(request)

    def forget(self, origin: str) -> None:
        """Forget what ``origin``'s robots.txt listed (its cache entry is gone)."""
        for url in self._listed_by.pop(origin, ()):
            del self._seen[url]

    def forget_all(self) -> None:
        self._seen.clear()
        self._listed_by.clear()

    def __len__(self) -> int:
        """Sitemap URLs remembered."""
        return len(self._seen)

    def _on_site(self, spider: SitemapSpider, url: str) -> bool:
        # Same policy as Scrapy's OffsiteMiddleware: the host or a subdomain of it is in
        # allowed_domains; no allowed_domains means everything is on site.
        allowed = [d for d in (getattr(spider, "allowed_domains", None) or []) if d]
        if not allowed:
            return True
        if allowed != self._allowed_domains:
            self._allowed_domains = allowed
            domains = "|".join(re.escape(d.lower()) for d in allowed)
            self._host_regex = re.compile(rf"^(.*\.)?({domains})$")
        assert self._host_regex is not None
        host = urlsplit(url).hostname or ""
        return bool(self._host_regex.search(host))


class RobotsTxtForTheSpider:
    """robots.txt responses kept for the spider's own requests of them (a SitemapSpider whose
    ``sitemap_urls`` name robots.txt URLs): served once from the middleware's download instead
    of a second download, flagged (:data:`SERVED_FLAGS`) so that the log says so. Kept only for
    origins the spider asked for, and forgotten with the origin's cache entry."""

    def __init__(self, stats: Stats) -> None:
        self.stats = stats
        self._wanted: set[str] = set()
        self._kept: dict[str, Response] = {}

    @staticmethod
    def is_robots_url(url: str) -> bool:
        parts = urlsplit(url)
        return parts.path == "/robots.txt" and not parts.query and parts.scheme in ("http", "https")

    def spider_opened(self, spider: object) -> None:
        for url in getattr(spider, "sitemap_urls", None) or ():
            if isinstance(url, str) and self.is_robots_url(url):
                self._wanted.add(origin_of(url))

    def want(self, origin: str) -> None:
        """A request for ``origin``'s robots.txt waits for the download: keep the response."""
        self._wanted.add(origin)

    def keep(self, origin: str, response: Response | None) -> None:
        if response is not None and origin in self._wanted:
            self._kept[origin] = response

    def has(self, origin: str) -> bool:
        return origin in self._kept

    def serve(self, origin: str, request: Request) -> Response:
        response = self._kept.pop(origin)
        self._wanted.discard(origin)
        self.stats.inc_value(STAT_SERVED)
        return response.replace(request=request, flags=[*response.flags, *SERVED_FLAGS])

    def forget(self, origin: str) -> None:
        self._kept.pop(origin, None)
        self._wanted.discard(origin)

    def clear(self) -> None:
        self._kept.clear()
