"""What the robots.txt middleware is made of: built once, from the crawler and the validated
settings, and stopped in order when the crawl closes.

* :func:`origin_caches`: the cache requests read (``RERP_CACHE``), and a fleet's shared store
  behind it, or None when that store cannot start, or cannot run under the crawl's reactor
  (logged, and the crawl closes as the spider opens);
* :func:`assemble`: the :class:`Parts`: the parking lot, the politeness controller (alone, or
  a fleet worker's, joined on the shared store) on Scrapy's download slots, the resume store,
  the listener for new rules and the origin service with its transport and cache, and the
  robots.txt store (``RERP_STORE``: :func:`~scrapy_rerp.crawl.store.open_store`), closed when
  the spider closes, an origin service for each other document kind registered
  (:mod:`scrapy_rerp.crawl.documents`: tdmrep.json when ``RERP_USAGE`` reads TDMRep), and the
  evidence log (``RERP_EVIDENCE``:
  :class:`~scrapy_rerp.crawl.evidence.EvidenceLog`), its files stored when the spider closes;
* :class:`Misconfigured`: what Scrapy gets instead of the middleware when the settings are bad.

The parts are built in the order the middleware always built them: those that connect Scrapy
signal handlers as they are built connect them in that order, and handlers run in connection
order. The middleware binds what a request needs as its own attributes, once: nothing here is
on the per-request path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest
from scrapy.utils.misc import build_from_crawler, load_object

from scrapy_rerp.core import loggers
from scrapy_rerp.core.cache import FailoverCache, MemoryOriginCache
from scrapy_rerp.core.origins import OriginService
from scrapy_rerp.core.politeness import Politeness
from scrapy_rerp.core.settings import CLOSE_REASON, RerpSettingsError
from scrapy_rerp.crawl.compat import (
    ScrapyRuntime,
    asyncio_available,
    close_when_opened,
    stats_of,
)
from scrapy_rerp.crawl.documents import DocumentListener, registered_kinds
from scrapy_rerp.crawl.evidence import EvidenceLog
from scrapy_rerp.crawl.new_rules import RulesApplied
from scrapy_rerp.crawl.parking import ParkingLot
from scrapy_rerp.crawl.resume import ResumeStore
from scrapy_rerp.crawl.sitemaps import RobotsTxtForTheSpider, SitemapDiscovery
from scrapy_rerp.crawl.slots import SlotFloors
from scrapy_rerp.crawl.store import open_store
from scrapy_rerp.crawl.summary import CrawlSummary
from scrapy_rerp.crawl.transport import RobotsTxtDownloader
from scrapy_rerp.crawl.usage import UsagePolicy

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.cache import OriginCache
    from scrapy_rerp.core.crawl_store import CrawlStore
    from scrapy_rerp.core.documents import DocumentKind
    from scrapy_rerp.core.origins import Cache, RulesListener
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.fleet.documents import FleetStore
    from scrapy_rerp.fleet.store import SharedOriginCache

__all__ = ["Misconfigured", "Parts", "assemble", "origin_caches"]

logger = logging.getLogger(loggers.SETTINGS)


def origin_caches(
    crawler: Crawler, settings: RerpSettings
) -> tuple[OriginCache, SharedOriginCache | None] | None:
    """The cache the requests read, and the shared store behind it when ``RERP_CACHE`` names
    one (a fleet); None when that store cannot start (a setting it needs is bad, its client
    library is missing) or needs asyncio and the crawl's reactor has none: logged, as one
    ERROR line, and the crawl closes as the spider opens."""
    try:
        backend = build_from_crawler(load_object(settings.cache), crawler)
    except (RerpSettingsError, ImportError) as error:
        # e.g. RERP_REDIS_URL missing; the setting is named, as for any bad value.
        message = str(error)
        if not isinstance(error, RerpSettingsError):
            message = f"RERP_CACHE = {settings.cache!r} cannot start: {message}"
        logger.error("%s; the crawl stops before it starts", message, extra={"crawler": crawler})
        close_when_opened(crawler, CLOSE_REASON)
        return None
    if not getattr(backend, "is_shared", False):
        return backend, None
    if not asyncio_available():
        logger.error(
            "RERP_CACHE = %(cache)r is shared through asyncio, which needs Scrapy's "
            "asyncio reactor or no reactor at all (TWISTED_REACTOR_ENABLED = False), "
            "not TWISTED_REACTOR = %(reactor)r; the crawl stops before it starts",
            {"cache": settings.cache, "reactor": crawler.settings.get("TWISTED_REACTOR")},
            extra={"crawler": crawler},
        )
        close_when_opened(crawler, CLOSE_REASON)
        return None
    # A fleet's shared store is asked by the downloads only; requests read a local LRU in
    # front of it.
    return MemoryOriginCache(settings.cache_max_origins), backend


@dataclass(eq=False, kw_only=True)
class Parts:
    """The middleware's collaborators, and how they stop when the crawl closes."""

    lot: ParkingLot
    for_spider: RobotsTxtForTheSpider
    usage: UsagePolicy | None
    politeness: Politeness
    fleet: FleetStore | None
    resume: ResumeStore
    origins: OriginService
    stored: CrawlStore | None = None
    evidence: EvidenceLog | None = None
    summary: CrawlSummary | None = None  # the closing lines, held here
    # Each other registered document kind's service (tdmrep.json when TDMRep is read), and
    # where each kind persists (a fleet's sharing, or RERP_STORE's for a stored kind).
    documents: tuple[OriginService, ...] = ()
    document_stores: tuple[CrawlStore | FleetStore, ...] = ()

    def closing(self) -> None:
        """The engine has started to close: parked requests are kept for a resumed crawl or
        dropped, retries end."""
        if not self.lot.closed:
            # What waits in slots behind a floor joins the parked requests first, and is kept
            # or dropped with them: a closing crawl does not send it a floor apart.
            self.politeness.take_back_queued()
            self.lot.close(keep=self.resume.persists)
        for service in (self.origins, *self.documents):
            service.stop()
        self.politeness.stop()

    async def spider_closed(self, spider: Spider) -> None:
        """The crawl is over: what was parked is kept for a resumed crawl (with the running
        cool-downs), background refetches end, the fleet's connection closes."""
        self.closing()  # if the engine closed between two checks
        kept = self.lot.take_kept()
        if kept:
            self.resume.keep(kept)
        self.resume.keep_cool_downs(self.politeness.cool_down_ends())
        for service in (self.origins, *self.documents):
            service.cancel_all()  # background refetches end with the crawl
        self.for_spider.clear()
        for store in (*self.document_stores, self.stored):
            if store is not None and not store.fleet:
                store.close()
        if self.evidence is not None:
            await self.evidence.close()
        if self.fleet is not None:
            await self.politeness.finish()  # the last turns' ends reach Redis first
            for store in self.document_stores:
                if store.fleet:
                    await store.release_locks()
            await self.fleet.close()


