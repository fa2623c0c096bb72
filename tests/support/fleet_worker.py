"""One worker of a fleet test: ``python -m tests.support.fleet_worker '<json config>'``.

Config keys: ``redis`` (URL; without it, the worker keeps robots.txt to itself), ``settings``
(extra Scrapy settings), ``scrapy_redis`` (true: the scrapy-redis scheduler and dupefilter;
false: Scrapy's own), ``urls`` (the worker's start URLs; without them, a scrapy-redis
``RedisSpider`` pops start URLs from the Redis list ``redis_key``, default ``fleet:start_urls``;
``fed_when_idle``: one with docs/fleet.rst's ``start()``, which yields nothing;
``redis_batch_size``: the URLs it pops at a time), ``dont_filter`` (of
the start requests, default true), ``clock_skew`` (seconds the worker's wall clock is off),
``barrier`` (the number of workers to wait for, as the spider opens, before crawling),
``held_until`` (a Redis key: the worker says it is ready, pushing its pid to ``fleet:held``,
then waits as its spider opens until the test sets that key, so that its start-up, seconds on
a loaded host, stays out of what the test times), ``stall_after_turn`` (seconds: each request
that took its origin's turn then blocks the worker that long before it leaves, as a process
starved of CPU between its turn and its send would). The
worker crawls with ``scrapy_rerp.Addon`` and, given ``redis``,
``RERP_CACHE = "scrapy_rerp.cache.RedisOriginCache"``, then prints one JSON line: its robots.txt
stats, the pages it received, the requests dropped, when it finished and its peak RSS, and the
humans.txt lines each page carried (``humans``: tests/support/humans.py, when registered).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess


class ListWorker(scrapy.Spider):
    name = "fleet"

    def __init__(
        self, urls: list[str] | None = None, dont_filter: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.urls = urls or []
        self.dont_filter = dont_filter
        self.received: list[str] = []
        self.humans: dict[str, Any] = {}

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.urls:
            yield scrapy.Request(url, dont_filter=self.dont_filter)

    def parse(self, response: scrapy.http.Response) -> None:
        from tests.support.humans import humans_of

        self.received.append(response.url)
        self.humans[response.url] = humans_of(response.meta)


class StallsAfterItsTurn:
    """A downloader middleware after the robots.txt one: each request holding its origin's
    turn blocks the whole worker (its event loop too) for ``STALL_AFTER_TURN`` seconds before
    it goes on to the downloader."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    @classmethod
    def from_crawler(cls, crawler: Any) -> StallsAfterItsTurn:
        return cls(crawler.settings.getfloat("STALL_AFTER_TURN"))

    def process_request(self, request: scrapy.Request, spider: Any = None) -> None:
        from scrapy_rerp.fleet.delay import TURN_META

        if TURN_META in request.meta:
            time.sleep(self.seconds)


def redis_worker_class(fed_when_idle: bool = False) -> type[scrapy.Spider]:
    from scrapy_redis.spiders import RedisSpider

    class RedisWorker(RedisSpider):
        name = "fleet"
        redis_key = "fleet:start_urls"

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.received: list[str] = []

        def parse(self, response: scrapy.http.Response) -> None:
            self.received.append(response.url)

    if not fed_when_idle:
        return RedisWorker

    class IdleFedWorker(RedisWorker):
        """docs/fleet.rst's RedisSpider: fed by scrapy-redis's spider_idle handler alone, on
        every Scrapy (2.16+ does so anyway, no longer reading start_requests())."""

        async def start(self) -> AsyncIterator[Any]:
            return
            yield

    return IdleFedWorker


def _announce_and_wait(
    redis_url: str, announce: str, ready: Callable[[Any], Awaitable[bool]], timeout: float
) -> Any:
    """A spider_opened handler: this worker pushes its pid to the Redis list ``announce``, then
    waits until ``ready(client)`` (at most ``timeout`` seconds) before it crawls."""

    async def wait(**kwargs: Any) -> None:
        import asyncio

        import redis.asyncio

        client = redis.asyncio.Redis.from_url(redis_url)
        await client.rpush(announce, os.getpid())
        deadline = time.monotonic() + timeout
        while not await ready(client) and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        await client.aclose()

    return wait


