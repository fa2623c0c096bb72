"""Crawl-delay floors: gaps between requests measured at the server, in real crawls.

``FloorFromRobots`` below is a small downloader middleware that does what the robots.txt
middleware does for floors: fetch robots.txt once per origin through the engine, hand it to the
politeness controller (``Politeness.rules_known``, which applies the floor to the slots through
``SlotFloors``) and only then let the origin's requests through. It drives the real downloader
and its slots, so these tests hold for any caller of ``rules_known``; the end-to-end tests
through ``scrapy_rerp.RobotsTxtMiddleware`` are at the bottom.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import AsyncIterator, Iterable
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import pytest
import pytest_twisted
import scrapy
from scrapy.core.downloader import Slot
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from scrapy_rerp.core.floors import STAT_APPLIED, STAT_CAPPED, STAT_MAX
from scrapy_rerp.core.politeness import Politeness
from scrapy_rerp.core.urls import origin_of
from scrapy_rerp.crawl.compat import sleep, slot_clock, slot_jitter
from scrapy_rerp.crawl.slots import LOOK_AGAIN, STAT_RECLAMPED, SlotFloors
from tests.support.servers import Hit, ListSpider, Reply, Server, crawl, gaps
from tests.support.slots import (
    ADDON,
    FLOOR,
    NO_JITTER,
    STAND_IN,
    TOLERANCE,
    settings,
)

# Crawls, timed at the server: the full and the oldest cells run them (markers: pyproject.toml).
pytestmark = [pytest.mark.crawl, pytest.mark.floors]


@pytest.fixture(params=[STAND_IN, ADDON])
def via(request: pytest.FixtureRequest) -> str:
    """Who applies floors: the stand-in middleware, or RobotsTxtMiddleware via the Addon."""
    return str(request.param)


def pages(server: Server, n: int, host: str | None = None) -> list[str]:
    return [server.url(f"/page{i}", host=host) for i in range(n)]


def assert_gaps_at_least(hits: Iterable[Hit], floor: float) -> list[float]:
    measured = gaps(hits)
    assert measured, "need at least two requests to measure a gap"
    # Shown with `pytest -s`: the measured gaps are reported in the docs.
    print(f"floor {floor:.3f} s, gaps at the server: {', '.join(f'{g:.3f}' for g in measured)}")
    assert min(measured) >= floor - TOLERANCE, f"gaps {measured} below floor {floor}"
    return measured


# -- the floor between requests --------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_floor_holds_and_the_first_page_after_robots_respects_it(
    server: Server, via: str
) -> None:
    server.robots(f"User-agent: *\nCrawl-delay: {FLOOR}\n")
    crawler = await crawl(ListSpider, settings(via), urls=pages(server, 5))
    hits = server.hits()
    assert [h.path for h in hits][0] == "/robots.txt"
    assert len(hits) == 6
    # The robots.txt hit is included: the first page waits for the floor after it.
    measured = assert_gaps_at_least(hits, FLOOR)
    # Default jitter (0.5) is switched off on the floored slot, not compensated for by a
    # longer base delay: gaps sit at the floor. A compensated slot (delay 2 x FLOOR, drawn
    # from 0.5x to 1.5x of it) would put the median near 2 x FLOOR; the bound between the two
    # leaves room for a loaded machine's late dequeues.
    assert statistics.median(measured) < FLOOR * 1.5, measured
    assert crawler.stats.get_value(STAT_APPLIED) == 1
    assert crawler.stats.get_value(STAT_MAX) == pytest.approx(FLOOR)


@pytest_twisted.ensureDeferred
async def test_floor_holds_with_autothrottle(server: Server, via: str) -> None:
    server.robots(f"User-agent: *\nCrawl-delay: {FLOOR}\n")
    # A start delay of 0 and fast local responses make AutoThrottle halve the delay on
    # every response: 0.4 -> 0.2 -> 0.1 ... unless the floor is re-applied after it.
    crawler = await crawl(
        ListSpider,
        settings(via, AUTOTHROTTLE_ENABLED=True, AUTOTHROTTLE_START_DELAY=0),
        urls=pages(server, 6),
    )
    assert len(server.hits()) == 7
    assert_gaps_at_least(server.hits(), FLOOR)
    # AutoThrottle did lower the delay, and the floor was put back after it each time.
    assert crawler.stats.get_value(STAT_RECLAMPED, 0) >= 3


@pytest_twisted.ensureDeferred
async def test_autothrottle_alone_lowers_a_per_slot_delay(server: Server) -> None:
    """Control for the test above: the same crawl with the delay in DOWNLOAD_SLOTS and no
    floor falls below it, so the measurement does catch a floor that does not hold."""
    server.robots("")
    await crawl(
        ListSpider,
        {
            "ROBOTSTXT_OBEY": False,
            "LOG_LEVEL": "INFO",
            "AUTOTHROTTLE_ENABLED": True,
            "AUTOTHROTTLE_START_DELAY": 0,
            "DOWNLOAD_SLOTS": {"127.0.0.1": {"delay": FLOOR, **NO_JITTER}},
        },
        urls=pages(server, 6),
    )
    assert min(gaps(server.hits())) < FLOOR / 2


@pytest_twisted.ensureDeferred
async def test_floor_holds_with_jitter(server: Server, via: str) -> None:
    server.robots(f"User-agent: *\nCrawl-delay: {FLOOR}\n")
    crawler = await crawl(
        ListSpider,
        settings(via, DOWNLOAD_DELAY=0.2, DOWNLOAD_DELAY_JITTER=0.5),
        urls=pages(server, 5),
    )
    assert_gaps_at_least(server.hits(), FLOOR)
    assert crawler.stats.get_value(STAT_MAX) == pytest.approx(FLOOR)


@pytest_twisted.ensureDeferred
async def test_download_delay_above_crawl_delay_is_the_floor_and_jitter_cannot_undercut_it(
    server: Server, via: str
) -> None:
    # DOWNLOAD_DELAY 0.5 with jitter 0.5 alone gives gaps down to 0.25 s, below Crawl-delay.
    server.robots("User-agent: *\nCrawl-delay: 0.3\n")
    crawler = await crawl(
        ListSpider,
        settings(via, DOWNLOAD_DELAY=0.5, DOWNLOAD_DELAY_JITTER=0.5),
        urls=pages(server, 4),
    )
    assert_gaps_at_least(server.hits()[1:], 0.5)
    assert crawler.stats.get_value(STAT_MAX) == pytest.approx(0.5)


@pytest_twisted.ensureDeferred
async def test_floor_counts_from_the_previous_response_too(server: Server, via: str) -> None:
    # The server takes 0.25 s to answer: the next request leaves the floor after that answer,
    # not after the previous request left the queue (which alone would give 0.3 s gaps).
    server.robots("User-agent: *\nCrawl-delay: 0.3\n")
    for url in pages(server, 4):
        server.route(urlsplit(url).path, Reply(body="slow", delay=0.25))
    await crawl(ListSpider, settings(via), urls=pages(server, 4))
    assert_gaps_at_least(server.hits()[1:], 0.3 + 0.25)


@pytest_twisted.ensureDeferred
async def test_floor_comes_from_the_group_of_the_crawlers_user_agent(server: Server) -> None:
    server.robots(
        "User-agent: otherbot\nCrawl-delay: 5\n\n"
        f"User-agent: floorbot\nCrawl-delay: {FLOOR}\n\n"
        "User-agent: *\nCrawl-delay: 3\n"
    )
    crawler = await crawl(
        ListSpider,
        settings(ADDON, USER_AGENT="Mozilla/5.0 (compatible; FloorBot/1.0)"),
        urls=pages(server, 4),
    )
    measured = assert_gaps_at_least(server.hits(), FLOOR)
    assert max(measured) < 1.0
    assert crawler.stats.get_value(STAT_MAX) == pytest.approx(FLOOR)


class CustomSlotSpider(ListSpider):
    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.urls:
            yield scrapy.Request(
                url, self.parse, meta={"download_slot": "pool-1"}, dont_filter=True
            )


@pytest_twisted.ensureDeferred
async def test_floor_holds_on_a_custom_download_slot(server: Server, via: str) -> None:
    server.robots(f"User-agent: *\nCrawl-delay: {FLOOR}\n")
    crawler = await crawl(
        CustomSlotSpider, settings(via, DOWNLOAD_DELAY_JITTER=0.5), urls=pages(server, 5)
    )
    hits = server.hits()
    assert len(hits) == 6
    # robots.txt went through the host's slot, the pages through "pool-1": the first page
    # still waits for the floor after robots.txt.
    assert_gaps_at_least(hits, FLOOR)
    assert crawler.stats.get_value(STAT_APPLIED) == 1


@pytest_twisted.ensureDeferred
async def test_origins_sharing_a_slot_get_the_largest_floor(make_server: Any, via: str) -> None:
    # Two ports on 127.0.0.1 are two origins but one slot ("127.0.0.1").
    fast, slow = make_server(), make_server()
    fast.robots("User-agent: *\nCrawl-delay: 0.3\n")
    slow.robots("User-agent: *\nCrawl-delay: 0.5\n")

    class Sequential(ListSpider):
        # fast's pages first; slow's robots.txt is fetched when its first page is scheduled.
        async def start(self) -> AsyncIterator[scrapy.Request]:
            for url in pages(fast, 3):
                yield scrapy.Request(url, self.parse, dont_filter=True)
            await sleep(1.2)
            for url in pages(slow, 3):
                yield scrapy.Request(url, self.parse, dont_filter=True)
            for i in range(3):
                yield scrapy.Request(fast.url(f"/late{i}"), self.parse, dont_filter=True)

    crawler = await crawl(Sequential, settings(via))
    hits = sorted(fast.hits() + slow.hits(), key=lambda h: h.time)
    assert len(hits) == 11
    assert_gaps_at_least(hits, 0.3)
    slow_robots = next(i for i, h in enumerate(hits) if h is slow.hits("/robots.txt")[0])
    # From slow's robots.txt on, both origins' requests share the 0.5 s floor.
    assert_gaps_at_least(hits[slow_robots:], 0.5)
    assert crawler.stats.get_value(STAT_APPLIED) == 2


@pytest_twisted.ensureDeferred
async def test_floor_is_capped_by_max_crawl_delay(
    server: Server, caplog: pytest.LogCaptureFixture, via: str
) -> None:
    server.robots("User-agent: *\nCrawl-delay: 100\n")
    caplog.set_level(logging.WARNING, logger="scrapy_rerp.politeness")
    crawler = await crawl(
        ListSpider, settings(via, RERP_MAX_CRAWL_DELAY=0.3), urls=pages(server, 4)
    )
    measured = assert_gaps_at_least(server.hits(), 0.3)
    assert max(measured) < 1.0
    assert crawler.stats.get_value(STAT_CAPPED) == 1
    warnings = [r for r in caplog.records if "capped" in r.getMessage()]
    assert len(warnings) == 1
    assert server.origin in warnings[0].getMessage()


@pytest_twisted.ensureDeferred
async def test_request_rate_sets_the_floor(server: Server, via: str) -> None:
    # 2 requests per second: one every 0.5 s, more than the Crawl-delay.
    server.robots("User-agent: *\nCrawl-delay: 0.2\nRequest-rate: 2/1s\n")
    crawler = await crawl(ListSpider, settings(via), urls=pages(server, 4))
    assert_gaps_at_least(server.hits(), 0.5)
    assert crawler.stats.get_value(STAT_MAX) == pytest.approx(0.5)


@pytest_twisted.ensureDeferred
async def test_no_crawl_delay_leaves_slots_alone(server: Server, via: str) -> None:
    server.robots("User-agent: *\nDisallow: /private\n")
    crawler = await crawl(ListSpider, settings(via), urls=pages(server, 6))
    assert len(server.hits()) == 7
    # No delay at all: the pages go out together.
    assert min(gaps(server.hits()[1:])) < 0.05
    assert crawler.stats.get_value(STAT_APPLIED) is None


@pytest_twisted.ensureDeferred
async def test_max_crawl_delay_zero_turns_floors_off(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    # Documented as "off": no floor from DOWNLOAD_DELAY either, the slot keeps its own
    # concurrency and jitter, and nothing is logged as "capped to 0 s".
    server.robots("User-agent: *\nCrawl-delay: 5\n")
    caplog.set_level(logging.DEBUG, logger="scrapy_rerp")
    crawler = await crawl(
        SlotSpider,
        settings(ADDON, RERP_MAX_CRAWL_DELAY=0, DOWNLOAD_DELAY=0.1),
        urls=pages(server, 3),
    )
    assert len(server.hits()) == 4
    assert max(gaps(server.hits()[1:])) < 1.0  # a 5 s floor would have spaced them
    spider = crawler.spider
    assert isinstance(spider, SlotSpider)
    # Scrapy's own slot: DOWNLOAD_DELAY, its default jitter and per-domain concurrency.
    assert set(spider.slots) == {(0.1, 0.5, 8)}
    for stat in (STAT_APPLIED, STAT_CAPPED, STAT_MAX):
        assert crawler.stats.get_value(stat) is None
    assert not any("capped" in r.getMessage() or "floor" in r.getMessage() for r in caplog.records)


class SlotSpider(ListSpider):
    """Records (delay, jitter, concurrency) of the slot each response came through."""

    slots: list[tuple[float, float, int]]

    def parse(self, response: Response) -> None:
        super().parse(response)
        downloader = self.crawler.engine.downloader  # type: ignore[union-attr]
        slot = downloader.slots[response.meta["download_slot"]]
        self.slots = [
            *getattr(self, "slots", []),
            (slot.delay, slot_jitter(slot), slot.concurrency),
        ]


# -- idle slots dropped and recreated ---------------------------------------------------------


class GcSpider(ListSpider):
    """Requests one page, lets its slot go idle, has Scrapy's slot GC drop it, then requests a
    batch at once: the recreated slot must space them by the floor again."""

    recorded: list[tuple[float, float] | None]

    async def start(self) -> AsyncIterator[scrapy.Request]:
        self.recorded = []
        yield scrapy.Request(self.urls[0], self.after_first, dont_filter=True)

    async def after_first(self, response: Response) -> AsyncIterator[scrapy.Request]:
        downloader = self.crawler.engine.downloader  # type: ignore[union-attr]
        key = response.meta["download_slot"]
        # Scrapy drops a slot once it is idle and `lastseen + delay` is older than the GC age;
        # wait out the delay, then run its own GC with age 0 instead of waiting 60 s.
        await sleep(FLOOR + 0.1)
        downloader._slot_gc(age=0)
        self.dropped = key not in downloader.slots
        self.slot_settings = dict(downloader.per_slot_settings.get(key, {}))
        for url in self.urls[1:]:
            yield scrapy.Request(url, self.after_gc, dont_filter=True)

    def after_gc(self, response: Response) -> None:
        downloader = self.crawler.engine.downloader  # type: ignore[union-attr]
        slot = downloader.slots.get(response.meta["download_slot"])
        self.recorded.append(None if slot is None else (slot.delay, slot_jitter(slot)))


@pytest_twisted.ensureDeferred
async def test_floor_survives_slot_garbage_collection(server: Server, via: str) -> None:
    # Scrapy's own slot GC, run with age 0 instead of waiting its 60 s timer (two minutes of
    # real time that would show nothing more).
    server.robots(f"User-agent: *\nCrawl-delay: {FLOOR}\n")
    crawler = await crawl(GcSpider, settings(via, DOWNLOAD_DELAY_JITTER=0.5), urls=pages(server, 6))
    spider = crawler.spider
    assert isinstance(spider, GcSpider)
    assert spider.dropped
    # What Scrapy recreates the slot from.
    assert spider.slot_settings == {"delay": FLOOR, "concurrency": 1, **NO_JITTER}
    hits = server.hits()
    assert len(hits) == 7
    # The five pages requested together after the slot was recreated.
    assert_gaps_at_least(hits[2:], FLOOR)
    # The recreated slot came back floored, without jitter.
    assert spider.recorded and all(r == (FLOOR, 0.0) for r in spider.recorded)


# -- clearing a floor -------------------------------------------------------------------------


class ClearingSpider(ListSpider):
    """After the first page, drops the origin's floor (as when robots.txt is refetched without
    a Crawl-delay, or the origin leaves the cache), then requests a batch at once."""

    async def start(self) -> AsyncIterator[scrapy.Request]:
        yield scrapy.Request(self.urls[0], self.after_first, dont_filter=True)

    def after_first(self, response: Response) -> Iterable[scrapy.Request]:
        downloader = self.crawler.engine.downloader  # type: ignore[union-attr]
        floors: SlotFloors = self.crawler.floors  # type: ignore[attr-defined]
        politeness: Politeness = self.crawler.floor_middleware.politeness  # type: ignore[attr-defined]
        key = response.meta["download_slot"]
        self.floored_settings = dict(downloader.per_slot_settings[key])
        politeness.forget(origin_of(response.url))
        self.restored_settings = dict(downloader.per_slot_settings.get(key, {}))
        self.restored_slot = floors.slot_delay(response.request)
        self.restored_concurrency = downloader.slots[key].concurrency
        for url in self.urls[1:]:
            yield scrapy.Request(url, self.parse, dont_filter=True)


@pytest_twisted.ensureDeferred
async def test_clear_floor_gives_the_slot_its_own_settings_back(server: Server) -> None:
    server.robots(f"User-agent: *\nCrawl-delay: {FLOOR}\n")
    own = {"concurrency": 4}
    crawler = await crawl(
        ClearingSpider, settings(DOWNLOAD_SLOTS={"127.0.0.1": own}), urls=pages(server, 5)
    )
    spider = crawler.spider
    assert isinstance(spider, ClearingSpider)
    # One request at a time while floored, so the floor counts from the previous answer.
    assert spider.floored_settings == {"concurrency": 1, "delay": FLOOR, **NO_JITTER}
    assert spider.restored_settings == own
    assert spider.restored_concurrency == 4
    # Back to DOWNLOAD_DELAY (0) and Scrapy's default jitter (0.5).
    assert spider.restored_slot == (0.0, 0.5)
    # No floor any more: the batch of four goes out together. A floor still in place would
    # space them by three floored gaps (3 x FLOOR); the bound leaves room for a loaded machine.
    assert sum(gaps(server.hits()[2:])) < 2 * FLOOR
    assert crawler.stats.get_value("robotstxt/crawl_delay/floor_cleared") == 1


# -- robots.txt refetched after expiry --------------------------------------------------------


class BatchesSpider(ListSpider):
    """Requests ``batches`` of pages, each batch at once, ``pause`` seconds apart."""

    def __init__(self, batches: list[list[str]], pause: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.batches = batches
        self.pause = pause

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for i, batch in enumerate(self.batches):
            if i:
                await sleep(self.pause)
            for url in batch:
                yield scrapy.Request(url, self.parse, dont_filter=True)


@pytest_twisted.ensureDeferred
async def test_a_crawl_delay_added_on_refetch_applies_to_the_next_requests(server: Server) -> None:
    # robots.txt lives 1 s; the refetch finds a Crawl-delay the first copy did not have.
    server.route(
        "/robots.txt",
        [
            Reply(body="User-agent: *\nAllow: /\n", headers={"Cache-Control": "max-age=1"}),
            Reply(body=f"User-agent: *\nCrawl-delay: {FLOOR}\n"),
        ],
    )
    first, second, third = pages(server, 3), pages(server, 10)[3:6], pages(server, 10)[6:]
    crawler = await crawl(
        BatchesSpider,
        settings(ADDON, RERP_MIN_LIFETIME=0),
        batches=[first, second, third],
        pause=1.3,
    )
    hits = server.hits()
    assert server.count("/robots.txt") == 2
    assert len(hits) == 12
    # No floor at first: the first batch goes out at once. A floor would put every gap at
    # FLOOR or more; the bound leaves room for a loaded machine.
    assert max(gaps(hits[1:4])) < 0.75 * FLOOR
    # The second batch triggers the refetch (and is served by the old rules meanwhile);
    # from the refetched robots.txt on, the floor holds, the third batch included.
    refetch = next(i for i, h in enumerate(hits) if i > 0 and h.path == "/robots.txt")
    later = [h for h in hits[refetch:] if h.path in {urlsplit(u).path for u in third}]
    assert len(later) == 4
    assert_gaps_at_least([hits[refetch], *later], FLOOR)
    assert crawler.stats.get_value(STAT_APPLIED) == 1


# -- when a slot would send: what a fleet's head waits for ------------------------------------


def test_ready_in_is_the_time_left_of_the_slot_s_delay_even_while_its_timer_runs_late() -> None:
    try:
        slot = Slot(concurrency=1, delay=1.0)
    except TypeError:  # Scrapy < 2.19: randomize_delay is required
        slot = Slot(1, 1.0, False)  # type: ignore[call-arg]
    crawler = get_crawler()
    # The downloader's slots are all ready_in reads; the slot is Scrapy's own.
    crawler.engine = SimpleNamespace(downloader=SimpleNamespace(slots={"h.test": slot}))  # type: ignore[assignment]
    floors = SlotFloors(crawler)
    origin = "http://h.test:80"
    now = slot_clock()

    slot.lastseen = now - 2.0  # idle, its delay long passed
    assert floors.ready_in(origin) == 0.0
    slot.lastseen = now - 0.3  # idle, 0.7 s of its delay left
    assert 0.69 < floors.ready_in(origin) <= 0.7
    slot.latercall = PendingTimer()  # type: ignore[assignment]  # due when the delay has passed
    slot.lastseen = now - 0.9
    assert 0.09 < floors.ready_in(origin) <= 0.1  # the time left, not a whole delay
    slot.lastseen = now - 1.2  # the timer is late (a busy event loop): look again soon
    assert floors.ready_in(origin) == LOOK_AGAIN
    slot.latercall = None
    slot.transferring.add("a request")  # type: ignore[arg-type]
    assert floors.ready_in(origin) == LOOK_AGAIN  # its answer awaited
    slot.transferring.clear()
    slot.queue.append(("a request", None))  # type: ignore[arg-type]
    assert floors.ready_in(origin) == 1.0  # a request of its own waits in it already


class PendingTimer:
    """A slot's timer that has not fired (no reactor needed: the cells without one run this)."""

    def active(self) -> bool:
        return True

    def cancel(self) -> None:
        pass
