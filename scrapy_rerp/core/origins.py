"""The origin service: what is known of each origin's robots.txt, and how it is got.

One service serves one :class:`~scrapy_rerp.core.documents.DocumentKind` (robots.txt unless
told otherwise; ``tdmrep.json`` is the other): what follows says robots.txt, and holds for each.

Standard library only: downloads go through a :class:`Transport`, waiting requests are counted,
released and dropped through :class:`Waiters`, what follows new rules is the business of a
:class:`RulesListener`, and tasks run on a :class:`~scrapy_rerp.core.runtime.Runtime`. The Scrapy
middleware provides all four; ``tests/core/test_origins.py`` provides fakes, so every path here is
tested without a crawl. Each origin's document is known from two tiers: the *cache*, in memory,
read by every request (a :class:`Cache`: the middleware's ``FailoverCache``,
:mod:`scrapy_rerp.core.cache`), and behind it, asked by the flights only, a *store* that
persists (a :class:`Store`, which answers a :class:`Claim`: a crawl's SQLite file,
``RERP_STORE``, :class:`~scrapy_rerp.core.crawl_store.CrawlStore`; or a fleet's Redis,
``FleetStore``, :mod:`scrapy_rerp.fleet.documents`). The core names the fleet by this protocol
only, so that its imports never reach the modules built on it.

For each request, :meth:`OriginService.rules` answers with

* the rules (a ``RobotsTxt``): fresh ones, or expired ones while one refetch runs in the
  background (nothing waits for it);
* :data:`WAIT`: nothing usable is known yet (robots.txt downloading, or the origin
  unreachable): the request waits, and :meth:`OriginService.wanted` makes sure the origin's
  one *flight* runs;
* a :class:`Refused`: the origin has been unreachable for longer than
  ``RERP_UNREACHABLE_MAX_WAIT`` and no retry is due yet: the request is dropped at once.

A flight first claims the origin from the store (its copy, or the right to download it:
in a fleet, for all the workers), downloads robots.txt, publishes what it learnt to the store,
and then either caches new rules, after the listener has applied them and before the waiting
requests are released; or keeps an earlier copy if a refetch failed; or caches the outage and,
while requests wait, retries when the politeness controller says (backoff, ``Retry-After``),
until the outage is older than the maximum wait and its requests are dropped. A dead origin with
nothing waiting for it is not retried.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from scrapy_rerp.core import loggers
from scrapy_rerp.core import status as ladder
from scrapy_rerp.core.admission import DropReason, ParkingKey
from scrapy_rerp.core.data import Fetched, Outcome, RobotsEntry, Validators, body_sha256
from scrapy_rerp.core.documents import DocumentKind, robots_txt
from scrapy_rerp.core.wording import counted, duration

if TYPE_CHECKING:
    from scrapy_rerp.core.runtime import Runtime, Stats, Task
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.engine import RobotsTxt, TdmRepFile

__all__ = [
    "WAIT",
    "Cache",
    "Claim",
    "OriginService",
    "Refused",
    "RulesListener",
    "Store",
    "Transport",
    "Waiters",
]

logger = logging.getLogger(loggers.ROBOTSTXT)


class _Wait:
    def __repr__(self) -> str:
        return "WAIT"


#: :meth:`OriginService.rules`: no rules yet; the request waits for the origin's flight.
WAIT = _Wait()


@dataclass(frozen=True)
class Refused:
    """:meth:`OriginService.rules`: the request is dropped at once."""

    reason: DropReason  # UNREACHABLE
    message: str  # for IgnoreRequest


class Cache(Protocol):
    """The cache, as the service uses it (the middleware's ``FailoverCache``: whichever
    backend ``RERP_CACHE`` names, an in-memory one once that fails)."""

    def get(self, origin: str) -> RobotsEntry | None: ...

    def set(self, origin: str, entry: RobotsEntry) -> None: ...


@dataclass(kw_only=True)
class Claim:
    """What :meth:`Store.claim` decided for one download."""

    entry: RobotsEntry | None = None  # the store's copy, used as it is: no download here
    download: bool = False  # this process downloads (in a fleet: holding the lock unless
    locked: bool = False  # Redis is down)
    previous: RobotsEntry | None = None  # the store's expired copy, if any
    validators: Validators | None = None  # what revalidates ``previous``, if anything
    reused: bool = False  # ``entry`` is a copy kept from an earlier run (RERP_STORE)


class Store(Protocol):
    """What persists each origin's document behind the cache, asked by the flights only: a
    crawl's SQLite file (``RERP_STORE``: :class:`~scrapy_rerp.core.crawl_store.CrawlStore`) or a
    fleet's Redis (``FleetStore``: one download per origin for all the workers)."""

    #: A fleet's: the other workers read what is published (the listener hears of it first).
    fleet: bool

    async def claim(self, origin: str, known: RobotsEntry | None) -> Claim:
        """Before a download for ``origin`` (``known``: what the cache had of it, if anything):
        the store's copy, or the right to download it."""

    async def publish(
        self, origin: str, entry: RobotsEntry, fetched: Fetched, claim: Claim
    ) -> RobotsEntry:
        """Keep ``entry``, what the download ``claim`` allowed brought (in a fleet, releasing
        the lock): the entry to cache (a 304's renewal: the copy as the store renewed it)."""


