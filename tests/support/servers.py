"""Crawls for the tests, and the local HTTP servers they crawl.

The servers are :mod:`scrapy_rerp.demo.local_server`'s (``scrapy-rerp demo`` runs on them too),
re-exported here: each :class:`Server` listens on ``127.0.0.1`` (or ``127.0.0.N``, another
host) on its own free port, answers from a background thread, and records every request, which
is what tests assert on (:meth:`Server.hits`, :meth:`Server.paths`, :func:`gaps`).

Typical use::

    with Server() as site:
        site.robots("User-agent: *\\nDisallow: /private\\n")
        site.route("/slow", Reply(body="ok", delay=0.5))
        await crawl(ListSpider, urls=[site.url("/private/x")])
        assert site.paths() == ["/robots.txt"]
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import scrapy

from scrapy_rerp.demo.local_server import Hit, Reply, Route, Server, gaps, servers, urlset

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

__all__ = [
    "BASE_SETTINGS",
    "TEST_REACTOR",
    "Hit",
    "ListSpider",
    "Reply",
    "Route",
    "Server",
    "crawl",
    "gaps",
    "ledger",
    "own",
    "rate_limited",
    "stopped_by_settings",
    "servers",
    "urlset",
]


def rate_limited(interval: float) -> Any:
    """A route for a site that answers 429, without Retry-After, to a request less than
    ``interval`` seconds after the last one it accepted."""
    lock = threading.Lock()
    last = [float("-inf")]

    def reply(hit: Hit) -> Reply:
        with lock:
            if hit.time - last[0] < interval:
                return Reply(status=429)
            last[0] = hit.time
        return Reply(body="ok")

    return reply


# -- crawling --------------------------------------------------------------------------------

#: What the test crawls run on, from ``SCRAPY_RERP_TEST_REACTOR`` (noxfile.py runs each):
#: ``asyncio`` (Scrapy's default reactor), ``epoll`` (Twisted's epoll reactor, no asyncio loop) or
#: ``none`` (Scrapy 2.15+'s reactorless mode: an asyncio loop and no Twisted reactor; pytest
#: runs with ``-p no:twisted`` and tests/conftest.py runs the async tests on asyncio).
TEST_REACTOR = os.environ.get("SCRAPY_RERP_TEST_REACTOR", "asyncio")
REACTOR_SETTINGS: dict[str, dict[str, Any]] = {
    "asyncio": {"TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor"},
    "epoll": {"TWISTED_REACTOR": "twisted.internet.epollreactor.EPollReactor"},
    "none": {"TWISTED_REACTOR_ENABLED": False},
}
if TEST_REACTOR not in REACTOR_SETTINGS:
    raise RuntimeError(
        f"SCRAPY_RERP_TEST_REACTOR={TEST_REACTOR!r}: expected one of {sorted(REACTOR_SETTINGS)}"
    )

#: Settings every test crawl starts from: no telnet, no delays, quiet but inspectable logs, the
#: reactor (or none) of TEST_REACTOR.
BASE_SETTINGS: dict[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "REMOTE_CONTROL_ENABLED": False,
    "LOG_LEVEL": "DEBUG",
    "DOWNLOAD_DELAY": 0,
    "DOWNLOAD_TIMEOUT": 10,
    "RETRY_ENABLED": False,
    "COOKIES_ENABLED": False,
    **REACTOR_SETTINGS[TEST_REACTOR],
}


class ListSpider(scrapy.Spider):
    """Requests ``urls`` (all at once, unfiltered) and records what came back.

    ``responses`` holds the URLs of the responses received, ``failures`` the errback
    failures (an ``IgnoreRequest`` from a downloader middleware lands there).
    """

    name = "list"

    def __init__(self, urls: Sequence[str] = (), *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.urls = list(urls)
        self.responses: list[str] = []
        self.failures: list[Failure] = []

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.urls:
            yield scrapy.Request(url, callback=self.parse, errback=self.errback, dont_filter=True)

    def parse(self, response: Response) -> None:
        self.responses.append(response.url)

    def errback(self, failure: Failure) -> None:
        self.failures.append(failure)


def held_until(
    condition: Callable[[], bool], reply: Reply, timeout: float = 10.0
) -> Callable[[Hit], Reply]:
    """A route that answers with ``reply`` once ``condition()`` holds (polled every 10 ms, at
    most ``timeout`` seconds): for a test that needs requests to arrive while a download is in
    flight, without betting that a fixed delay outlasts a loaded machine's start requests."""

    def answer(hit: Hit) -> Reply:
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.01)
        return reply

    return answer


