"""A fleet of workers sharing robots.txt and Crawl-delay through a shared cache (Redis).

:class:`Fleet` sits between the origin fetcher and the shared store
(:class:`scrapy_rerp._redis.RedisOriginCache`):

* before a worker downloads robots.txt it asks :meth:`Fleet.turn`: the entry another worker
  stored (parsed again from its body), or the download lock (this worker downloads, then
  :meth:`Fleet.publish` stores the result and releases the lock), or, while another worker holds
  the lock, a wait for its result. An outage is shared too: a dead origin is retried by one
  worker at the backoff rate, not by each;
* :class:`DelayGate` makes every download of a floored origin (Crawl-delay, Request-rate) take
  its turn on the fleet's clock first. A turn is taken by the worker about to send (``SET NX
  PX`` on Redis's clock) and lasts until that request is answered, then the floor: the next
  request of any worker reaches the site at least a floor after the previous one's answer,
  however late the previous one left its worker. Two simpler schemes were measured first with
  ``benchmarks/bench_fleet.py`` (three workers on two busy cores, Crawl-delay 0.5 s): reserving
  the next free time ahead and sleeping until then (a late wake-up let the next worker's
  request follow 0.31 s after), and a turn of one floor from the moment it was taken (a request
  that sat 0.4 s in its busy worker after taking its turn arrived 0.12 s before the next one).

Redis down or slow: one WARNING, then each worker carries on alone (its own downloads, its
local cache and local floors) and says so once Redis answers again. Stats:
``robotstxt/redis/errors`` (failed calls), ``robotstxt/redis/fallback`` (decisions taken alone),
``robotstxt/redis/shared`` (entries taken from another worker), ``robotstxt/redis/lock_waits``
(downloads waited for), ``robotstxt/redis/round_trips`` (calls sent, set at close).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from scrapy import signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.asyncio import create_looping_call, sleep
from scrapy.utils.defer import deferred_from_coro

from scrapy_rerp._body import Body
from scrapy_rerp._policy import ALLOW_ALL, DISALLOW_ALL, PARSED, UNREACHABLE
from scrapy_rerp._redis import RedisUnavailable, fields_of
from scrapy_rerp.cache import RobotsEntry
from scrapy_rerp.engine import RobotsTxt

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from scrapy_rerp._fetcher import Fetched
    from scrapy_rerp._parking import ParkingLot
    from scrapy_rerp._settings import RerpSettings
    from scrapy_rerp.cache import SharedOriginCache

__all__ = ["TURN_META", "DelayGate", "Fleet", "Turn"]

#: Request.meta key of a request that holds its origin's turn: (origin, floor, turn id).
TURN_META = "_rerp_turn"

logger = logging.getLogger("scrapy_rerp.middleware")

_T = TypeVar("_T")

#: How long a worker waits between two looks at an origin another worker is downloading.
POLL_FIRST, POLL_MAX = 0.05, 0.5
#: A turn lasts until its request is answered, then the floor: at most this many floors if the
#: answer never comes (a failed download), so that a lost worker blocks no origin for long.
TURN_HOLD = 2.0
#: A stale copy taken from the fleet while another worker refreshes it is used this long
#: before looking again.
STALE_RECHECK = 1.0


@dataclass
class Turn:
    """What :meth:`Fleet.turn` decided for one robots.txt download."""

    entry: RobotsEntry | None = None  # taken from the fleet: no download here
    download: bool = False  # this worker downloads (holding the lock unless Redis is down)
    locked: bool = False
    previous: RobotsEntry | None = None  # the fleet's expired copy, if any


class Fleet:
    """One worker's side of the shared store."""

    def __init__(self, crawler: Crawler, settings: RerpSettings, store: SharedOriginCache) -> None:
        self.crawler = crawler
        self.settings = settings
        self.store = store
        self.stats: StatsCollector = crawler.stats  # type: ignore[assignment]
        self._down = False

    # -- Redis calls that may fail -------------------------------------------------------------
    def _failed(self, exc: RedisUnavailable) -> None:
        self.stats.inc_value("robotstxt/redis/errors")
        self.stats.inc_value("robotstxt/redis/fallback")
        if not self._down:
            self._down = True
            logger.warning(
                "Redis at %(url)s is unavailable (%(exc)s): this worker goes on alone with its "
                "own robots.txt downloads, cache and Crawl-delay until Redis answers again",
                {"url": self.store.url, "exc": exc},
                extra={"spider": self.crawler.spider},
            )

    def _answered(self) -> None:
        if self._down:
            self._down = False
            logger.warning(
                "Redis at %(url)s answers again: robots.txt and Crawl-delay are shared again",
                {"url": self.store.url},
                extra={"spider": self.crawler.spider},
            )

    async def _try(self, call: Callable[[], Awaitable[_T]]) -> tuple[bool, _T | None]:
        try:
            result = await call()
        except RedisUnavailable as exc:
            self._failed(exc)
            return False, None
        self._answered()
        return True, result

    # -- robots.txt ----------------------------------------------------------------------------
    async def turn(self, origin: str) -> Turn:
        """Take the fleet's entry for ``origin``, or the right to download it."""
        poll = POLL_FIRST
        waited = False
        while True:
            ok, found = await self._try(lambda: self._look(origin))
            if not ok:
                return Turn(download=True)
            assert found is not None
            if found.entry is not None or found.download:
                return found
            if not waited:
                waited = True
                self.stats.inc_value("robotstxt/redis/lock_waits")
            await sleep(poll)
            poll = min(2 * poll, POLL_MAX)

    async def _look(self, origin: str) -> Turn:
        stored = await self._load(origin)
        if stored is not None and not stored.expired():
            self.stats.inc_value("robotstxt/redis/shared")
            return Turn(entry=stored)
        if await self.store.lock(origin):
            # Another worker may have stored its result between the two calls.
            again = await self._load(origin)
            if again is not None and not again.expired():
                await self.store.unlock(origin)
                self.stats.inc_value("robotstxt/redis/shared")
                return Turn(entry=again)
            return Turn(download=True, locked=True, previous=again)
        if stored is not None and stored.robots is not None:
            # Expired, and another worker refreshes it: its rules serve meanwhile.
            self.stats.inc_value("robotstxt/redis/shared")
            return Turn(entry=stored.with_(expires_at=time.time() + STALE_RECHECK))
        return Turn()  # wait for the worker that holds the lock

    async def _load(self, origin: str) -> RobotsEntry | None:
        fields = await self.store.load(origin)
        return None if fields is None else self.entry_from(fields)

    async def publish(
        self, origin: str, entry: RobotsEntry, fetched: Fetched | None, locked: bool
    ) -> None:
        """Store this worker's result for the fleet, and release the download lock."""

        async def store() -> None:
            await self.store.store(
                origin, self.fields_of(entry, fetched), entry.expires_at - time.time()
            )
            if locked:
                await self.store.unlock(origin)

        await self._try(store)

    def fields_of(self, entry: RobotsEntry, fetched: Fetched | None) -> dict[bytes, bytes]:
        body = fetched.body if fetched is not None and entry.outcome == PARSED else None
        charset = fetched.charset if fetched is not None else None
        return fields_of(
            {
                "syntax": self.settings.syntax_name,
                "outcome": entry.outcome,
                "body": body,
                "charset": charset,
                "status": entry.status,
                "url": entry.url,
                "fetched_at": repr(entry.fetched_at),
                "expires_at": repr(entry.expires_at),
                "failures": entry.failures,
                "outage_since": None if entry.outage_since is None else repr(entry.outage_since),
            }
        )

    def entry_from(self, fields: dict[bytes, bytes]) -> RobotsEntry | None:
        """The entry a stored hash describes, its body parsed again; None if unusable."""
        try:
            if fields[b"syntax"].decode() != self.settings.syntax_name:
                return None  # a fleet member with another RERP_SYNTAX: not the same rules
            outcome = fields[b"outcome"].decode()
            syntax = self.settings.syntax
            robots: RobotsTxt | None
            if outcome == PARSED:
                charset = fields.get(b"charset")
                body = Body(
                    fields.get(b"body", b"")[: self.settings.max_size],
                    charset.decode() if charset else None,
                    truncated=False,
                )
                robots = body.rules(syntax)  # as the worker that downloaded it read it
            elif outcome == ALLOW_ALL:
                robots = RobotsTxt.allow_all(syntax)
            elif outcome == DISALLOW_ALL:
                robots = RobotsTxt.disallow_all(syntax)
            elif outcome == UNREACHABLE:
                robots = None
            else:
                return None
            status = fields.get(b"status")
            url = fields.get(b"url")
            outage_since = fields.get(b"outage_since")
            return RobotsEntry(
                robots=robots,
                fetched_at=float(fields[b"fetched_at"]),
                expires_at=float(fields[b"expires_at"]),
                status=int(status) if status else None,
                url=url.decode("utf-8", "replace") if url else None,
                outcome=outcome,
                failures=int(fields.get(b"failures", b"0")),
                outage_since=float(outage_since) if outage_since else None,
            )
        except (KeyError, ValueError, LookupError):
            self.stats.inc_value("robotstxt/redis/unreadable")
            return None

    # -- Crawl-delay ---------------------------------------------------------------------------
    async def wait_for_turn(self, origin: str, delay: float) -> bytes | None:
        """Wait until this worker holds the turn of ``origin``: returns the turn's id, to be
        ended with :meth:`turn_done` when the request is answered, or None when Redis is down
        (the local floor alone applies)."""
        while True:
            ok, answer = await self._try(
                lambda: self.store.take_turn(origin, delay, TURN_HOLD * delay)
            )
            if not ok or answer is None:
                return None
            wait, turn = answer
            if not wait:
                self.stats.inc_value("robotstxt/redis/turns")
                return turn
            if wait > delay:
                # The holder's request is not answered yet; once it is, the turn ends a floor
                # later: look again soon rather than at the longest the turn may last.
                wait = min(wait - delay, max(0.02, delay / 10))
            await sleep(wait)

    async def turn_done(self, origin: str, delay: float, turn: bytes) -> None:
        await self._try(lambda: self.store.turn_done(origin, delay, turn))

    async def first_turn(self, origin: str, delay: float) -> None:
        """The robots.txt answer just arrived: it is the origin's first request on the fleet's
        clock, so the first page waits ``delay`` after it."""
        # A turn held for just the floor: the answer is already in.
        await self._try(lambda: self.store.take_turn(origin, delay, delay))

    async def close(self) -> None:
        self.stats.set_value("robotstxt/redis/round_trips", self.store.round_trips)
        await self.store.close()


