"""The parking lot: requests that wait for their origin's robots.txt, outside the downloader.

A request waiting inside a downloader middleware's ``process_request`` stays in
``Downloader.active`` and counts against ``CONCURRENT_REQUESTS``: a few dead origins would stall
a broad crawl, and closing would wait for every held request. Scrapy has no verb for "take this
request out of the downloader for now", so the lot uses two documented ones:

* **out**: the middleware's ``process_request`` returns the request itself. The downloader lets go
  of it at once (no other middleware's ``process_response`` runs, nothing reaches a slot) and the
  engine hands it to ``engine.crawl``, whose ``request_scheduled`` signal the lot answers with
  ``IgnoreRequest`` for a parked request: scheduling stops there, silently (no errback, no
  ``request_dropped``), and the request is kept here;
* **back in**: ``engine.crawl`` again, with ``dont_filter`` set for the trip, since the scheduler's
  dupefilter has seen the request once already; the middleware restores the request's own
  ``dont_filter`` when it comes back through ``process_request``. Priority, meta, callbacks and
  the request object itself are kept.

A request that must finally be dropped goes back in the same way, marked, and
:meth:`ParkingLot.handed_back` raises ``IgnoreRequest`` for it when it reaches the middleware:
the spider's errback sees what it saw before parking existed.
While requests are parked a ``spider_idle`` handler keeps the crawl open (``DontCloseSpider``);
the engine checks again on its heartbeat or as soon as a request is handed back, so nothing spins.

A request that does not come from the scheduler (``engine.download_async``: media pipelines,
extensions) is downloaded again at once when returned: it comes back while still parked
(:meth:`ParkingLot.came_back`) and then waits in place (:meth:`ParkingLot.wait_in_place`).

When the engine starts closing (checked every :data:`CLOSING_CHECK_INTERVAL` seconds from the
first parking on: Scrapy sends no signal when closing starts), :meth:`ParkingLot.close` drops the
requests waiting in place and, where the crawl can be resumed, keeps the others for
:mod:`scrapy_rerp.crawl.resume`; elsewhere it drops them too ("crawl closing").

The ledger: ``robotstxt/parked`` counts the requests parked, each once; ``robotstxt/reparked``
the parkings of a request parked before (released, it was held again: a cool-down, rules being
refetched). Every parking ends in exactly one of ``robotstxt/released``, ``robotstxt/persisted``
or ``robotstxt/dropped/<reason>``: parked + reparked = released + persisted + dropped.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from scrapy_rerp.core import loggers
from scrapy_rerp.core.admission import DropReason, ParkingKey
from scrapy_rerp.core.wording import counted
from scrapy_rerp.crawl.compat import ScrapyRuntime, engine_closing, engine_of, stats_of

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_rerp.core.runtime import Task

__all__ = ["ParkingLot", "prepare_for_return"]

logger = logging.getLogger(loggers.ROBOTSTXT)

#: Seconds between checks for a closing engine while requests are parked (or wait in slots
#: behind a floor: :meth:`ParkingLot.watch_closing`).
CLOSING_CHECK_INTERVAL = 0.2

_DROP_META = "_rerp_drop"  # the IgnoreRequest message of a request handed back to be dropped
_DONT_FILTER_META = "_rerp_dont_filter"  # the request's own dont_filter, during a trip back in
_WAITED_META = "_rerp_waited"  # seconds a released request was parked, until the gate reads it
_PARKED_META = "_rerp_parked"  # set at a request's first parking: any later one is a re-park

STAT_PARKED = "robotstxt/parked"
STAT_REPARKED = "robotstxt/reparked"


@dataclass(eq=False, kw_only=True)
class _Spot:
    key: ParkingKey  # what it waits for, and its origin
    out: bool = False  # the engine has let go of it (request_scheduled was refused)
    pending: str | None = None  # "release", or a drop message, decided before it was out
    waiter: Deferred[str] | None = None  # it waits in place: fired with "release" or a message
    since: float = field(default_factory=time.monotonic)


_RELEASE = "release"
_KEEP = "keep"  # parked when the crawl closed, to be kept for the resumed crawl


def prepare_for_return(request: Request) -> None:
    """Let a parked request past the dupefilter, which has seen it once, on its way back to the
    scheduler; :meth:`ParkingLot.handed_back` undoes this when it reaches the middleware."""
    if not request.dont_filter:
        request.meta[_DONT_FILTER_META] = False
        request.dont_filter = True


class ParkingLot:
    """Requests parked per key (their origin, and what they wait for: a
    :class:`~scrapy_rerp.core.admission.ParkingKey`), with a ledger in the crawl's stats."""

    def __init__(self, crawler: Crawler, max_per_key: int, on_closing: Callable[[], None]) -> None:
        self.crawler = crawler
        self.max_per_key = max_per_key  # RERP_MAX_PARKED_PER_ORIGIN
        self.stats = stats_of(crawler)
        self._on_closing = on_closing
        self._spots: dict[Request, _Spot] = {}
        self._by_key: dict[ParkingKey, list[Request]] = {}
        self.closed = False  # set once, by close()
        self._kept: list[Request] = []  # parked when the crawl closed, for the resumed crawl
        self._watch: Task | None = None  # the closing watch
        self._listening = False  # to request_scheduled (see _listen)
        crawler.signals.connect(self._spider_idle, signal=signals.spider_idle)

    # -- what is parked ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._spots)

    def count(self, key: ParkingKey) -> int:
        return len(self._by_key.get(key, ()))

    def counts(self) -> dict[ParkingKey, int]:
        """Keys with parked requests, and how many each."""
        return {key: len(requests) for key, requests in self._by_key.items()}

    # -- parking -------------------------------------------------------------------------------
    def park(self, key: ParkingKey, request: Request) -> DropReason | None:
        """Park ``request`` under ``key``; the caller returns it from ``process_request``.

        Returns None when parked, or the reason it cannot be (the lot is closed, or ``key`` has
        ``max_per_key`` requests parked): the caller drops it. Either way it is counted
        in ``robotstxt/parked`` (``robotstxt/reparked`` when it was parked before) and, when
        refused, in ``robotstxt/dropped/<reason>``.
        """
        self._count_parking(request)
        if self.closed:
            self.stats.inc_value(DropReason.CRAWL_CLOSING.stat)
            return DropReason.CRAWL_CLOSING
        waiting = self._by_key.setdefault(key, [])
        if len(waiting) >= self.max_per_key:
            self.stats.inc_value(DropReason.PARK_LIMIT.stat)
            return DropReason.PARK_LIMIT
        waiting.append(request)
        self._spots[request] = _Spot(key=key)
        self._listen()
        self.watch_closing()
        return None

    def handed_back(self, request: Request) -> None:
        """Every request the middleware decides: one the lot handed back gets its own
        ``dont_filter`` again, and one handed back to be dropped raises ``IgnoreRequest``."""
        meta = request.meta
        if _DONT_FILTER_META in meta:
            request.dont_filter = meta.pop(_DONT_FILTER_META)
        message = meta.pop(_DROP_META, None)
        if message is not None:
            self._drop_now(request, message)

    @staticmethod
    def waited(request: Request) -> float | None:
        """The seconds ``request`` was last parked, once it goes on (None if it was not)."""
        return request.meta.pop(_WAITED_META, None)

    def drop_refused(self, key: ParkingKey, request: Request, refused: DropReason) -> NoReturn:
        """Drop a request that :meth:`park` refused (``refused`` is its reason) while it waited
        for its origin's robots.txt (``key``): ``IgnoreRequest``, with a warning at the limit."""
        origin = key.origin
        if refused is DropReason.PARK_LIMIT:
            logger.warning(
                "Dropped %(request)s: %(max)d requests of %(origin)s already wait for its "
                "robots.txt (RERP_MAX_PARKED_PER_ORIGIN)",
                {"request": request, "max": self.max_per_key, "origin": origin},
                extra={"spider": self.crawler.spider},
            )
            raise IgnoreRequest(f"too many requests wait for robots.txt of {origin}")
        raise IgnoreRequest("crawl closing")

    def came_back(self, request: Request) -> bool:
        """True when ``request`` is parked and the engine offers it for download again without
        scheduling it: it comes from ``engine.download_async`` (media pipelines, extensions),
        which downloads a request returned by ``process_request`` again at once. Such a request
        must wait in place (:meth:`wait_in_place`)."""
        return request in self._spots

    async def wait_in_place(self, request: Request) -> None:
        """Wait, inside ``process_request``, until the parked ``request`` is released, or
        dropped (``IgnoreRequest``). It holds one of the crawl's ``CONCURRENT_REQUESTS``
        meanwhile, as any download does; nothing else can wait for a request the scheduler
        never saw."""
        spot = self._spots[request]
        if spot.pending is None:
            spot.waiter = Deferred()
            self.stats.inc_value("robotstxt/waited_in_place")
            action = await maybe_deferred_to_future(spot.waiter)
        else:  # released or dropped before it came back
            del self._spots[request]
            action = spot.pending
        if action is _KEEP:
            # Kept as a resumable crawl closed, but the scheduler never saw it (a media
            # pipeline's download): nothing can keep it for the resumed crawl.
            self.stats.inc_value(DropReason.CRAWL_CLOSING.stat)
            action = "crawl closing"
        if action != _RELEASE:
            self._drop_now(request, action)

    def _drop_now(self, request: Request, message: str) -> NoReturn:
        logger.debug(
            "Dropped %(request)s: %(message)s",
            {"request": request, "message": message},
            extra={"spider": self.crawler.spider},
        )
        raise IgnoreRequest(message)

    def count_dropped_at_once(self, reason: DropReason, request: Request) -> None:
        """A request with no usable rules dropped without parking (its origin's outage is past
        the limit): parked and dropped in one step, for the ledger."""
        self._count_parking(request)
        self.stats.inc_value(reason.stat)

    def _count_parking(self, request: Request) -> None:
        meta = request.meta
        if _PARKED_META in meta:
            self.stats.inc_value(STAT_REPARKED)
        else:
            meta[_PARKED_META] = True
            self.stats.inc_value(STAT_PARKED)

    def release(self, key: ParkingKey) -> int:
        """Hand every request parked under ``key`` back to the engine; returns how many."""
        return self._leave(key, _RELEASE, "robotstxt/released")

    def drop(self, key: ParkingKey, reason: DropReason, message: str) -> int:
        """Hand every request parked under ``key`` back to be dropped with
        ``IgnoreRequest(message)``, counted in ``reason``'s stat; returns how many."""
        return self._leave(key, message, reason.stat)

    def release_one(self, key: ParkingKey) -> bool:
        """Hand the longest-parked request under ``key`` back; False if none was parked."""
        waiting = self._by_key.get(key)
        if not waiting:
            return False
        request = waiting.pop(0)
        if not waiting:
            del self._by_key[key]
        self._leave_one(request, _RELEASE, "robotstxt/released")
        self._quiet_if_empty()
        return True

    def _leave(self, key: ParkingKey, action: str, stat: str) -> int:
        requests = self._by_key.pop(key, [])
        for request in requests:
            self._leave_one(request, action, stat)
        self._quiet_if_empty()
        return len(requests)

    def _leave_one(self, request: Request, action: str, stat: str) -> None:
        spot = self._spots[request]
        self.stats.inc_value(stat)
        if action == _RELEASE:
            request.meta[_WAITED_META] = time.monotonic() - spot.since
        if spot.waiter is not None:
            del self._spots[request]
            spot.waiter.callback(action)
        elif spot.out:
            del self._spots[request]
            self._prepare(request, action)
            engine = engine_of(self.crawler)
            # None, or no spider: closed meanwhile (counted already), nothing can take it.
            if engine is not None and engine.spider is not None:
                engine.crawl(request)
        else:
            # Still on its way out of the downloader: done when the engine offers it.
            spot.pending = action

    def close(self, keep: bool) -> None:
        """The crawl is closing: nothing is handed back any more.

        Requests waiting in place are dropped now (the engine waits for them before it closes).
        With ``keep`` (the crawl can be resumed: JOBDIR, a persistent scheduler), the others
        stay for :meth:`take_kept`, called when the spider has closed; without it they are
        dropped now, each signalled with ``request_dropped`` and named in the log at DEBUG,
        their number per origin at WARNING.
        """
        if self.closed:
            return
        self.closed = True
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        dropped: list[tuple[ParkingKey, Request]] = []
        for request, spot in list(self._spots.items()):
            if spot.pending is not None:
                continue  # released or dropped already, on its way back: counted
            if spot.waiter is None and keep:
                if spot.out:
                    del self._spots[request]
                    self._kept.append(request)
                else:
                    spot.pending = _KEEP  # taken when the engine offers it (_request_scheduled)
                continue
            del self._spots[request]
            self.stats.inc_value(DropReason.CRAWL_CLOSING.stat)
            dropped.append((spot.key, request))
            if spot.waiter is not None:
                spot.waiter.callback("crawl closing")
            else:
                self.crawler.signals.send_catch_log(
                    signal=signals.request_dropped, request=request, spider=self.crawler.spider
                )
        self._by_key.clear()
        if dropped:
            self._log_dropped(dropped)

    def take_kept(self) -> list[Request]:
        """The requests kept at :meth:`close`, for the resumed crawl (the lot forgets them)."""
        kept, self._kept = self._kept, []
        return kept

    def _log_dropped(self, dropped: list[tuple[ParkingKey, Request]]) -> None:
        """One WARNING per thing the dropped requests waited for, with their origins."""
        waiting: dict[str, dict[str, int]] = {}
        for key, _ in dropped:
            held = waiting.setdefault(key.purpose.waiting_for, {})
            held[key.origin] = held.get(key.origin, 0) + 1
        spider = self.crawler.spider
        for what, held in waiting.items():
            shown = ", ".join(f"{o} ({n})" for o, n in list(held.items())[:10])
            more = f" and {len(held) - 10} more" if len(held) > 10 else ""
            logger.warning(
                "Crawl closing: dropped %(n)s still waiting for %(what)s of "
                "%(origins)s: %(shown)s%(more)s",
                {
                    "n": counted(sum(held.values()), "request"),
                    "what": what,
                    "origins": counted(len(held), "origin"),
                    "shown": shown,
                    "more": more,
                },
                extra={"spider": spider},
            )
        if logger.isEnabledFor(logging.DEBUG):
            for _, request in dropped:
                logger.debug(
                    "Crawl closing: dropped %(request)s",
                    {"request": request},
                    extra={"spider": spider},
                )

    @staticmethod
    def _prepare(request: Request, action: str) -> None:
        if action != _RELEASE:
            request.meta[_DROP_META] = action
        prepare_for_return(request)

    # -- signal handlers -----------------------------------------------------------------------
    def _listen(self) -> None:
        # request_scheduled is sent for every request of the crawl: the handler is connected
        # only while requests are parked, so that a crawl pays for it only then (a receiver
        # costs Scrapy's dispatcher a signature inspection per request).
        if not self._listening:
            self._listening = True
            self.crawler.signals.connect(self._request_scheduled, signal=signals.request_scheduled)

    def _quiet_if_empty(self) -> None:
        # Never called from the handler itself: disconnecting during a dispatch could make the
        # dispatcher skip the next receiver.
        if self._listening and not self._spots:
            self._listening = False
            self.crawler.signals.disconnect(
                self._request_scheduled, signal=signals.request_scheduled
            )

    def _request_scheduled(self, request: Request, spider: Any = None) -> None:
        spot = self._spots.get(request)
        if spot is None:
            return
        if spot.pending is None:
            spot.out = True
            raise IgnoreRequest("parked until robots.txt of its origin is known")
        del self._spots[request]
        if spot.pending is _KEEP:
            # Parked as the crawl closed: kept for the resumed crawl, not scheduled.
            self._kept.append(request)
            raise IgnoreRequest("kept for the resumed crawl")
        # Released or dropped before the engine let go of it: let this scheduling through.
        self._prepare(request, spot.pending)

    def _spider_idle(self, spider: Any = None) -> None:
        if self._spots:
            raise DontCloseSpider

    # -- noticing that the crawl is closing ----------------------------------------------------
    def watch_closing(self) -> None:
        """Notice when the engine starts to close from now on, though nothing is parked:
        requests wait in download slots behind a floor, to be taken back then."""
        # Started with the first parked request (or the first floor) and kept until the lot
        # closes: starting and stopping it as the lot empties and fills would make a task each
        # time.
        if self._watch is None and not self.closed:
            self._watch = ScrapyRuntime().every(CLOSING_CHECK_INTERVAL, self._check_closing)

    def _check_closing(self) -> None:
        if engine_closing(self.crawler):
            self._on_closing()