async def crawl(
    spidercls: type[scrapy.Spider] = ListSpider,
    settings: dict[str, Any] | None = None,
    **spider_kwargs: Any,
) -> Crawler:
    """Run one crawl to completion through Scrapy's own API and return its crawler.

    Await it from a ``pytest_twisted.ensureDeferred`` test; ``crawler.spider`` and
    ``crawler.stats`` stay readable afterwards.
    """
    merged = {**BASE_SETTINGS, **(settings or {})}
    if TEST_REACTOR == "none":
        from scrapy.crawler import AsyncCrawlerRunner  # Scrapy >= 2.14; reactorless: 2.15

        async_runner = AsyncCrawlerRunner(merged)
        crawler = async_runner.create_crawler(spidercls)
        await async_runner.crawl(crawler, **spider_kwargs)
        return crawler
    from scrapy.crawler import CrawlerRunner

    runner = CrawlerRunner(merged)
    crawler = runner.create_crawler(spidercls)
    await runner.crawl(crawler, **spider_kwargs)
    return crawler


def own(records: Iterable[logging.LogRecord]) -> list[logging.LogRecord]:
    """The log records of scrapy_rerp itself, without Scrapy's (which differ between its
    versions and reactors: the reactorless mode's download handler warns that it is
    experimental)."""
    return [r for r in records if r.name.startswith("scrapy_rerp")]


def ledger(crawler: Crawler) -> dict[str, int]:
    """The parking ledger of a finished crawl, checked to balance.

    Returns ``parked`` (requests, each once), ``released`` (absent as 0), ``reparked``,
    ``persisted``, ``dropped/<reason>`` and, among the parkings, those for a site's cool-down
    (``slowdown/parked``) counts (present when not 0) after asserting that every parking was
    released, kept for a resumed crawl or dropped, exactly once.
    """
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    counts = {
        "parked": int(stats.get("robotstxt/parked", 0)),
        "released": int(stats.get("robotstxt/released", 0)),
    }
    if stats.get("robotstxt/reparked"):
        counts["reparked"] = int(stats["robotstxt/reparked"])
    if stats.get("robotstxt/persisted"):
        counts["persisted"] = int(stats["robotstxt/persisted"])
    if stats.get("robotstxt/slowdown/parked"):
        counts["slowdown/parked"] = int(stats["robotstxt/slowdown/parked"])
        assert counts["slowdown/parked"] <= counts["parked"] + counts.get("reparked", 0), counts
    for name, value in stats.items():
        if name.startswith("robotstxt/dropped/"):
            counts[name.removeprefix("robotstxt/")] = int(value)
    dropped = sum(v for k, v in counts.items() if k.startswith("dropped/"))
    kept = counts.get("persisted", 0)
    parkings = counts["parked"] + counts.get("reparked", 0)
    assert parkings == counts["released"] + dropped + kept, counts
    return counts


def stopped_by_settings(crawler: Crawler, records: Iterable[Any], setting: str) -> str:
    """Assert that a crawl stopped at start-up on a bad ``setting``, with one ERROR line naming
    it and no traceback logged; return that line."""
    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "rerp_settings_error"
    # Reactorless Scrapy's aiohttp sessions of earlier crawls are reported unclosed by asyncio
    # whenever the garbage collector finds them: another crawl's, not this one's, error.
    records = [
        r
        for r in records
        if not (r.name == "asyncio" and r.getMessage().startswith("Unclosed client session"))
    ]
    errors = [r.getMessage() for r in records if r.levelname in ("ERROR", "CRITICAL")]
    assert len(errors) == 1, errors
    assert setting in errors[0]
    assert not any(r.exc_info for r in records), [r.getMessage() for r in records if r.exc_info]
    return errors[0]
