"""Crawl-delay floors on Scrapy's download slots: the one module that touches Scrapy's throttling.

Scrapy's throttling internals (``Downloader.slots``, ``Downloader.per_slot_settings``,
``Slot.delay``/``Slot.jitter``, the ``download_slot`` meta key) are being reworked upstream into
throttling scopes (scrapy/scrapy#6931), so everything that depends on them stays behind
:class:`SlotFloors`; what a floor is, and when an origin has one, is decided by the politeness
controller (:mod:`scrapy_rerp.core.politeness`). What differs between Scrapy releases (the slot's
clock, its jitter, a new slot's delay) is read through :mod:`scrapy_rerp.crawl.compat`.

How a floor holds:

* the floor is written to the live slot *and* to ``Downloader.per_slot_settings[key]`` so a slot
  dropped by the idle-slot garbage collector comes back with it;
* floored slots get no jitter: Scrapy draws each gap from ``delay * (1 ± jitter)``, which would
  let gaps fall below the floor;
* floored slots transfer one request at a time: Scrapy's delay timer counts from when a request
  left the queue, and could fire while that request is still in flight (a slow answer, a slow
  connection); the next request then waits for the answer, and the floor counts from it;
* AutoThrottle rewrites ``slot.delay`` on every response; this class re-clamps it in its own
  ``response_downloaded`` handler, connected by the downloader middleware and so after the
  extensions (AutoThrottle) and called after them;
* ``request_reached_downloader`` fires once the slot key is final (custom ``download_slot``
  keys included) and before the slot queue is processed: the floor is applied there to slots
  first seen for a floored origin.

A cool-down (a site that said "slow down" with ``Retry-After``) also takes back the requests of
its origin that wait in a slot's queue (:meth:`SlotFloors.take_back`): they have passed the
downloader middlewares and would otherwise be sent during the cool-down, while holding the
crawl's ``CONCURRENT_REQUESTS``. Each is removed from the queue and its download answered with
the request itself, which Scrapy's downloader then hands back to the engine as it does a
request returned by a downloader middleware.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.utils.httpobj import urlparse_cached

from scrapy_rerp.core import loggers
from scrapy_rerp.core.urls import origin_of, origin_of_parts
from scrapy_rerp.core.wording import duration
from scrapy_rerp.crawl.compat import (
    configured_jitter,
    engine_of,
    new_slot_delay,
    no_jitter,
    set_slot_jitter,
    slot_clock,
    slot_jitter,
    slot_latercall,
    stats_of,
)

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.core.downloader import Downloader, Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["SlotFloors"]

logger = logging.getLogger(loggers.POLITENESS)

_SLOT_META = "download_slot"

STAT_RECLAMPED = "robotstxt/crawl_delay/reclamped"


def _default_slot_key(origin: str) -> str:
    # Scrapy's default slot key is the lower-cased host name, without scheme or port.
    return urlsplit(origin).hostname or ""


#: Seconds before looking again at a slot that sends a request, or whose timer is due.
LOOK_AGAIN = 0.05


class SlotFloors:
    """Keep the downloader slots that serve an origin at or above its delay floor.

    Several origins can share one slot (Scrapy keys slots by host name, so ``http://h`` and
    ``https://h:8443`` share ``h``); a slot gets the largest floor among them.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.autothrottle: bool = crawler.settings.getbool("AUTOTHROTTLE_ENABLED")
        self.stats = stats_of(crawler)
        self._origin_floor: dict[str, float] = {}
        self._origin_keys: dict[str, set[str]] = {}
        self._key_origins: dict[str, set[str]] = {}
        self._key_floor: dict[str, float] = {}
        # The per_slot_settings entry a key had before it was floored (None: no entry).
        self._saved_slot_settings: dict[str, dict[str, Any] | None] = {}
        self._connected = False

    def _connect(self) -> None:
        # Connected on the first floor, so a crawl whose sites ask for none pays nothing per
        # request. Still after AutoThrottle's response_downloaded handler, which connects when
        # the extensions are built: signal handlers run in connection order.
        if self._connected:
            return
        self._connected = True
        self.crawler.signals.connect(
            self._request_reached_downloader, signal=signals.request_reached_downloader
        )
        self.crawler.signals.connect(self._response_downloaded, signal=signals.response_downloaded)

    # -- public API ----------------------------------------------------------------------------

    def apply_floor(self, origin: str, floor: float) -> None:
        """Keep the slots serving *origin* at least *floor* seconds apart.

        Call it before releasing requests that waited for robots.txt, so the first of them
        already respects the floor.
        """
        self._connect()
        self._origin_floor[origin] = floor
        keys = self._origin_keys.setdefault(origin, set())
        keys.add(_default_slot_key(origin))
        slots = self._downloader().slots
        now = slot_clock()
        for key in keys:
            self._key_origins.setdefault(key, set()).add(origin)
            self._apply(key)
            slot = slots.get(key)
            if slot is not None:
                # robots.txt has just been answered: count the floor from now, not from when
                # its request left the queue, so connection set-up time cannot shorten the gap
                # to the next request as the server sees it.
                slot.lastseen = max(slot.lastseen, now)
        logger.debug(
            "Crawl-delay floor %s for %s (slots %s)", duration(floor), origin, sorted(keys)
        )

    def clear_floor(self, origin: str) -> bool:
        """Drop the floor of *origin*; slots no other floored origin uses get their own back.
        False if it had none."""
        if self._origin_floor.pop(origin, None) is None:
            return False
        for key in self._origin_keys.pop(origin, set()):
            origins = self._key_origins.get(key)
            if origins is not None:
                origins.discard(origin)
                if not origins:
                    del self._key_origins[key]
            self._apply(key)
        return True

    def floored_origins(self) -> list[str]:
        """The origins that have a floor now."""
        return list(self._origin_floor)

    def floor_of(self, origin: str) -> float | None:
        """The floor currently applied for *origin*, if any."""
        return self._origin_floor.get(origin)

    def take_back(self, origin: str, keep: Callable[[Request], bool]) -> int:
        """Offer each request of *origin* waiting in a slot's queue (past the downloader
        middlewares, not sent yet) to *keep*; those it keeps leave the queue, and the
        downloader hands them back to the engine (see the module's docstring). Returns how many
        left."""
        if engine_of(self.crawler) is None:
            return 0
        taken: list[tuple[Request, Any]] = []
        for slot in list(self._downloader().slots.values()):
            if not slot.queue:
                continue
            staying: list[tuple[Request, Any]] = []
            for request, download in slot.queue:
                ours = origin_of_parts(urlparse_cached(request)) == origin and keep(request)
                (taken if ours else staying).append((request, download))
            if len(staying) != len(slot.queue):
                slot.queue.clear()
                slot.queue.extend(staying)
        # Answered once every queue is settled: with Twisted's own reactor the callback runs
        # the rest of the download at once, and the engine may schedule more meanwhile.
        for request, download in taken:
            download.callback(request)
        return len(taken)

    def ready_in(self, origin: str) -> float:
        """Seconds until a request of *origin* put in its slot now would leave it: 0 when at
        once (the slot is idle and its delay has passed since the last request left). While
        the slot still holds a request of its own the answer is its delay, and while it sends
        one (or its timer is due) the time left of its delay, at least :data:`LOOK_AGAIN`:
        estimates after which to look again."""
        if engine_of(self.crawler) is None:
            return 0.0
        slots = self._downloader().slots
        now = slot_clock()
        wait = 0.0
        for key in self._origin_keys.get(origin) or (_default_slot_key(origin),):
            slot = slots.get(key)
            if slot is None:
                continue  # a new slot sends at once (its delay counts from its first request)
            due = slot.lastseen + slot.delay - now  # the slot's delay since its last request
            if slot.queue:
                wait = max(wait, slot.delay, LOOK_AGAIN)
            elif slot.transferring or slot_latercall(slot):
                # Scrapy's timer fires once the delay has passed: until then, or a little
                # later when a busy event loop runs it late (waiting a whole delay then left
                # a fleet's origin idle for two floors, measured with bench_fleet.py).
                wait = max(wait, due, LOOK_AGAIN)
            else:
                wait = max(wait, due)
        return wait

    def slot_delay(self, request: Request) -> tuple[float, float] | None:
        """``(delay, jitter)`` of the live slot that served *request*, or None if it is gone.

        For tests and diagnostics: the slot key is the one the downloader stored in the meta.
        """
        key = request.meta.get(_SLOT_META)
        slot = self._downloader().slots.get(key) if key is not None else None
        if slot is None:
            return None
        return slot.delay, slot_jitter(slot)

    # -- slot handling -------------------------------------------------------------------------

    def _downloader(self) -> Downloader:
        assert self.crawler.engine is not None
        return self.crawler.engine.downloader

    def _apply(self, key: str) -> None:
        """Write the current floor of *key* (or its absence) to per_slot_settings and the slot."""
        downloader = self._downloader()
        per_slot = downloader.per_slot_settings
        floor = max((self._origin_floor[o] for o in self._key_origins.get(key, ())), default=0.0)
        if key not in self._saved_slot_settings:
            saved = per_slot.get(key)
            self._saved_slot_settings[key] = dict(saved) if saved is not None else None
        original = self._saved_slot_settings[key]
        base = float((original or {}).get("delay", new_slot_delay(self.crawler)))
        slot = downloader.slots.get(key)

        if floor <= 0:
            # No floored origin uses this slot any more: give it back its own settings.
            self._key_floor.pop(key, None)
            del self._saved_slot_settings[key]
            if original is None:
                per_slot.pop(key, None)
            else:
                per_slot[key] = original
            if slot is not None:
                set_slot_jitter(slot, configured_jitter(original, downloader))
                slot.concurrency = _configured_concurrency(original, downloader)
                if not self.autothrottle:
                    slot.delay = base
            return

        self._key_floor[key] = floor
        settings = dict(original or {})
        settings["delay"] = max(base, floor)
        settings["concurrency"] = 1
        no_jitter(settings)
        per_slot[key] = settings
        if slot is not None:
            set_slot_jitter(slot, 0.0)
            slot.concurrency = 1
            # AutoThrottle owns the delay above the floor; without it the slot runs at
            # max(its configured delay, floor), which also lowers it when a floor goes down.
            slot.delay = max(slot.delay, floor) if self.autothrottle else max(base, floor)

    def _clamp(self, key: str) -> tuple[Slot, bool] | None:
        """Raise the delay of *key*'s live slot to its floor, and take its jitter off: the slot
        and whether either changed, or None when *key* has no floor or no live slot."""
        floor = self._key_floor.get(key)
        slot = self._downloader().slots.get(key) if floor is not None else None
        if floor is None or slot is None:
            return None
        changed = slot.delay < floor or bool(slot_jitter(slot))
        slot.delay = max(slot.delay, floor)
        set_slot_jitter(slot, 0.0)
        return slot, changed

    # -- signal handlers -----------------------------------------------------------------------

    def _request_reached_downloader(self, request: Request, spider: Any = None) -> None:
        if not self._origin_floor:
            return
        key = request.meta.get(_SLOT_META)
        if key is None:
            return
        if key != urlparse_cached(request).hostname:
            # A custom slot key (download_slot meta, CONCURRENT_REQUESTS_PER_IP): learn which
            # origin it serves the first time it is seen with that origin.
            origin = origin_of(request.url)
            keys = self._origin_keys.get(origin)
            if keys is not None and key not in keys:
                keys.add(key)
                self._key_origins.setdefault(key, set()).add(origin)
                self._apply(key)
                self._inherit_lastseen(key, origin)
        self._clamp(key)

    def _inherit_lastseen(self, key: str, origin: str) -> None:
        """Start a newly mapped slot's delay from the origin's last request (robots.txt, say)
        on its default slot, so its first request is not sent right after that one."""
        slots = self._downloader().slots
        slot = slots.get(key)
        default = slots.get(_default_slot_key(origin))
        if slot is not None and default is not None and default.lastseen > slot.lastseen:
            slot.lastseen = default.lastseen

    def _response_downloaded(
        self, response: Response, request: Request, spider: Any = None
    ) -> None:
        # Runs after AutoThrottle's handler (extensions connect before downloader
        # middlewares), so whatever delay AutoThrottle just wrote is raised back to the floor,
        # and before the downloader looks at the slot queue again.
        if not self._key_floor:
            return
        key = request.meta.get(_SLOT_META)
        clamped = self._clamp(key) if key is not None else None
        if clamped is None:
            return
        slot, changed = clamped
        if changed:
            self.stats.inc_value(STAT_RECLAMPED)
        # Scrapy counts the delay from when a request leaves the queue; the server sees it
        # later, by the connection set-up time, which varies (a new connection, then a reused
        # one). Counting from the response as well keeps every gap the server sees >= floor.
        slot.lastseen = max(slot.lastseen, slot_clock())


def _configured_concurrency(slot_settings: dict[str, Any] | None, downloader: Downloader) -> int:
    """The concurrency Scrapy itself gives a slot with *slot_settings*."""
    default = downloader.ip_concurrency or downloader.domain_concurrency
    return int((slot_settings or {}).get("concurrency", default))
