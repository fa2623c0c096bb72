"""A fleet of workers sharing robots.txt and Crawl-delay through Redis.

``RERP_CACHE = "scrapy_rerp.cache.RedisOriginCache"`` turns it on (docs/fleet.rst). The parts:

* :mod:`~scrapy_rerp.fleet.store`: the Redis calls (``RedisOriginCache``: hashes, the download
  lock, the Crawl-delay turn, all on Redis's clock);
* :mod:`~scrapy_rerp.fleet.codec`: an origin's entry as a Redis hash, and its format version;
* :mod:`~scrapy_rerp.fleet.bounds`: what a worker takes from such a hash (its settings' bounds);
* :mod:`~scrapy_rerp.fleet.guard`: what a worker does when Redis fails (goes on alone);
* :mod:`~scrapy_rerp.fleet.documents`: one robots.txt download per origin for the fleet;
* :mod:`~scrapy_rerp.fleet.delay`: the Crawl-delay turn that all workers together keep, and
  the slow-downs (cool-downs, raised floors) they share.

Nothing here imports Scrapy; redis-py (the ``redis`` extra) is imported when a store is built.
:func:`join` builds one worker's side of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy_rerp.core.politeness import Politeness
from scrapy_rerp.fleet.delay import FleetCoordination, SharedDelay
from scrapy_rerp.fleet.documents import FleetStore
from scrapy_rerp.fleet.guard import RedisGuard

if TYPE_CHECKING:
    from scrapy_rerp.core.admission import Parking, Throttle
    from scrapy_rerp.core.runtime import Runtime, Stats
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.fleet.store import SharedOriginCache

__all__ = ["join"]


def join(
    store: SharedOriginCache,
    settings: RerpSettings,
    stats: Stats,
    runtime: Runtime,
    parking: Parking,
    throttle: Throttle | None,
    download_delay: float,
    spider: Callable[[], Any] = lambda: None,
) -> tuple[FleetStore, Politeness]:
    """One worker's side of the fleet: its shared robots.txt and its politeness (the local
    controller, coordinated with the fleet), on one store and one account of Redis's health."""
    guard = RedisGuard(store.url, stats, spider=spider)
    rules = FleetStore(store, guard, settings, stats=stats, sleep=runtime.sleep)
    politeness = Politeness(
        settings,
        download_delay,
        throttle,
        stats=stats,
        parking=parking,
        runtime=runtime,
        spider=spider,
    )
    politeness.coordinate_with(
        FleetCoordination(
            politeness,
            SharedDelay(store, guard, stats=stats, sleep=runtime.sleep),
            parking,
            runtime=runtime,
            settings=settings,
            stats=stats,
            spider=spider,
        )
    )
    return rules, politeness
