"""What a crawl does with an origin's new rules, and forgets with the origin's cache entry.

When the origin service has new rules, before the requests that waited for them are released
(it calls :class:`RulesApplied` as its :class:`~scrapy_rerp.core.origins.RulesListener`): the
robots.txt response is kept for a spider that asked for it, ``scrapy_rerp.signals``'s
``document_received`` is sent (the evidence and sitemap discovery hear it), the politeness
controller applies their Crawl-delay, and Scrapy's ``robots_parsed`` signal is sent and
awaited. When the origin leaves the cache, what was kept for it goes too, so
that per-origin state stays bounded by the cache.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy_rerp.core import loggers, signals
from scrapy_rerp.crawl.compat import send_robots_parsed
from scrapy_rerp.crawl.robotparser import RerpRobotParser

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.data import Fetched, RobotsEntry
    from scrapy_rerp.core.politeness import Politeness
    from scrapy_rerp.crawl.sitemaps import RobotsTxtForTheSpider, SitemapDiscovery
    from scrapy_rerp.engine import RobotsTxt

__all__ = ["RulesApplied"]

logger = logging.getLogger(loggers.ROBOTSTXT)


class RulesApplied:
    """The crawl's side of new rules: the spider's robots.txt, the signals, floors."""

    def __init__(
        self,
        crawler: Crawler,
        politeness: Politeness,
        sitemaps: SitemapDiscovery,
        *,
        for_spider: RobotsTxtForTheSpider,
        user_agent_for: Callable[[Any], str],
    ) -> None:
        self.crawler = crawler
        self.politeness = politeness
        self.sitemaps = sitemaps
        self.for_spider = for_spider
        self.user_agent_for = user_agent_for

    async def before_sharing(self, origin: str, robots: RobotsTxt | None, trigger: Any) -> None:
        await self.politeness.before_sharing(origin, robots, self.user_agent_for(trigger))

    async def rules_known(
        self, origin: str, entry: RobotsEntry, fetched: Fetched | None, trigger: Any
    ) -> None:
        robots = entry.robots
        assert robots is not None
        if fetched is not None:
            self.for_spider.keep(origin, fetched.response)  # type: ignore[arg-type]
        user_agent = self.user_agent_for(trigger)
        self.crawler.signals.send_catch_log(
            signals.document_received,
            origin=origin,
            kind="robots.txt",
            entry=entry,
            fetched=fetched,
            user_agent=user_agent,
        )
        try:
            self.politeness.rules_known(origin, robots, user_agent)
        except Exception:
            logger.exception("Could not apply the Crawl-delay of %s", origin)
        await send_robots_parsed(self.crawler, lambda: RerpRobotParser.from_robots(robots), trigger)

    def robots_retry_in(self, failures: int, retry_after: float | None) -> float:
        return self.politeness.robots_retry_in(failures, retry_after)

    def forget(self, origin: str) -> None:
        """``origin`` left the cache: what was kept beside its entry goes too."""
        self.for_spider.forget(origin)
        self.sitemaps.forget(origin)
        try:
            self.politeness.forget(origin)
        except Exception:
            logger.exception("Could not clear the Crawl-delay of %s", origin)

    def forget_all(self) -> None:
        """The cache backend failed and an empty one took over: every origin starts again."""
        self.politeness.forget_all()
        self.sitemaps.forget_all()