class _NoStore:
    """The cache alone: each flight downloads."""

    fleet = False

    async def claim(self, origin: str, known: RobotsEntry | None) -> Claim:
        return Claim(download=True)

    async def publish(
        self, origin: str, entry: RobotsEntry, fetched: Fetched, claim: Claim
    ) -> RobotsEntry:
        return entry


class Transport(Protocol):
    async def fetch(
        self, robots_url: str, origin: str, validators: Validators | None = None
    ) -> Fetched:
        """Download robots.txt once, redirects followed, and say what it means; conditional
        for ``validators.url`` when given (a 304 is ``Fetched.not_modified``)."""


class Waiters(Protocol):
    """The requests that wait for an origin's robots.txt (the middleware's parking lot), under
    the origin's key for it: a ``ParkingKey`` of the kind's purpose, ``Purpose.ROBOTS_TXT``
    for robots.txt)."""

    def count(self, key: ParkingKey) -> int: ...

    def release(self, key: ParkingKey) -> int: ...

    def drop(self, key: ParkingKey, reason: DropReason, message: str) -> int: ...


class RulesListener(Protocol):
    """What a crawl does with an origin's new rules (the middleware)."""

    async def before_sharing(
        self, origin: str, robots: RobotsTxt | TdmRepFile | None, trigger: Any
    ) -> None:
        """A fleet worker downloaded new rules, about to store them for the others."""

    async def rules_known(
        self, origin: str, entry: RobotsEntry, fetched: Fetched | None, trigger: Any
    ) -> None:
        """New rules for ``origin`` (``fetched`` is None when they come from another worker),
        before they are stored and the waiting requests released."""

    def robots_retry_in(self, failures: int, retry_after: float | None) -> float:
        """Seconds before an unreachable robots.txt is tried again."""


@dataclass(eq=False, kw_only=True)
class _Flight:
    """The robots.txt download of one origin, and its retries while it is unreachable."""

    origin: str
    robots_url: str
    trigger: Any  # what caused the download (the listener gets it back)
    previous: RobotsEntry | None  # what was known before: expired rules, or an outage
    key: ParkingKey  # the parking key of the requests that wait for it
    task: Task | None = None
    sleeping: bool = False


