"""The middleware's parts: which cache requests read, what is built for a single process and for
a fleet worker, and what a closing crawl keeps for the resumed job.

Real parts on a crawler from Scrapy's ``get_crawler`` (no engine: nothing is downloaded); the
crawls through them are tests/crawl/test_middleware.py's and the others'.
"""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path

import pytest
import pytest_twisted
import scrapy
from scrapy import signals
from scrapy.core.downloader.middleware import DownloaderMiddlewareManager
from scrapy.exceptions import IgnoreRequest

from scrapy_rerp.cache import MemoryOriginCache
from scrapy_rerp.core.admission import DropReason, ParkingKey, Purpose
from scrapy_rerp.core.politeness import Politeness
from scrapy_rerp.crawl.assembly import Misconfigured, origin_caches
from scrapy_rerp.crawl.middleware import RobotsTxtMiddleware
from scrapy_rerp.crawl.resume import COOL_DOWN_FILE, JOB_FILE
from scrapy_rerp.crawl.slots import SlotFloors
from scrapy_rerp.crawl.usage import UsagePolicy
from tests.support.parts import build, crawler_and_settings

pytestmark = pytest.mark.scrapy  # Scrapy's API (markers: pyproject.toml)

REDIS = {
    "RERP_CACHE": "scrapy_rerp.cache.RedisOriginCache",
    "RERP_REDIS_URL": "redis://127.0.0.1:1/0",  # never reached: nothing here calls Redis
}


def test_requests_read_the_configured_cache_itself() -> None:
    crawler, settings = crawler_and_settings({"RERP_CACHE_MAX_ORIGINS": 7})
    caches = origin_caches(crawler, settings)
    assert caches is not None
    cache, shared = caches
    assert isinstance(cache, MemoryOriginCache) and cache.max_origins == 7
    assert shared is None


@pytest.mark.needs_asyncio
def test_a_fleet_store_is_read_through_a_local_cache() -> None:
    from scrapy_rerp.fleet.store import RedisOriginCache

    crawler, settings = crawler_and_settings({**REDIS, "RERP_CACHE_MAX_ORIGINS": 7})
    caches = origin_caches(crawler, settings)
    assert caches is not None
    cache, shared = caches
    # Requests ask an in-memory LRU; only the downloads ask Redis.
    assert isinstance(cache, MemoryOriginCache) and cache.max_origins == 7
    assert isinstance(shared, RedisOriginCache)


def test_a_single_process_has_its_own_politeness_on_its_slots() -> None:
    _, parts = build({})
    assert parts.fleet is None and type(parts.politeness) is Politeness
    assert isinstance(parts.politeness.throttle, SlotFloors)
    # Requests that wait for robots.txt and for a cool-down share one lot (one limit, one
    # ledger), and the origin service's new rules reach this politeness.
    assert parts.politeness.parking is parts.lot and parts.origins.waiters is parts.lot
    assert parts.origins.listener.politeness is parts.politeness  # type: ignore[attr-defined]
    assert parts.usage is None


def test_without_floors_or_slow_downs_no_slot_is_touched() -> None:
    _, parts = build({"RERP_CRAWL_DELAY": False, "RERP_SLOWDOWN": False, "RERP_USAGE": "search"})
    assert parts.politeness.throttle is None
    assert isinstance(parts.usage, UsagePolicy) and parts.usage.purposes == ("search",)


@pytest.mark.parametrize(("usage", "hooked"), [({}, False), ({"RERP_USAGE": "search"}, True)])
def test_responses_pass_through_the_middleware_only_with_rerp_usage(
    usage: dict[str, str], hooked: bool
) -> None:
    # Scrapy's downloader calls every process_response it finds on every response.
    crawler, _ = crawler_and_settings({"ADDONS": {"scrapy_rerp.Addon": 100}, **usage})
    manager = DownloaderMiddlewareManager.from_crawler(crawler)
    (middleware,) = [mw for mw in manager.middlewares if isinstance(mw, RobotsTxtMiddleware)]
    hooks = [method.__self__ for method in manager.methods["process_response"]]  # type: ignore[union-attr]
    assert (middleware in hooks) is hooked
    assert hasattr(middleware, "process_request")


@pytest.mark.needs_asyncio
def test_a_fleet_worker_shares_its_rules_and_its_politeness() -> None:
    from scrapy_rerp.fleet.delay import FleetCoordination
    from scrapy_rerp.fleet.documents import FleetStore

    _, parts = build(REDIS)
    assert isinstance(parts.fleet, FleetStore) and parts.origins.store is parts.fleet
    assert isinstance(parts.politeness.coordination, FleetCoordination)
    assert parts.politeness.parking is parts.lot


@pytest_twisted.ensureDeferred
async def test_a_closing_crawl_keeps_what_waits_for_the_resumed_job(tmp_path: Path) -> None:
    crawler, parts = build({"JOBDIR": str(tmp_path)})
    crawler.engine = crawler._create_engine()  # built, not opened: its slots are empty
    waiting = scrapy.Request("http://a.test/page")
    key = ParkingKey("http://a.test:80", Purpose.ROBOTS_TXT)
    assert parts.lot.park(key, waiting) is None
    # The middleware returned it: the engine offers it to the scheduler, and the lot keeps it.
    crawler.signals.send_catch_log(
        signals.request_scheduled, request=waiting, spider=crawler.spider, dont_log=IgnoreRequest
    )
    assert parts.politeness.cool_down("http://b.test:80", 60)

    await parts.spider_closed(crawler.spider)  # type: ignore[arg-type]

    saved = pickle.loads((tmp_path / JOB_FILE).read_bytes())  # noqa: S301 - written above
    assert [data["url"] for data in saved] == ["http://a.test/page"]
    cool_downs = json.loads((tmp_path / COOL_DOWN_FILE).read_text(encoding="utf-8"))
    assert list(cool_downs) == ["http://b.test:80"]
    assert time.time() + 50 < cool_downs["http://b.test:80"] <= time.time() + 60
    assert crawler.stats.get_value("robotstxt/persisted") == 1  # type: ignore[union-attr]
    # Closed: nothing more is parked.
    assert parts.lot.closed
    late = scrapy.Request("http://a.test/late")
    assert parts.lot.park(key, late) is DropReason.CRAWL_CLOSING


def test_the_stand_in_downloads_nothing() -> None:
    with pytest.raises(IgnoreRequest, match="settings are invalid"):
        Misconfigured().process_request(scrapy.Request("http://a.test/"))
