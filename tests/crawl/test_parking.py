"""Parking: requests waiting for robots.txt leave the downloader, and the ledger balances.

Real crawls against servers on 127.0.0.N (each host its own Scrapy download slot, as real sites
are), asserting what the servers received, what the spider saw and the ledger's stats.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import pytest_twisted
import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from twisted.python.failure import Failure

from scrapy_rerp.core.admission import ParkingKey, Purpose
from scrapy_rerp.crawl.compat import close_spider, sleep
from tests.support.crawls import ignored, pages, rerp, timed_crawl
from tests.support.parts import build
from tests.support.redis import RedisServer
from tests.support.servers import Hit, ListSpider, Reply, Server, crawl, held_until, ledger

pytestmark = pytest.mark.crawl  # the tests here run crawls (markers: pyproject.toml)

# -- a broad crawl: no origin holds it hostage --------------------------------------------------

BROAD = {"CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 4}
PAGES_PER_ORIGIN = 10


@pytest.fixture(scope="module")
def hosts() -> Iterator[list[Server]]:
    """40 origins on 127.0.0.2 ... 127.0.0.41: one download slot each."""
    started = [Server(host=f"127.0.0.{n}").start() for n in range(2, 42)]
    yield started
    for s in started:
        s.stop()


class BroadSpider(ListSpider):
    """Closes the crawl once every page of the ``healthy`` origins has been received."""

    name = "broad"

    def __init__(
        self, healthy: int = 0, done: threading.Event | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.healthy = healthy
        self.healthy_done: float | None = None
        self.done = done  # set with healthy_done, for the servers

    def parse(self, response: scrapy.http.Response) -> None:
        super().parse(response)
        if len(self.responses) == self.healthy and self.healthy_done is None:
            self.healthy_done = time.monotonic()
            if self.done is not None:
                self.done.set()
            close_spider(self.crawler, "healthy_done")


def interleaved(origins: list[Server]) -> list[str]:
    return [s.url(f"/p{i}") for i in range(PAGES_PER_ORIGIN) for s in origins]


async def healthy_seconds(
    healthy: list[Server], others: list[Server], done: threading.Event | None = None
) -> tuple[float, Crawler]:
    """Seconds from the start of a crawl of all origins until the healthy ones' pages are in
    (``done`` is set then)."""
    for s in healthy + others:
        s.clear()
    urls = interleaved(healthy + others)
    started = time.monotonic()
    crawler = await crawl(
        BroadSpider,
        rerp(RERP_UNREACHABLE_MAX_WAIT=20, **BROAD),
        urls=urls,
        healthy=len(healthy) * PAGES_PER_ORIGIN,
        done=done,
    )
    last = max(h.time for s in healthy for h in s.hits() if h.path != "/robots.txt")
    return last - started, crawler


@pytest.mark.parametrize("trouble", ["dead", "slow"])
@pytest_twisted.ensureDeferred
async def test_a_few_troubled_origins_do_not_stall_a_broad_crawl(
    hosts: list[Server], trouble: str
) -> None:
    healthy, troubled = hosts[:36], hosts[36:]
    healthy_done = threading.Event()
    for s in healthy:
        s.robots("User-agent: *\nDisallow: /private\n")
    for s in troubled:
        if trouble == "dead":
            s.robots("", status=503)
        else:
            # Answered a second after the healthy pages are all in, as the crawl closes, however
            # long they took on a loaded machine (a fixed delay of 8 s was once too short).
            def slow_robots(hit: Hit) -> Reply:
                healthy_done.wait(60)
                time.sleep(1.0)
                return Reply(body="User-agent: *\nAllow: /\n")

            s.route("/robots.txt", slow_robots)
    alone, _ = await healthy_seconds(healthy, [])
    together, crawler = await healthy_seconds(healthy, troubled, healthy_done)
    spider = crawler.spider
    assert isinstance(spider, BroadSpider)
    for s in healthy:
        assert pages(s) == sorted(f"/p{i}" for i in range(PAGES_PER_ORIGIN))
        assert s.count("/robots.txt") == 1
    for s in troubled:
        assert pages(s) == []  # the crawl closed before a slow robots.txt answered
    # Measured on the code before parking: 41 s against 1.6 s for the dead origins, and a slow
    # robots.txt holds its requests 8 s. This catches a stall, with room for a loaded machine
    # (the suite runs on two workers, and .ci/run runs two cells side by side: 3.6 s against
    # 1.25 s was seen); the 1.3x goal is benchmarks/bench_crawl.py's to measure
    # (--troubled-only, CRAWL_RESULTS.md).
    assert together <= 3 * alone + 1.0, (together, alone)
    # The troubled origins' requests were parked until the close (one may not have been
    # yielded yet by then: start requests are consumed as the crawl goes).
    counts = ledger(crawler)
    assert 0 < counts["dropped/crawl_closing"] <= len(troubled) * PAGES_PER_ORIGIN


# -- prompt shutdown ----------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_closing_drops_parked_requests_at_once(
    hosts: list[Server], caplog: pytest.LogCaptureFixture
) -> None:
    ok, dead = hosts[0], hosts[1]
    ok.clear()
    dead.clear()
    ok.robots("")
    dead.robots("", status=503)
    # The case has 20 pages on the healthy origin too; Scrapy then spends ~8 s after
    # the timeout downloading the ones already queued in its slot, 0.5 s apart (measured with
    # ROBOTSTXT_OBEY off as well). Six keep that drain short; the dead origin keeps its 20.
    urls = [dead.url(f"/p{i}") for i in range(20)]
    for i in range(6):
        urls.insert(4 * i, ok.url(f"/p{i}"))
    settings = rerp(DOWNLOAD_DELAY=0.5, CLOSESPIDER_TIMEOUT=2)
    del settings["RERP_UNREACHABLE_MAX_WAIT"]  # the default, 300 s
    caplog.set_level(logging.INFO)
    started = time.monotonic()
    crawler = await crawl(settings=settings, urls=urls)
    closed = time.monotonic()
    closing = next(r for r in caplog.records if r.getMessage().startswith("Closing spider"))
    dropped = [r for r in caplog.records if r.getMessage().startswith("Crawl closing: dropped")]
    assert len(dropped) == 1
    assert dropped[0].getMessage() == (
        "Crawl closing: dropped 20 requests still waiting for robots.txt of 1 origin: "
        f"{dead.origin} (20)"
    )
    assert dropped[0].created - closing.created <= 1.0
    # Nothing of the middleware's outlives Scrapy's own drain of the requests already queued in
    # the healthy origin's slot (DOWNLOAD_DELAY apart): the crawl ends right after the last.
    last_page = max(h.time for h in ok.hits())
    assert closed - last_page <= 1.0
    assert not any("unreachable for more than" in r.getMessage() for r in caplog.records)
    assert pages(dead) == []
    # Retries stopped: none after closing started (one may have been on the wire).
    retries_after = [h for h in dead.hits("/robots.txt") if h.time > closing.created - started]
    assert len(retries_after) <= 1
    counts = ledger(crawler)
    assert counts["dropped/crawl_closing"] == 20
    assert stat_value(crawler, "finish_reason") == "closespider_timeout"


def stat_value(crawler: Crawler, name: str) -> Any:
    assert crawler.stats is not None
    return crawler.stats.get_value(name)


@pytest.mark.needs_asyncio  # a fleet worker: redis.asyncio
@pytest_twisted.ensureDeferred
async def test_a_fleet_worker_closing_names_the_crawl_delay_turn_its_requests_waited_for(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    # robots.txt answers at once, and its answer takes the fleet's first turn: every page
    # waits 30 s for a Crawl-delay turn (the head in place, the others parked), and the crawl
    # closes before, without waiting for the turn.
    server.robots("User-agent: *\nCrawl-delay: 30\n")
    urls = [server.url(f"/p{i}") for i in range(4)]
    redis_server = RedisServer().start()
    try:
        settings = rerp(
            RERP_CACHE="scrapy_rerp.cache.RedisOriginCache",
            RERP_REDIS_URL=redis_server.url,
            CLOSESPIDER_TIMEOUT=0.5,
        )
        started = time.monotonic()
        crawler = await crawl(settings=settings, urls=urls)
        took = time.monotonic() - started
    finally:
        redis_server.stop()
    assert server.paths() == ["/robots.txt"]
    assert took < 10, took  # the head gave its turn up as the crawl closed (not 30 s)
    dropped = [r.getMessage() for r in caplog.records if "Crawl closing: dropped" in r.getMessage()]
    # What they waited for; not robots.txt, which was known.
    assert len(dropped) == 1, dropped
    assert re.fullmatch(
        r"Crawl closing: dropped (\d) requests? still waiting for a Crawl-delay turn "
        rf"of 1 origin: {re.escape(server.origin)} \(\1\)",
        dropped[0],
    ), dropped
    assert stat_value(crawler, "finish_reason") == "closespider_timeout"
    assert ledger(crawler)["dropped/crawl_closing"] >= 1


@pytest_twisted.ensureDeferred
async def test_closing_names_what_the_dropped_requests_waited_for_per_purpose(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The lot alone (no engine): requests parked under keys of every purpose, then a crawl
    # that closes with nothing to persist. One WARNING per thing waited for, in the order
    # first parked; the two purposes of a fleet's turn read as one.
    a, b = "http://a.test:80", "http://b.test:80"
    crawler, parts = build({})
    lot = parts.lot
    parked = {
        ParkingKey(a, Purpose.ROBOTS_TXT): 2,
        ParkingKey(b, Purpose.COOL_DOWN): 1,
        ParkingKey(a, Purpose.CRAWL_DELAY): 1,
        ParkingKey(b, Purpose.TURNS_BEGIN): 1,
        ParkingKey(b, Purpose.CLOSING): 3,
    }
    for key, n in parked.items():
        for i in range(n):
            assert lot.park(key, scrapy.Request(f"{key.origin}/{key.purpose.name}/{i}")) is None
    assert lot.counts() == parked and len(lot) == 8
    assert lot.count(ParkingKey(b, Purpose.ROBOTS_TXT)) == 0  # b waits for no robots.txt
    with caplog.at_level(logging.WARNING, logger="scrapy_rerp.robotstxt"):
        lot.close(keep=False)
    assert [r.getMessage() for r in caplog.records] == [
        f"Crawl closing: dropped 2 requests still waiting for robots.txt of 1 origin: {a} (2)",
        "Crawl closing: dropped 1 request still waiting for the end of a cool-down of 1 "
        f"origin: {b} (1)",
        "Crawl closing: dropped 2 requests still waiting for a Crawl-delay turn of 2 "
        f"origins: {a} (1), {b} (1)",
        "Crawl closing: dropped 3 requests still waiting for a Crawl-delay or raised floor "
        f"in a download slot of 1 origin: {b} (3)",
    ]
    assert ledger(crawler) == {"parked": 8, "released": 0, "dropped/crawl_closing": 8}
    assert lot.counts() == {} and len(lot) == 0


@pytest_twisted.ensureDeferred
async def test_a_media_download_kept_at_a_resumable_close_is_dropped_and_counted() -> None:
    # engine.download_async (a media pipeline) downloads the request process_request returned
    # again at once: parked, the crawl closes (resumable: JOBDIR) before it comes back. The
    # scheduler never saw it, so it cannot be kept for the resumed crawl: it is dropped as the
    # crawl closes, and the ledger closes (it was once dropped as "keep", counted nowhere).
    crawler, parts = build({})
    lot = parts.lot
    key = ParkingKey("http://a.test:80", Purpose.ROBOTS_TXT)
    request = scrapy.Request("http://a.test/image.png")
    assert lot.park(key, request) is None
    lot.close(keep=True)
    assert lot.came_back(request)
    with pytest.raises(IgnoreRequest, match="^crawl closing$"):
        await lot.wait_in_place(request)
    assert lot.take_kept() == [] and len(lot) == 0
    assert ledger(crawler) == {"parked": 1, "released": 0, "dropped/crawl_closing": 1}


# -- what the spider, the other middlewares and the stats see ----------------------------------


class Recorder:
    """A downloader middleware that records the requests it sees (one instance per crawl)."""

    seen: list[scrapy.Request]

    def __init__(self) -> None:
        self.seen = []

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Recorder:
        recorder = cls()
        crawler.recorders = getattr(crawler, "recorders", {})  # type: ignore[attr-defined]
        crawler.recorders[cls.__name__] = recorder  # type: ignore[attr-defined]
        return recorder

    def process_request(self, request: scrapy.Request, spider: Any = None) -> None:
        self.seen.append(request)


class Before(Recorder):
    pass


class After(Recorder):
    pass


class KeepSpider(scrapy.Spider):
    """Yields requests with priorities, meta and callbacks, and records what comes back."""

    name = "keep"

    def __init__(self, base: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base = base
        self.sent: list[scrapy.Request] = []
        self.answered: list[tuple[scrapy.Request, str]] = []
        self.failures: list[Failure] = []
        self.dropped: list[scrapy.Request] = []

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> KeepSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.request_dropped, signal=signals.request_dropped)
        return spider

    def request_dropped(self, request: scrapy.Request, spider: Any = None) -> None:
        self.dropped.append(request)

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for i, path in enumerate(["/a", "/b", "/c", "/a"]):  # /a twice: a real duplicate
            request = scrapy.Request(
                self.base + path,
                callback=self.first if i % 2 else self.second,
                errback=self.errback,
                priority=i,
                meta={"mine": i},
                cb_kwargs={"n": i},
            )
            self.sent.append(request)
            yield request

    def first(self, response: scrapy.http.Response, n: int) -> None:
        self.answered.append((response.request, f"first{n}"))  # type: ignore[arg-type]

    def second(self, response: scrapy.http.Response, n: int) -> None:
        self.answered.append((response.request, f"second{n}"))  # type: ignore[arg-type]

    def errback(self, failure: Failure) -> None:
        self.failures.append(failure)


@pytest_twisted.ensureDeferred
async def test_parking_is_invisible_to_the_spider(server: Server) -> None:
    # robots.txt is answered once every request has parked or been found a duplicate.
    running: list[KeepSpider] = []

    class Watched(KeepSpider):
        async def start(self) -> AsyncIterator[scrapy.Request]:
            running.append(self)
            async for request in super().start():
                yield request

    def all_parked() -> bool:
        if not running or running[0].dropped == []:
            return False
        return running[0].crawler.stats.get_value("robotstxt/parked") == 3  # type: ignore[union-attr]

    server.route("/robots.txt", held_until(all_parked, Reply(body="User-agent: *\nAllow: /\n")))
    middlewares = {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "scrapy_rerp.RobotsTxtMiddleware": 100,
        f"{__name__}.Before": 50,
        f"{__name__}.After": 200,
    }
    crawler = await crawl(Watched, rerp(DOWNLOADER_MIDDLEWARES=middlewares), base=server.origin)
    spider = crawler.spider
    assert isinstance(spider, Watched)
    # Each request once, the duplicate /a dropped by the dupefilter as without parking.
    assert sorted(server.paths()) == ["/a", "/b", "/c", "/robots.txt"]
    assert spider.failures == []
    assert sorted(name for _, name in spider.answered) == ["first1", "second0", "second2"]
    first_a, b, c, second_a = spider.sent
    for request, _ in spider.answered:
        # The very object the spider yielded, with its meta, and its own dont_filter back.
        assert any(request is sent for sent in (first_a, b, c))
        assert request.dont_filter is False
        assert request.meta["mine"] in (0, 1, 2)
        assert "_rerp_dont_filter" not in request.meta
    assert spider.dropped == [second_a]  # the real duplicate, and only it
    recorders = crawler.recorders  # type: ignore[attr-defined]
    after = [r for r in recorders["After"].seen if not r.url.endswith("/robots.txt")]
    assert sorted(r.url for r in after) == [server.url(p) for p in ("/a", "/b", "/c")]
    # A middleware before this one sees a parked request again when it comes back.
    before = [r for r in recorders["Before"].seen if not r.url.endswith("/robots.txt")]
    assert len(before) == 6
    assert ledger(crawler) == {"parked": 3, "released": 3}
    stats = crawler.stats.get_stats()  # type: ignore[union-attr]
    assert stats["scheduler/enqueued"] == 3 + 3  # in, then back in after parking
    assert stats["downloader/request_count"] == 4  # three pages and robots.txt


@pytest_twisted.ensureDeferred
async def test_park_limit_drops_with_a_reason(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    # robots.txt is answered once the seven over the limit have been dropped.
    running: list[ListSpider] = []

    class Counting(ListSpider):
        async def start(self) -> AsyncIterator[scrapy.Request]:
            running.append(self)
            async for request in super().start():
                yield request

    def all_dropped() -> bool:
        return bool(running) and len(running[0].failures) == 7

    server.route("/robots.txt", held_until(all_dropped, Reply(body="")))
    urls = [server.url(f"/p{i}") for i in range(10)]
    crawler = await crawl(Counting, settings=rerp(RERP_MAX_PARKED_PER_ORIGIN=3), urls=urls)
    assert len(pages(server)) == 3
    assert len(ignored(crawler)) == 7
    assert all(
        "too many requests wait" in str(f.value)
        for f in crawler.spider.failures  # type: ignore[union-attr]
    )
    assert ledger(crawler) == {"parked": 10, "released": 3, "dropped/park_limit": 7}
    assert sum("RERP_MAX_PARKED_PER_ORIGIN" in r.getMessage() for r in caplog.records) == 7


@pytest_twisted.ensureDeferred
async def test_an_origin_past_its_outage_limit_drops_new_requests_at_once(
    server: Server,
) -> None:
    # Dropped after 0.3 s of outage; the next retry is 5 s away, so a request arriving in
    # between is dropped at once, without waiting and without a download.
    server.robots("", status=503)
    settings = rerp(
        RERP_UNREACHABLE_MAX_WAIT=0.3, RERP_RETRY_BACKOFF_BASE=5, RERP_RETRY_BACKOFF_MAX=5
    )
    crawler = await timed_crawl(settings, [(0, server.url("/a")), (0.1, server.url("/b"))])
    assert server.paths() == ["/robots.txt"]
    assert ignored(crawler) == [server.url("/a"), server.url("/b")]
    assert ledger(crawler) == {"parked": 2, "released": 0, "dropped/unreachable": 2}
    message = f"robots.txt of {server.origin} unreachable for more than 0.3 s (last: HTTP 503)"
    assert [str(f.value) for f in crawler.spider.failures] == [message, message]  # type: ignore[union-attr]


@pytest_twisted.ensureDeferred
async def test_the_outage_limit_counts_from_the_first_failure(server: Server) -> None:
    # /a parks at the first failure, /b 0.4 s later: both are dropped when the outage is
    # 0.6 s old, /b after waiting 0.2 s, not a full 0.6 s of its own.
    server.robots("", status=503)
    settings = rerp(
        RERP_UNREACHABLE_MAX_WAIT=0.6, RERP_RETRY_BACKOFF_BASE=0.1, RERP_RETRY_BACKOFF_MAX=0.1
    )
    crawler = await crawl(TwoSteps, settings, urls=[server.url("/a"), server.url("/b")])
    spider = crawler.spider
    assert isinstance(spider, TwoSteps)
    first_failure = server.hits("/robots.txt")[0].time
    assert sorted(spider.outcomes) == ["/a", "/b"]
    for path, when in spider.outcomes.items():
        assert 0.55 <= when - first_failure <= 0.85, (path, when - first_failure)
    assert ledger(crawler) == {"parked": 2, "released": 0, "dropped/unreachable": 2}


class TwoSteps(ListSpider):
    """Sends the first URL, the second 0.4 s later; records when each was dropped."""

    name = "two_steps"

    async def start(self) -> AsyncIterator[scrapy.Request]:
        self.outcomes: dict[str, float] = {}
        for i, url in enumerate(self.urls):
            if i:
                await sleep(0.4)
            yield scrapy.Request(url, callback=self.parse, errback=self.dropped)

    def dropped(self, failure: Failure) -> None:
        self.outcomes[urlsplit(failure.request.url).path] = time.monotonic()