def barrier(redis_url: str, workers: int) -> Any:
    """A spider_opened handler that waits until ``workers`` workers have opened their spiders,
    so that a fleet test starts with every worker ready to take URLs."""

    async def all_opened(client: Any) -> bool:
        return bool(await client.llen("fleet:opened") >= workers)

    return _announce_and_wait(redis_url, "fleet:opened", all_opened, 30)


def held_until(redis_url: str, key: str) -> Any:
    """A spider_opened handler: this worker is ready (its pid pushed to ``fleet:held``), and
    starts crawling once ``key`` exists in Redis."""

    async def released(client: Any) -> bool:
        return bool(await client.exists(key))

    return _announce_and_wait(redis_url, "fleet:held", released, 120)


def skew_clock(seconds: float) -> None:
    """This worker's wall clock runs ``seconds`` ahead (behind, if negative) of the machine's,
    as a badly synchronised host's would: for code that asks ``time.time()``."""
    real = time.time
    time.time = lambda: real() + seconds  # type: ignore[assignment]


def peak_rss_kb() -> int:
    """This process's peak RSS (kB) since it started: Linux's VmHWM, which exec resets
    (``getrusage``'s ``ru_maxrss`` keeps the peak of the test process it was forked from)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    config = json.loads(sys.argv[1])
    if config.get("clock_skew"):
        skew_clock(config["clock_skew"])
    settings: dict[str, Any] = {
        "ADDONS": {"scrapy_rerp.Addon": 100},
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 20,
        **config.get("settings", {}),
    }
    if config.get("stall_after_turn"):
        settings["STALL_AFTER_TURN"] = config["stall_after_turn"]
        settings["DOWNLOADER_MIDDLEWARES"] = {"tests.support.fleet_worker.StallsAfterItsTurn": 500}
    if config.get("redis"):
        settings["RERP_CACHE"] = "scrapy_rerp.cache.RedisOriginCache"
        settings["RERP_REDIS_URL"] = config["redis"]
    kwargs: dict[str, Any] = {}
    spider_class: type[scrapy.Spider] = ListWorker
    if "urls" in config:
        kwargs["urls"] = config["urls"]
        kwargs["dont_filter"] = config.get("dont_filter", True)
    else:
        spider_class = redis_worker_class(config.get("fed_when_idle", False))
        kwargs["redis_key"] = config.get("redis_key", "fleet:start_urls")
        if "redis_batch_size" in config:
            # URLs popped at a time (scrapy-redis takes CONCURRENT_REQUESTS otherwise).
            kwargs["redis_batch_size"] = config["redis_batch_size"]
        # The RedisSpider's own connection, and how long it waits for URLs before closing.
        settings["REDIS_URL"] = config["redis"]
        settings["MAX_IDLE_TIME_BEFORE_CLOSE"] = config.get("max_idle", 3)
    if config.get("scrapy_redis"):
        settings.update(
            {
                "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
                "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
                # A fleet must keep the shared queue when one worker closes.
                "SCHEDULER_PERSIST": True,
                "REDIS_URL": config["redis"],
                "MAX_IDLE_TIME_BEFORE_CLOSE": config.get("max_idle", 3),
            }
        )
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(spider_class)
    dropped: list[str] = []

    def request_dropped(request: scrapy.Request, spider: Any = None) -> None:
        dropped.append(request.url)

    crawler.signals.connect(request_dropped, signal=signals.request_dropped, weak=False)
    if config.get("barrier"):
        crawler.signals.connect(
            barrier(config["redis"], config["barrier"]), signal=signals.spider_opened, weak=False
        )
    if config.get("held_until"):
        crawler.signals.connect(
            held_until(config["redis"], config["held_until"]),
            signal=signals.spider_opened,
            weak=False,
        )
    process.crawl(crawler, **kwargs)
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    report = {
        "stats": {k: v for k, v in stats.items() if k.startswith("robotstxt/")},
        "finish_reason": stats.get("finish_reason"),
        "received": getattr(crawler.spider, "received", []),
        "humans": getattr(crawler.spider, "humans", {}),
        "dropped": sorted(dropped),
        "finished_at": time.monotonic(),  # one clock for every process of the machine
        "max_rss_kb": peak_rss_kb(),
    }
    print(json.dumps(report, default=str))


if __name__ == "__main__":
    main()