class OriginService:
    """The cache in front of the store, one flight per origin, and outage deadlines, for one
    ``kind`` of document (robots.txt when None)."""

    def __init__(
        self,
        settings: RerpSettings,
        cache: Cache,
        transport: Transport,
        *,
        waiters: Waiters,
        listener: RulesListener,
        runtime: Runtime,
        stats: Stats,
        store: Store | None = None,
        spider: Callable[[], Any] = lambda: None,
        kind: DocumentKind | None = None,
    ) -> None:
        self.kind = kind if kind is not None else robots_txt(settings.syntax)
        self.settings = settings
        self.cache = cache
        self.transport = transport
        self.waiters = waiters
        self.listener = listener
        self.runtime = runtime
        self.stats = stats
        # RERP_STORE keeps the kinds it stores only; a fleet's Redis, every kind.
        keeps = store is not None and (store.fleet or self.kind.stored)
        self.store: Store = store if store is not None and keeps else _NoStore()
        self._spider = spider
        self._stored: set[str] = set()  # origins served by a stored copy not refetched since
        self._stale_said: set[str] = set()  # origins whose stale stored copy was logged
        self._flights: dict[str, _Flight] = {}
        self._stopped = False

    # -- per request ---------------------------------------------------------------------------
    def rules(self, origin: str, url: str, trigger: Any) -> RobotsTxt | _Wait | Refused:
        """The rules for a request to ``url`` (of ``origin``), :data:`WAIT`, or a refusal.

        After :data:`WAIT` the caller makes the request wait, then calls :meth:`wanted`.
        """
        entry = self.cache.get(origin)
        if entry is not None:
            robots = entry.robots
            if robots is not None:
                if entry.expires_at <= time.time() and origin not in self._flights:
                    self.stats.inc_value(self.kind.stats.refresh_count)
                    self._start(origin, self.kind.url_of(url), trigger, entry)
                return robots
            if not entry.expired() and self._outage_over(entry):
                # Known dead for longer than the limit, and no retry due yet.
                return Refused(
                    DropReason.UNREACHABLE, self._unreachable_message(origin, entry.failure)
                )
        return WAIT

    def wanted(self, origin: str, url: str, trigger: Any) -> None:
        """A request waits for the rules of ``origin``: its flight runs (started now unless it
        runs already; during an outage the next attempt waits for its backoff time). Called
        once the request waits, so that a flight that ends at once still releases it."""
        if origin in self._flights:
            return
        entry = self.cache.get(origin)
        if entry is None:  # an origin not known (again, once its entry left the cache)
            self.stats.inc_value(self.kind.stats.origin_count)
        delay = max(0.0, entry.expires_at - time.time()) if entry is not None else 0.0
        self._start(origin, self.kind.url_of(url), trigger, entry, delay)

    def entry(self, origin: str) -> RobotsEntry | None:
        return self.cache.get(origin)

    def forget(self, origin: str) -> None:
        """``origin`` left the cache: what was kept of it beside its entry goes too."""
        self._stored.discard(origin)
        self._stale_said.discard(origin)

    def forget_all(self) -> None:
        """The cache was emptied (a backend that failed): every origin starts again."""
        self._stored.clear()
        self._stale_said.clear()

    def busy(self, origin: str) -> bool:
        return origin in self._flights

    def __len__(self) -> int:
        """Flights running."""
        return len(self._flights)

    # -- closing -------------------------------------------------------------------------------
    def stop(self) -> None:
        """The crawl is closing: start nothing more, and end the flights that wait to retry.

        Flights downloading right now finish that download (the engine waits for it anyway)
        and then end without reporting."""
        self._stopped = True
        for flight in list(self._flights.values()):
            if flight.sleeping and flight.task is not None:
                flight.task.cancel()

    def cancel_all(self) -> None:
        self._stopped = True
        for flight in list(self._flights.values()):
            if flight.task is not None:
                flight.task.cancel()

    # -- flights -------------------------------------------------------------------------------
    def _start(
        self,
        origin: str,
        robots_url: str,
        trigger: Any,
        previous: RobotsEntry | None,
        delay: float = 0.0,
    ) -> None:
        if self._stopped:
            return
        flight = _Flight(
            origin=origin,
            robots_url=robots_url,
            trigger=trigger,
            previous=previous,
            key=ParkingKey(origin, self.kind.purpose),
        )
        self._flights[origin] = flight
        task = self.runtime.spawn(self._fly(flight, delay), lambda error: self._done(flight, error))
        if self._flights.get(origin) is flight:  # not over already
            flight.task = task

    def _done(self, flight: _Flight, error: BaseException | None) -> None:
        if self._flights.get(flight.origin) is flight:
            del self._flights[flight.origin]
        if error is not None:  # a bug here, never a site's fault
            logger.error(
                "%s handling of %s failed",
                self.kind.name,
                flight.origin,
                exc_info=(type(error), error, error.__traceback__),
                extra={"spider": self._spider()},
            )
            self.waiters.drop(
                flight.key,
                DropReason.ERROR,
                f"{self.kind.name} handling of {flight.origin} failed",
            )

    async def _fly(self, flight: _Flight, delay: float) -> None:
        if delay > 0:
            await self._sleep(flight, delay)
        previous = flight.previous
        origin = flight.origin
        validators: Validators | None = None
        while True:
            claim = await self.store.claim(origin, previous)
            if self._stopped:
                return
            if claim.entry is not None:
                if claim.entry.robots is not None:
                    # The store's copy: one of an earlier run (a restarted crawl uses it with
                    # no download), or another worker's of the fleet.
                    if claim.reused:
                        self._stored.add(origin)
                        self.stats.inc_value(self.kind.stats.store_reused)
                    await self._rules_fetched(flight, claim.entry, None)
                    return
                # Another worker of the fleet is retrying it: no download here.
                previous = claim.entry
                shared = Fetched(
                    outcome=Outcome.UNREACHABLE, reason="unreachable, as the fleet found it"
                )
                if not await self._unreachable(flight, previous, shared):
                    return
                continue
            if previous is None and claim.previous is not None:
                # The store's expired copy: revalidated when it can be, kept through an
                # outage when young.
                previous = claim.previous
                validators = claim.validators
                if previous.robots is not None:
                    self._stored.add(origin)
            fetched = await self.transport.fetch(flight.robots_url, origin, validators)
            entry = self._entry(fetched, previous)
            renewed = fetched.not_modified and entry.robots is not None
            if self.store.fleet:
                await self.listener.before_sharing(origin, entry.robots, flight.trigger)
            entry = await self.store.publish(origin, entry, fetched, claim)
            if self._stopped:
                return
            if fetched.robots is not None:
                self._stored.discard(origin)  # served by this download now
            if renewed or fetched.robots is not None:
                await self._rules_fetched(flight, entry, None if renewed else fetched)
                return
            self.stats.inc_value(self.kind.stats.unreachable_count)
            if entry.robots is not None:
                # An earlier good copy keeps serving; retried once it "expires" again.
                self._stale_copy_kept(flight, entry, fetched)
                return
            if not await self._unreachable(flight, entry, fetched):
                return
            self.stats.inc_value(self.kind.stats.retry_count)
            previous = entry

    def _entry(self, fetched: Fetched, previous: RobotsEntry | None) -> RobotsEntry:
        """What is known after ``fetched``: new rules, the copy a 304 confirmed, fresh again
        (its lifetime from the 304's headers, RFC 9111 4.3.4; the store renews its own as it
        is published), or one more failure of an outage (which keeps an earlier good copy)."""
        now = time.time()
        if fetched.not_modified and previous is not None and previous.robots is not None:
            lifetime = ladder.entry_lifetime(previous.outcome, fetched.lifetime, self.settings)
            return previous.with_(
                fetched_at=now, expires_at=now + lifetime, failures=0, outage_since=None
            )
        if fetched.robots is not None:
            return RobotsEntry(
                robots=fetched.robots,
                fetched_at=now,
                expires_at=now
                + ladder.entry_lifetime(fetched.outcome, fetched.lifetime, self.settings),
                status=fetched.status,
                url=fetched.url,
                outcome=fetched.outcome,
                # the rules' bytes: none for a file read as allow-all or disallow-all
                sha256=body_sha256(fetched.body if fetched.outcome == Outcome.PARSED else None),
            )
        failures = (previous.failures if previous is not None else 0) + 1
        backoff = self.listener.robots_retry_in(failures, fetched.retry_after)
        outage_since = (previous.outage_since if previous is not None else None) or now
        if previous is not None and previous.robots is not None and self._young(previous, now):
            return previous.with_(
                expires_at=now + backoff,
                failures=failures,
                outage_since=outage_since,
                failure=fetched.reason,
            )
        return RobotsEntry(
            robots=None,
            fetched_at=now,
            expires_at=now + backoff,
            status=fetched.status,
            url=fetched.url,
            outcome=Outcome.UNREACHABLE,
            failures=failures,
            outage_since=outage_since,
            failure=fetched.reason,
        )

    async def _rules_fetched(
        self, flight: _Flight, entry: RobotsEntry, fetched: Fetched | None
    ) -> None:
        await self.listener.rules_known(flight.origin, entry, fetched, flight.trigger)
        # Stored only now: requests arriving meanwhile wait like the others, so none is
        # downloaded before the listener has applied the rules (Crawl-delay, the signal).
        self.cache.set(flight.origin, entry)
        self.waiters.release(flight.key)

    def _young(self, entry: RobotsEntry, now: float) -> bool:
        """Whether a good copy may stand in while robots.txt is unreachable: fetched less than
        ``RERP_STALE_MAX_AGE`` ago (0: never)."""
        max_age = self.settings.stale_max_age
        return max_age > 0 and now - entry.fetched_at < max_age

    def _stale_copy_kept(self, flight: _Flight, entry: RobotsEntry, fetched: Fetched) -> None:
        said = {
            "kind": self.kind.name,
            "origin": flight.origin,
            "reason": fetched.reason,
            "age": duration(max(0.0, time.time() - entry.fetched_at)),
        }
        if flight.origin in self._stored:
            self.stats.inc_value(self.kind.stats.store_stale_used)
            if flight.origin not in self._stale_said:
                # WARNING, not INFO: the crawl obeys rules from an earlier run, which the site
                # may have changed since; the user should see it. (A copy fetched within the
                # clock skew ahead of this clock was fetched "0 s ago", not a negative age.)
                self._stale_said.add(flight.origin)
                logger.warning(
                    "%(kind)s of %(origin)s unreachable (%(reason)s); crawling under the "
                    "copy stored %(age)s ago (RERP_STALE_MAX_AGE %(max)s)",
                    {**said, "max": duration(self.settings.stale_max_age)},
                    extra={"spider": self._spider()},
                )
        logger.info(
            "%(kind)s of %(origin)s unreachable (%(reason)s); keeping the copy "
            "fetched %(age)s ago, retrying in %(backoff)s",
            {**said, "backoff": duration(entry.expires_at - time.time())},
            extra={"spider": self._spider()},
        )
        self.stats.inc_value(self.kind.stats.unreachable_stale_copy_kept)
        self.cache.set(flight.origin, entry)
        self.waiters.release(flight.key)

    async def _unreachable(self, flight: _Flight, entry: RobotsEntry, fetched: Fetched) -> bool:
        """Cache the outage ``entry`` and say so, then wait until the next attempt is due; False
        when nothing waits any more (a dead site is not hammered) or the crawl is closing."""
        self.cache.set(flight.origin, entry)
        logger.info(
            "%(kind)s of %(origin)s unreachable (%(reason)s); %(n)s waiting, "
            "retry %(failures)d in %(backoff)s",
            {
                "kind": self.kind.name,
                "origin": flight.origin,
                "reason": fetched.reason,
                "n": counted(self.waiters.count(flight.key), "request"),
                "failures": entry.failures,
                "backoff": duration(entry.expires_at - time.time()),
            },
            extra={"spider": self._spider()},
        )
        while True:
            wait = self._retry_wait(flight, entry)
            if wait is None or self._stopped:
                return False
            if wait <= 0:
                return True
            await self._sleep(flight, wait)

    def _retry_wait(self, flight: _Flight, entry: RobotsEntry) -> float | None:
        """Seconds to wait before the next check of an outage, or None to stop retrying:
        nothing waits for the origin any more, or the outage is past the limit (its waiting
        requests are then dropped)."""
        waiting = self.waiters.count(flight.key)
        if waiting == 0:
            return None
        now = time.time()
        deadline = (entry.outage_since or now) + self.settings.unreachable_max_wait
        if now >= deadline:
            message = self._unreachable_message(flight.origin, entry.failure)
            logger.warning(
                "Dropping %(n)s: %(message)s",
                {"n": counted(waiting, "request"), "message": message},
                extra={"spider": self._spider()},
            )
            self.waiters.drop(flight.key, DropReason.UNREACHABLE, message)
            return None
        return max(0.0, min(entry.expires_at, deadline) - now)

    async def _sleep(self, flight: _Flight, seconds: float) -> None:
        flight.sleeping = True
        try:
            await self.runtime.sleep(seconds)
        finally:
            flight.sleeping = False

    # -- outages -------------------------------------------------------------------------------
    def _outage_over(self, entry: RobotsEntry) -> bool:
        since = entry.outage_since
        return since is not None and time.time() - since >= self.settings.unreachable_max_wait

    def _unreachable_message(self, origin: str, last_failure: str = "") -> str:
        message = (
            f"{self.kind.name} of {origin} unreachable for more than "
            f"{duration(self.settings.unreachable_max_wait)}"
        )
        return f"{message} (last: {last_failure})" if last_failure else message
