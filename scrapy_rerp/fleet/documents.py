"""robots.txt shared by a fleet: one download per origin for all the workers.

Before a worker downloads robots.txt it asks :meth:`FleetStore.claim`: the entry another
worker stored (parsed again from its body), or the origin's download lock (this worker
downloads, then :meth:`FleetStore.publish` stores the result and releases the lock), or, while
another worker holds the lock, a wait for its result. An outage is shared too: a dead origin is
retried by one worker at the backoff rate, not by each.

An expired copy comes with its validators (a conditional refetch: :attr:`Claim.validators`), and
a 304 renews the fleet's copy; rules stay in Redis until ``RERP_STALE_MAX_AGE`` old, to stand in
through outages (:meth:`FleetStore._kept_for`).

Redis down or slow: each worker carries on alone (:mod:`scrapy_rerp.fleet.guard`). Stats:
``robotstxt/redis/shared`` (entries taken from another worker), ``robotstxt/redis/lock_waits``
(downloads waited for), ``robotstxt/redis/unreadable`` (hashes that could not be read),
``robotstxt/redis/round_trips`` (calls sent, set at close), ``robotstxt/redis/rejected``
(hashes beyond the bounds of this worker's settings: :mod:`~scrapy_rerp.fleet.bounds`) and
``robotstxt/redis/oversized`` (hashes with a field longer than a worker writes, not read), each
with a WARNING.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from scrapy_rerp.core import loggers
from scrapy_rerp.core.data import Fetched, RobotsEntry
from scrapy_rerp.core.documents import DocumentKind, robots_txt
from scrapy_rerp.core.origins import Claim
from scrapy_rerp.fleet.bounds import HashBounds
from scrapy_rerp.fleet.codec import Unreadable, decode, encode, keeps_earlier_rules, validators
from scrapy_rerp.fleet.store import OversizedHash

if TYPE_CHECKING:
    from scrapy_rerp.core.runtime import Stats
    from scrapy_rerp.core.settings import RerpSettings
    from scrapy_rerp.fleet.guard import RedisGuard
    from scrapy_rerp.fleet.store import DocumentStore

__all__ = ["FleetStore"]

logger = logging.getLogger(loggers.FLEET)

#: How long a worker waits between two looks at an origin another worker is downloading.
POLL_FIRST, POLL_MAX = 0.05, 0.5
#: A stale copy taken from the fleet while another worker refreshes it is used this long
#: before looking again.
STALE_RECHECK = 1.0


class FleetStore:
    """One worker's side of the fleet's robots.txt store: the origin service's
    :class:`~scrapy_rerp.core.origins.Store`."""

    fleet = True

    def __init__(
        self,
        store: DocumentStore,
        guard: RedisGuard,
        settings: RerpSettings,
        *,
        stats: Stats,
        sleep: Callable[[float], Awaitable[Any]],
        kind: DocumentKind | None = None,
    ) -> None:
        self.kind = kind if kind is not None else robots_txt(settings.syntax)
        self._key = self.kind.token
        self.store = store
        self.guard = guard
        self.settings = settings
        self.stats = stats
        self._sleep = sleep
        self._locked: set[str] = set()  # origins whose download lock this worker holds
        self.bounds = HashBounds.of(settings)
        self._rejections: dict[str, str] = {}  # origin: why its hash was not used, until published

    def for_kind(self, kind: DocumentKind) -> FleetStore:
        """The sharing of another per-origin document, on the same store and the same account
        of Redis's health."""
        return FleetStore(
            self.store, self.guard, self.settings, stats=self.stats, sleep=self._sleep, kind=kind
        )

    async def claim(self, origin: str, known: RobotsEntry | None = None) -> Claim:
        """Take the fleet's entry for ``origin``, or the right to download it."""
        poll = POLL_FIRST
        waited = False
        # Bounded by the lock's key, which expires within the lock timeout (a key found
        # without a TTL, or a longer one, is cut to it: fleet/store.py).
        while True:
            ok, found = await self.guard.call(lambda: self._look(origin))
            if not ok:
                return Claim(download=True)
            assert found is not None
            if found.entry is not None:
                self.stats.inc_value(self.kind.stats.redis_shared)
            if found.entry is not None or found.download:
                if found.locked:
                    self._locked.add(origin)
                return found
            if not waited:
                waited = True
                self.stats.inc_value(self.kind.stats.redis_lock_waits)
            await self._sleep(poll)
            poll = min(2 * poll, POLL_MAX)

    async def _look(self, origin: str) -> Claim:
        stored, _ = await self._load(origin)
        if stored is not None and not stored.expired():
            return Claim(entry=stored)
        if await self.store.lock(origin, self._key):
            # Another worker may have stored its result between the two calls.
            again, fields = await self._load(origin)
            if again is not None and not again.expired():
                await self.store.unlock(origin, self._key)
                return Claim(entry=again)
            revalidate = validators(fields) if again is not None and fields is not None else None
            return Claim(download=True, locked=True, previous=again, validators=revalidate)
        if (
            stored is not None
            and stored.robots is not None
            and time.time() < stored.expires_at + self.settings.max_lifetime
        ):
            # Expired lately, and another worker refreshes it: its rules serve meanwhile. An
            # older copy (kept for outages, up to RERP_STALE_MAX_AGE) waits for the refresh,
            # as a crawl alone waits for its stored copy's.
            return Claim(entry=stored.with_(expires_at=time.time() + STALE_RECHECK))
        return Claim()  # wait for the worker that holds the lock

    async def _load(self, origin: str) -> tuple[RobotsEntry | None, dict[bytes, bytes] | None]:
        """The fleet's entry for ``origin`` and the hash it was read from (both None when there
        is none, it cannot be read, or it is beyond the bounds of this worker's settings:
        :mod:`~scrapy_rerp.fleet.bounds`)."""
        fields = await self._fields(origin)
        if fields is None:
            return None, None
        s = self.settings
        try:
            entry = decode(fields, s.syntax, s.syntax_name, s.max_size, self.kind)
        except Unreadable:
            self.stats.inc_value(self.kind.stats.redis_unreadable)
            return None, None
        problem = self.bounds.problem(entry, time.time()) if entry is not None else None
        if problem is not None:
            self._rejected(origin, problem, self.kind.stats.redis_rejected)
            return None, None
        return entry, fields

    async def _fields(self, origin: str) -> dict[bytes, bytes] | None:
        """The fleet's hash for ``origin``, None when there is none or it is too large to read
        (counted, logged)."""
        try:
            return await self.store.load(origin, self._key)
        except OversizedHash as error:
            self._rejected(origin, str(error), self.kind.stats.redis_oversized)
            return None

    def _rejected(self, origin: str, problem: str, stat: str) -> None:
        """A hash not used: counted at each read, said once until this worker publishes the
        origin's result (the look after the lock reads it again, and a reason that names a time,
        "retried in N s", reads differently a second later)."""
        self.stats.inc_value(stat)
        if origin in self._rejections:
            return
        self._rejections[origin] = problem
        logger.warning(
            "The fleet's %(document)s for %(origin)s in Redis is not used: %(problem)s, which "
            "this worker's settings never write; it is fetched again",
            {"document": self.kind.name, "origin": origin, "problem": problem},
            extra={"spider": self.guard.spider()},
        )

    async def publish(
        self, origin: str, entry: RobotsEntry, fetched: Fetched | None, claim: Claim
    ) -> RobotsEntry:
        """Store this worker's result for the fleet, and release the download lock ``claim``
        took; ``entry``, to cache. Rules kept through a failed download keep the bytes of the
        fleet's copy (:func:`~scrapy_rerp.fleet.codec.encode`)."""

        async def store() -> None:
            kept = keeps_earlier_rules(entry, fetched)
            copy = await self._fields(origin) if kept else None
            fields = encode(entry, fetched, self.settings.syntax_name, copy)
            if fields:  # empty: a 304 for a copy the fleet no longer holds
                await self.store.store(origin, fields, self._kept_for(entry), self._key)
                if fetched is not None and fetched.not_modified:
                    self.stats.inc_value(self.kind.stats.redis_revalidated)
            if claim.locked:
                await self.store.unlock(origin, self._key)

        await self.guard.call(store)
        self._rejections.pop(origin, None)
        if claim.locked:
            self._locked.discard(origin)
        return entry

    def _kept_for(self, entry: RobotsEntry) -> float:
        """Seconds Redis keeps ``entry`` (the store adds its stale-serving window): its
        lifetime, and for rules, as long as they may stand in for an unreachable robots.txt
        (``RERP_STALE_MAX_AGE`` from their fetch), as a crawl alone keeps them in its store."""
        now = time.time()
        kept = entry.expires_at - now
        if entry.robots is not None and self.settings.stale_max_age > 0:
            kept = max(kept, entry.fetched_at + self.settings.stale_max_age - now)
        return kept

    async def release_locks(self) -> None:
        """A download that the closing crawl left unfinished (paused while robots.txt was on the
        wire) published nothing: its lock is released, or every other worker would wait for
        RERP_REDIS_LOCK_TIMEOUT before downloading it."""
        for origin in sorted(self._locked):
            await self.guard.call(lambda origin=origin: self.store.unlock(origin, self._key))
        self._locked.clear()

    async def close(self) -> None:
        """The crawl is over: the locks released, the store's counts said, the store closed
        (by robots.txt's sharing: another kind's releases its locks only)."""
        await self.release_locks()
        self.stats.set_value(self.kind.stats.redis_round_trips, self.store.round_trips)
        if repaired := getattr(self.store, "repaired", 0):
            self.stats.set_value(self.kind.stats.redis_repaired, repaired)
        await self.store.close()
