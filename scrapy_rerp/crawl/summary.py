"""What the robots.txt layer says of a crawl as it closes (docs/logging.rst).

Two INFO lines at most, once the spider closes, after the middleware's parts have stopped:

* the requests ``RERP_USAGE`` dropped, counted per reason (``robotstxt/usage/dropped/<reason>``),
  the first :data:`FIRST_NAMED` of each reason named: each drop is a DEBUG line only, where a
  broad crawl would otherwise write one INFO line per page;
* the closing summary: robots.txt downloaded, requests refused, parked (they waited), dropped,
  and, when there were any, the Crawl-delay floors set and the cool-downs begun, with the
  seconds waited. Its numbers are the stats' (docs/stats.rst), read as the spider closes.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals

from scrapy_rerp.core import loggers
from scrapy_rerp.core.cool_downs import STAT_COOLDOWNS, STAT_WAITED
from scrapy_rerp.core.floors import STAT_APPLIED
from scrapy_rerp.core.wording import counted, duration

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["FIRST_NAMED", "CrawlSummary"]

logger = logging.getLogger(loggers.SUMMARY)

#: How many of the requests dropped for one reason the closing line names.
FIRST_NAMED = 5

#: How the closing line says each reason of ``robotstxt/usage/dropped/<reason>``.
USAGE_REASONS = {
    "robots_txt": "by robots.txt",
    "header": "by their Content-Usage header",
    "unknown": "as unknown (RERP_USAGE_DEFAULT = 'deny')",
    "license": "by an RSL licence",
}


class CrawlSummary:
    """Keeps what the closing lines name, and writes them when the spider closes."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        #: The requests dropped for each reason, counted; the first few named.
        self._dropped: dict[str, int] = {}
        self._named: dict[str, list[str]] = {}
        # Connected as the spider opens, after every part the middleware built connected its
        # own spider_closed handler: this one runs after them, once the closing drops are
        # counted. The middleware's parts hold this object (the handlers are held weakly).
        crawler.signals.connect(self._opened, signal=signals.spider_opened)

    def usage_dropped(self, reason: str, url: str) -> None:
        """A request ``RERP_USAGE`` dropped for ``reason`` (a key of :data:`USAGE_REASONS`)."""
        self._dropped[reason] = self._dropped.get(reason, 0) + 1
        named = self._named.setdefault(reason, [])
        if len(named) < FIRST_NAMED:
            named.append(url)

    def _opened(self) -> None:
        self.crawler.signals.connect(self._closed, signal=signals.spider_closed)

    def _closed(self) -> None:
        extra = {"spider": self.crawler.spider}
        if self._dropped:
            logger.info("%s", self.usage_line(), extra=extra)
        logger.info("%s", self.closing_line(), extra=extra)

    def usage_line(self) -> str:
        """The requests ``RERP_USAGE`` dropped, per reason, the first few named."""
        parts = []
        for reason, count in self._dropped.items():
            named = self._named[reason]
            more = f", and {count - len(named)} more" if count > len(named) else ""
            parts.append(f"{count} {USAGE_REASONS.get(reason, reason)} ({', '.join(named)}{more})")
        total = sum(self._dropped.values())
        return f"RERP_USAGE dropped {counted(total, 'request')}: {'; '.join(parts)}"

    def closing_line(self) -> str:
        """The closing summary, from the stats."""
        stats: dict[str, Any] = (
            self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        )

        def count(name: str) -> int:
            return int(stats.get(name, 0))

        dropped = sum(
            int(value)
            for name, value in stats.items()
            if name.startswith(("robotstxt/dropped/", "robotstxt/usage/dropped/"))
        )
        line = (
            "robots.txt layer: "
            f"{counted(count('robotstxt/origin_count'), 'origin')}, "
            f"{counted(count('robotstxt/response_count'), 'robots.txt download')}, "
            f"{counted(count('robotstxt/forbidden'), 'request')} refused, "
            f"{count('robotstxt/parked')} parked, "
            f"{dropped} dropped"
        )
        # The politeness parts only when they acted: most crawls have neither.
        politeness = []
        if count(STAT_APPLIED):
            politeness.append(counted(count(STAT_APPLIED), "Crawl-delay floor"))
        if count(STAT_COOLDOWNS):
            waited = float(stats.get(STAT_WAITED, 0.0))
            politeness.append(
                f"{counted(count(STAT_COOLDOWNS), 'cool-down')} ({duration(waited)} waited)"
            )
        return "; ".join([line, *politeness])