class DelayGate:
    """Downloads of a floored origin take their turn on the fleet's clock, one at a time.

    Per origin, one request (the head) waits in ``process_request`` until it gets the turn,
    holding one of the worker's ``CONCURRENT_REQUESTS`` meanwhile; the others are
    parked (no concurrency held) and released one by one as the head goes. The worker's local
    floor on the slot still applies on top (and alone while Redis is down).
    """

    #: Seconds between looks for parked requests whose origin has no request waiting for its
    #: turn in this worker (see :meth:`_kick`).
    KICK_INTERVAL = 0.5

    def __init__(self, fleet: Fleet, lot: ParkingLot) -> None:
        self.fleet = fleet
        self.lot = lot
        fleet.crawler.signals.connect(self._response_downloaded, signal=signals.response_downloaded)
        self._busy: set[str] = set()
        self._parked: set[str] = set()  # origins with requests parked here
        self._kicker: Any = None

    @staticmethod
    def key(origin: str) -> str:
        return f"{origin} (Crawl-delay)"

    def admit(self, origin: str, request: Request, floor: float) -> Request | Awaitable[None]:
        """The request itself (parked: return it from process_request) or an awaitable that
        ends at its turn."""
        if origin in self._busy:
            refused = self.lot.park(self.key(origin), request)
            if refused is not None:
                raise IgnoreRequest(f"too many requests wait for the Crawl-delay of {origin}")
            self._parked.add(origin)
            if self._kicker is None:
                self._kicker = create_looping_call(self._kick)
                self._kicker.start(self.KICK_INTERVAL, now=False)
            return request
        self._busy.add(origin)
        return self._wait_turn(origin, request, floor)

    async def _wait_turn(self, origin: str, request: Request, floor: float) -> None:
        try:
            turn = await self.fleet.wait_for_turn(origin, floor)
            if turn is not None:
                request.meta[TURN_META] = (origin, floor, turn)
        finally:
            self._busy.discard(origin)
            self.lot.release_one(self.key(origin))

    def _response_downloaded(
        self, response: Response, request: Request, spider: Any = None
    ) -> None:
        turn = request.meta.pop(TURN_META, None)
        if turn is not None:
            origin, floor, turn_id = turn
            deferred_from_coro(self.fleet.turn_done(origin, floor, turn_id))

    def _kick(self) -> None:
        """Release one parked request of each origin that has no request waiting for its turn
        here. A request released when a turn ends goes back through the scheduler, and in a
        fleet the shared queue may hand it to another worker: the requests still parked here
        would then wait for a turn that never comes."""
        for origin in list(self._parked):
            if not self.lot.count(self.key(origin)):
                self._parked.discard(origin)
            elif origin not in self._busy:
                self.lot.release_one(self.key(origin))

    def stop(self) -> None:
        if self._kicker is not None and self._kicker.running:
            self._kicker.stop()
        self._kicker = None
