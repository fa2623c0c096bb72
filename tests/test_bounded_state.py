"""Per-origin state stays bounded over a long crawl: 20,000 origins through 1,000 cache places.

A real crawl of 20,000 origins would take minutes, so this drives the middleware of a real
crawler (engine opened, not started) through what each origin costs it: a request that finds no
rules, parked, the engine offering it and being refused, the origin's flight getting robots.txt
from a transport that answers at once (with a Crawl-delay floor and a sitemap for discovery),
the rules applied, the cache entry stored (evicting the least recently used origin), the request
handed back to the engine and taken out of its scheduler. The downloads themselves are the
crawl tests' business; this counts what stays behind.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

import pytest_twisted
import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.spiders import SitemapSpider
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future

from scrapy_rerp.core.admission import ParkingKey, Purpose
from scrapy_rerp.core.body import parse_body
from scrapy_rerp.core.data import Fetched, Outcome, Validators
from scrapy_rerp.core.origins import WAIT
from scrapy_rerp.crawl.compat import close_spider, open_spider
from scrapy_rerp.crawl.middleware import RobotsTxtMiddleware
from scrapy_rerp.engine import RobotsTxt
from tests.support.crawls import rerp
from tests.support.servers import BASE_SETTINGS

ORIGINS = 20_000
WARM_UP = 5_000
CACHED = 1_000


class Sitemaps(SitemapSpider):
    name = "sitemaps"


async def open_crawler_middleware() -> tuple[scrapy.crawler.Crawler, RobotsTxtMiddleware]:
    from scrapy.utils.test import get_crawler

    settings = rerp(
        RERP_CACHE_MAX_ORIGINS=CACHED,
        RERP_SITEMAP_DISCOVERY=True,
        # The dupefilter's fingerprints are Scrapy's memory, not the middleware's.
        DUPEFILTER_CLASS="scrapy.dupefilters.BaseDupeFilter",
        LOG_LEVEL="INFO",
    )
    crawler = get_crawler(Sitemaps, {**BASE_SETTINGS, **settings})
    crawler.spider = crawler._create_spider()
    crawler.engine = crawler._create_engine()
    await maybe_deferred_to_future(open_spider(crawler, close_if_idle=False))
    # Opened, not started: it counts as running, or the middleware would take it for closing;
    # paused, so that the engine never downloads what the test takes back out of the scheduler.
    crawler.engine.running = True
    crawler.engine.pause()
    middleware = next(
        m
        for m in crawler.engine.downloader.middleware.middlewares
        if isinstance(m, RobotsTxtMiddleware)
    )
    return crawler, middleware


@pytest_twisted.ensureDeferred
async def test_memory_stays_flat_over_20000_origins() -> None:
    # An asyncio task, as Scrapy runs its coroutines: the signals awaited here need one.
    await deferred_from_coro(memory_stays_flat())


def robots_txt(n: int) -> RobotsTxt:
    # Every 50th origin lists a sitemap, enough to see discovery forget; the others share one
    # parsed file, so that the engine's own memory stays out of the count.
    if n % 50:
        return SHARED_RULES
    return parse_body(RULES + f"Sitemap: http://o{n}.test/sitemap.xml\n".encode())


RULES = b"User-agent: *\nCrawl-delay: 0.5\nDisallow: /private\n"
SHARED_RULES = parse_body(RULES)


class Instant:
    """A transport whose robots.txt answers at once: the one set before each visit."""

    def __init__(self) -> None:
        self.next: Fetched | None = None

    async def fetch(
        self, robots_url: str, origin: str, validators: Validators | None = None
    ) -> Fetched:
        assert self.next is not None
        return self.next


async def memory_stays_flat() -> None:
    crawler, middleware = await open_crawler_middleware()
    engine = crawler.engine
    assert engine is not None
    scheduler = engine._slot.scheduler  # type: ignore[union-attr]
    transport = Instant()
    middleware.origins.transport = transport

    async def visit(n: int) -> None:
        origin = f"http://o{n}.test:80"
        request = scrapy.Request(f"http://o{n}.test/page")
        robots = robots_txt(n)
        url = f"http://o{n}.test/robots.txt"
        transport.next = Fetched(outcome=Outcome.PARSED, robots=robots, status=200, url=url)
        assert middleware.origins.rules(origin, request.url, request) is WAIT
        if n % 10 == 0:  # a tenth of the origins had a request waiting (Scrapy's costs)
            key = ParkingKey(origin, Purpose.ROBOTS_TXT)
            assert middleware.lot.park(key, request) is None  # as process_request does
            try:
                middleware.lot._request_scheduled(request)  # the engine offers it: refused
            except IgnoreRequest:
                pass
        middleware.origins.wanted(origin, request.url, request)
        while middleware.origins.busy(origin):
            await asyncio.sleep(0)
        # Back in the scheduler: the request (and a discovered sitemap). Taken out again.
        while scheduler.next_request() is not None:
            pass

    tracemalloc.start()
    try:
        for n in range(WARM_UP):
            await visit(n)
        gc.collect()
        warm, _ = tracemalloc.get_traced_memory()
        for n in range(WARM_UP, ORIGINS):
            await visit(n)
        gc.collect()
        done, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    stats = crawler.stats.get_stats()  # type: ignore[union-attr]
    assert stats["robotstxt/cache/evicted"] == ORIGINS - CACHED
    assert stats["robotstxt/crawl_delay/floor_cleared"] == ORIGINS - CACHED
    assert stats["robotstxt/sitemaps/scheduled"] == ORIGINS // 50
    assert stats["robotstxt/parked"] == stats["robotstxt/released"] == ORIGINS // 10
    floors = middleware.politeness.throttle
    assert floors is not None and len(floors.floored_origins()) == CACHED
    assert len(engine.downloader.per_slot_settings) == CACHED
    assert len(middleware.origins.listener.sitemaps) == CACHED // 50  # type: ignore[attr-defined]
    assert len(middleware.lot) == 0 and len(middleware.origins) == 0
    # 15,000 origins after the first 5,000, with 1,000 cached all along (15 times the cache):
    # nothing accumulates. (Before the bound, discovery's set of sitemap URLs grew by ~100
    # bytes a sitemap, and a task per parking episode was left behind: about 1 KB an origin,
    # 49 MB over 50,000 origins.)
    assert done - warm < 256 * 1024, (warm, done)
    await maybe_deferred_to_future(close_spider(crawler, "done"))
