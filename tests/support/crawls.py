"""Crawls with scrapy_rerp's middleware, and what to ask of them afterwards."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import scrapy
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from twisted.python.failure import Failure

from scrapy_rerp.crawl.compat import sleep
from tests.support.servers import Hit, ListSpider, Reply, Server, crawl

SCRAPY_MW = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
RERP_MW = "scrapy_rerp.RobotsTxtMiddleware"


def rerp(**settings: Any) -> dict[str, Any]:
    """Settings for a crawl with scrapy_rerp's middleware in place of Scrapy's."""
    return {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOADER_MIDDLEWARES": {SCRAPY_MW: None, RERP_MW: 100},
        # A test that wrongly finds an origin unreachable fails in seconds, not minutes.
        "RERP_UNREACHABLE_MAX_WAIT": 5,
        **settings,
    }


#: Fast retries and a short hold, for the "unreachable" tests.
FAST_OUTAGE = {
    "RERP_RETRY_BACKOFF_BASE": 0.1,
    "RERP_RETRY_BACKOFF_MAX": 0.2,
    "RERP_UNREACHABLE_MAX_WAIT": 0.6,
}


def ignored(crawler: Crawler) -> list[str]:
    spider = crawler.spider
    assert isinstance(spider, ListSpider)
    return sorted(f.request.url for f in spider.failures if f.check(IgnoreRequest))


def stat(crawler: Crawler, name: str) -> Any:
    assert crawler.stats is not None
    return crawler.stats.get_value(name)


#: The robots.txt a revalidating server answers when the copy asked about is not the current one.
CHANGED_ROBOTS = "User-agent: *\nDisallow: /\n"


def not_modified_for(etag: str, headers: dict[str, str] | None = None) -> Callable[[Hit], Reply]:
    """A robots.txt route that answers 304 (with ``headers``) to ``If-None-Match: etag``, and
    :data:`CHANGED_ROBOTS` to any other request."""

    def robots(hit: Hit) -> Reply:
        if hit.header("If-None-Match") == etag:
            return Reply(status=304, headers=headers or {}, content_type=None)
        return Reply(body=CHANGED_ROBOTS)

    return robots


#: What the middleware itself downloads of an origin (tdmrep.json when RERP_USAGE reads TDMRep).
PER_ORIGIN = ("/robots.txt", "/.well-known/tdmrep.json")


def pages(server: Server) -> list[str]:
    """The paths the server received, but for its per-origin documents."""
    return sorted(p for p in server.paths() if p not in PER_ORIGIN)


class TimedSpider(ListSpider):
    """Sends each URL after a pause: ``steps`` is a list of (seconds to wait, URL).

    Each pause starts when the previous request has its outcome (a response, or a failure
    such as the middleware's IgnoreRequest), so the pauses count from what the middleware
    did, and not from the start of the crawl: a robots.txt fetch that a loaded machine
    finishes late moves the steps with it.
    """

    name = "timed"
    # Long enough for a retried robots.txt fetch; timed_crawl fails a test on a request
    # that has no outcome by then.
    outcome_timeout = 30.0

    def __init__(self, steps: Sequence[tuple[float, str]] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.steps = list(steps)
        self.without_outcome: list[str] = []
        self._settled = True

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for pause, url in self.steps:
            if pause:
                await sleep(pause)
            self._settled = False
            yield scrapy.Request(url, callback=self.parse, errback=self.errback, dont_filter=True)
            # Polled: the same under any reactor, or none.
            deadline = time.monotonic() + self.outcome_timeout
            while not self._settled:
                if time.monotonic() > deadline:
                    self.without_outcome.append(url)
                    return
                await sleep(0.005)

    def parse(self, response: scrapy.http.Response) -> None:
        super().parse(response)
        self._settled = True

    def errback(self, failure: Failure) -> None:
        super().errback(failure)
        self._settled = True


async def timed_crawl(settings: dict[str, Any], steps: Sequence[tuple[float, str]]) -> Crawler:
    """Crawl the *steps* with TimedSpider; every request must have had its outcome."""
    crawler = await crawl(TimedSpider, settings, steps=steps)
    spider = crawler.spider
    assert isinstance(spider, TimedSpider)
    assert spider.without_outcome == []
    return crawler
