"""Crawl-delay floors set by a stand-in for the robots.txt middleware, or by the Addon.

``FloorFromRobots`` is a small downloader middleware that does what the robots.txt middleware
does for floors: fetch robots.txt once per origin through the engine, hand it to the politeness
controller (``Politeness.rules_known``, which applies the floor to the slots through
``SlotFloors``) and only then let the origin's requests through. It drives the real downloader
and its slots, so tests using it hold for any caller of ``rules_known``.
"""

from __future__ import annotations

from typing import Any

import scrapy
from scrapy.crawler import Crawler
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from scrapy_rerp.core.politeness import Politeness
from scrapy_rerp.core.settings import RerpSettings
from scrapy_rerp.core.urls import opts_out_of_robots_txt, origin_of, robots_url_of
from scrapy_rerp.crawl.compat import download, no_jitter
from scrapy_rerp.crawl.slots import SlotFloors
from scrapy_rerp.engine import parse

FLOOR = 0.4
# Timer and thread scheduling slack between the downloader's dequeue and the server's clock.
TOLERANCE = 0.02
UA = "FloorBot"
# How a floored DOWNLOAD_SLOTS entry turns jitter off, in the installed Scrapy's words.
NO_JITTER: dict[str, Any] = {}
no_jitter(NO_JITTER)


def rerp_settings(crawler: Crawler) -> RerpSettings:
    # The test middleware stands in for the robots.txt one, so ROBOTSTXT_OBEY stays off.
    return RerpSettings.from_settings(crawler.settings, require_obey=False)


class FloorFromRobots:
    """Fetch robots.txt once per origin, set the floor, then release the origin's requests."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        settings = rerp_settings(crawler)
        self.floors = SlotFloors(crawler)
        delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
        self.politeness = Politeness(settings, delay, self.floors, stats=crawler.stats)
        self.on_robots: list[Any] = []  # extra callbacks(origin, robots_url, robots)
        # Per origin: the requests waiting for its robots.txt (Deferreds: any reactor, or none);
        # None once it is known.
        self._waiting: dict[str, list[Deferred[None]] | None] = {}
        crawler.floors = self.floors  # type: ignore[attr-defined]  # for assertions
        crawler.floor_middleware = self  # type: ignore[attr-defined]

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FloorFromRobots:
        return cls(crawler)

    async def process_request(self, request: scrapy.Request, spider: Any = None) -> None:
        if opts_out_of_robots_txt(request.meta):
            return
        origin = origin_of(request.url)
        if origin not in self._waiting:  # the first request of the origin fetches robots.txt
            self._waiting[origin] = []
            try:
                await self._fetch(origin, robots_url_of(request.url))
            finally:
                for waiter in self._waiting[origin] or ():
                    waiter.callback(None)
                self._waiting[origin] = None
            return
        waiting = self._waiting[origin]
        if waiting is not None:
            waiter: Deferred[None] = Deferred()
            waiting.append(waiter)
            await maybe_deferred_to_future(waiter)

    async def _fetch(self, origin: str, robots_url: str) -> None:
        response = await download(
            self.crawler,
            scrapy.Request(robots_url, meta={"dont_obey_robotstxt": True}, priority=1000),
        )
        robots = parse(response.body if response.status == 200 else b"")
        self.politeness.rules_known(origin, robots, UA)
        for callback in self.on_robots:
            callback(origin, robots_url, robots)


MIDDLEWARE = {f"{__name__}.FloorFromRobots": 100}


STAND_IN = "stand-in"
ADDON = "addon"


def settings(via: str = STAND_IN, **extra: Any) -> dict[str, Any]:
    """Crawl settings with floors set by the stand-in middleware above, or by scrapy_rerp's
    robots.txt middleware turned on the documented way, with the Addon."""
    if via == ADDON:
        base: dict[str, Any] = {"ADDONS": {"scrapy_rerp.Addon": 100}}
    else:
        base = {"DOWNLOADER_MIDDLEWARES": MIDDLEWARE, "ROBOTSTXT_OBEY": False}
    return {**base, "USER_AGENT": UA, "LOG_LEVEL": "INFO", **extra}