def assemble(
    crawler: Crawler,
    settings: RerpSettings,
    cache: OriginCache,
    shared: SharedOriginCache | None,
    user_agent_for: Callable[[Request], str],
    kinds: list[DocumentKind] | None = None,
) -> Parts:
    """Build the middleware's collaborators on ``cache`` (and the fleet's ``shared`` store),
    matching robots.txt rules against ``user_agent_for(request)``, serving the document
    ``kinds`` (robots.txt first: :func:`~scrapy_rerp.crawl.documents.registered_kinds`)."""
    if kinds is None:
        kinds = registered_kinds(settings)
    stats = stats_of(crawler)

    def spider() -> Spider | None:
        return crawler.spider

    runtime = ScrapyRuntime()
    parts: Parts  # the lot calls closing() once the engine closes, long after this returns
    lot = ParkingLot(crawler, settings.max_parked_per_origin, on_closing=lambda: parts.closing())
    for_spider = RobotsTxtForTheSpider(stats)
    summary = CrawlSummary(crawler)  # the closing lines (docs/logging.rst)
    usage = UsagePolicy(crawler, settings, summary) if settings.usage else None
    throttle = SlotFloors(crawler) if settings.floors or settings.slowdown else None
    delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
    fleet: FleetStore | None = None
    if shared is None:
        politeness = Politeness(
            settings, delay, throttle, stats=stats, parking=lot, runtime=runtime, spider=spider
        )
    else:
        from scrapy_rerp import fleet as fleet_module

        fleet, politeness = fleet_module.join(
            shared, settings, stats, runtime, lot, throttle, delay, spider
        )
    resume = ResumeStore(crawler, politeness.cool_down)
    sitemaps = SitemapDiscovery.from_crawler(crawler, settings)
    stored = open_store(crawler, settings) if fleet is None else None
    evidence = None
    if settings.evidence is not None:  # it hears what the layer decides (scrapy_rerp.signals)
        evidence = EvidenceLog(crawler, settings, "store" if fleet is None else "fleet")
    applied = RulesApplied(
        crawler, politeness, sitemaps, for_spider=for_spider, user_agent_for=user_agent_for
    )

    def forget(origin: str) -> None:  # an origin left the cache
        applied.forget(origin)
        origins.forget(origin)

    def forget_all() -> None:  # the cache backend failed: an empty one took over
        applied.forget_all()
        origins.forget_all()

    def service(
        kind: DocumentKind,
        cache: Cache,
        listener: RulesListener,
        store: CrawlStore | FleetStore | None,
    ) -> OriginService:
        return OriginService(
            settings,
            cache,
            RobotsTxtDownloader(crawler, settings, kind),
            waiters=lot,
            listener=listener,
            runtime=runtime,
            stats=stats,
            store=store,
            spider=spider,
            kind=kind,
        )

    failover = FailoverCache(
        cache,
        settings.cache_max_origins,
        stats=stats,
        on_evicted=forget,
        on_failover=forget_all,
        spider=spider,
    )
    origins = service(kinds[0], failover, applied, fleet if fleet is not None else stored)
    services: list[OriginService] = []
    stores: list[CrawlStore | FleetStore] = []
    for kind in kinds[1:]:
        store: CrawlStore | FleetStore | None = None
        if fleet is not None:
            store = fleet.for_kind(kind)
        elif stored is not None and kind.stored:
            store = stored.for_kind(kind)
        if store is not None:
            stores.append(store)
        listener = DocumentListener(
            crawler, politeness, kind, max_origins=settings.cache_max_origins
        )
        # In memory, whatever RERP_CACHE says: the cache backends keep robots.txt, and a fleet
        # shares the other kinds through Redis as it does robots.txt.
        services.append(
            service(kind, MemoryOriginCache(settings.cache_max_origins), listener, store)
        )
    parts = Parts(
        lot=lot,
        for_spider=for_spider,
        usage=usage,
        politeness=politeness,
        fleet=fleet,
        resume=resume,
        origins=origins,
        stored=stored,
        evidence=evidence,
        summary=summary,
        documents=tuple(services),
        document_stores=tuple(stores),
    )
    return parts


class Misconfigured:
    """Stands in for the middleware when a setting is bad (:func:`settings_for` logged it), or
    the shared cache cannot run under the crawl's reactor: Scrapy closes the spider as it
    opens, and should a request come before, it is not downloaded."""

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        raise IgnoreRequest(f"scrapy_rerp settings are invalid ({CLOSE_REASON})")

    def __repr__(self) -> str:
        return "<scrapy_rerp.RobotsTxtMiddleware: invalid settings>"
